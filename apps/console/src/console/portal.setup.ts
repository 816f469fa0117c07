import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MerchantsRepository, PortalLinkState, PortalLinksRepository } from '@app/persistence';
import { AuditSubject, AuditTrail } from '@app/operators';
import { openPortal, PortalClaims, portalKeys, sealPortal } from '@app/webhooks';
import { ConsoleConfig } from '../config/console.config';
import { AuthLimits } from '@app/http';
import { loadConsoleAssets } from './assets';
import { registerDeliveryPages } from './deliveries.routes';
import { html } from './html';
import { Frame, page, problemPage } from './layout';
import { sendPage, setUpPageScope } from './page-scope';
import { pageCookie, pageTokenKey, pageTokens } from './page-tokens';

/**
 * The portal's session cookie: the link's claims, sealed with the portal's session key. Named
 * `__Host-gw_portal` (Path=/) when Secure (production, or https), `gw_portal` (Path=/portal) over
 * plain http; only the name of the request's mode is read.
 */
export const PORTAL_COOKIE = 'gw_portal';
/** The one answer to a link or session that does not (or no longer) work, whatever the reason: no oracle. */
const ENDED = 'This link has expired; ask for a new one.';

interface PortalSession {
  link: PortalLinkState;
  /** The merchant's public id (what the merchant knows itself as). */
  merchant: string;
}

const sessions = new WeakMap<FastifyRequest, PortalSession>();

/**
 * The merchant portal under /portal (merchant:portal-link prints its links): one merchant's own
 * webhook deliveries, read and replay, for as long as its link works.
 *
 * /portal/enter?t=<token> checks the token (HMAC, expiry) and the link's row (issued, not revoked,
 * same merchant and expiry), then sets the session cookie (HttpOnly, SameSite=Strict, see
 * PORTAL_COOKIE for its name and path, as long as the link has left) and answers a small page that moves on to
 * /portal/deliveries by a meta refresh: a 303 would not do, since the browser does not send a
 * SameSite=Strict cookie on a redirect that follows a click from another site (a mail), while the
 * refresh is this site's own navigation. The token then leaves the address bar, and no page here
 * sends a Referer. Every other request checks the cookie and the row again, so an expired or
 * revoked link ends its sessions at their next request (401, the same page for every reason).
 *
 * The pages are the console's delivery pages (deliveries.routes.ts) limited in SQL to the link's
 * merchant: no merchant filter, another merchant's delivery answers 404 as a missing one, no
 * console header. A replay is audited as the console's, with `portal:<link id>` as its actor.
 * CSRF tokens and flash notices are bound to the link (page-tokens.ts: an HMAC of its id under a key
 * derived from PORTAL_LINK_KEY), so another link's token is refused; @fastify/cookie is registered
 * by setUpConsole.
 *
 * Limits (issue 32, AuthLimits): a link or session refused (401) counts as a failed authentication
 * of the client's address, and past AUTH_FAILURE_LIMIT in a window the address gets 429 until it
 * ends; each link may be opened PORTAL_OPEN_LIMIT times and ask for PORTAL_REPLAY_LIMIT replays
 * per PORTAL_LINK_WINDOW_S (429 past them: one CSRF token cannot replay without end), and only
 * the first open of a link in each window is audited (portal:enter), not every open.
 */
export async function setUpPortal(app: NestFastifyApplication): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  const config = app.get(ConsoleConfig);
  await fastify.register(
    (scope, _opts, done) => {
      registerPortal(scope, app, config);
      done();
    },
    { prefix: '/portal' },
  );
}

function registerPortal(scope: FastifyInstance, app: NestFastifyApplication, config: ConsoleConfig): void {
  const audit = app.get(AuditTrail);
  const keys = portalKeys(config.portalLinkKey);
  const production = config.base.nodeEnv === 'production';
  const secure = (req: FastifyRequest) => production || req.protocol === 'https';
  const tokens = pageTokens({
    key: pageTokenKey(config.portalLinkKey, 'gateway portal page tokens v1'),
    scopePath: '/portal',
    flashCookie: 'gw_portal_flash',
    secure,
    bindingOf: (req) => sessions.get(req)?.link.id,
  });
  const frame = (req: FastifyRequest, _reply: FastifyReply, title: string): Frame => {
    const s = sessions.get(req);
    return { title, base: '/portal', csrf: tokens.csrfToken(req), portal: s && { merchant: s.merchant, expiresAt: s.link.expires_at } };
  };
  setUpPageScope(scope, loadConsoleAssets(), frame);
  const gate = new PortalGate(app.get(PortalLinksRepository), app.get(MerchantsRepository), app.get(AuthLimits), keys, secure);

  // Every page but the entry and the assets needs a session of a link that still works.
  scope.addHook('preHandler', async (req, reply) => gate.requireSession(req, reply));

  scope.get('/enter', async (req, reply) => {
    if (gate.refused(req, reply)) return reply;
    const t = (req.query as Record<string, unknown>).t;
    const claims = typeof t === 'string' ? openPortal(keys, 'link', t) : 'invalid';
    const active = await gate.activeLink(claims);
    if (!active || typeof claims !== 'object') return gate.ended(req, reply);
    const open = await gate.limits.spendLink('opens', active.link.id);
    if (open.retryAfterS !== undefined) return tooMany(reply, open.retryAfterS, 'This link was opened too many times in a short while.');
    sessions.set(req, active);
    // The window's first open is recorded; the others in it are only counted (a link opened in a loop writes no rows).
    if (open.first) await audit.run(subjectOf(req, 'portal:enter', active.merchant), () => Promise.resolve());
    const c = gate.sessionCookie(req);
    void reply.setCookie(c.name, sealPortal(keys, 'session', claims), {
      ...c.options,
      maxAge: Math.ceil((active.link.expires_at.getTime() - Date.now()) / 1000),
    });
    return sendPage(
      reply,
      200,
      page(
        { ...frame(req, reply, 'Opening'), refresh: '/portal/deliveries' },
        html`<h1>Opening your deliveries…</h1>
          <p><a id="continue" href="/portal/deliveries">Continue</a></p>`,
      ),
    );
  });

  scope.get('/', (_req, reply) => reply.redirect('/portal/deliveries', 303));

  registerDeliveryPages({
    scope,
    app,
    audit,
    csrf: tokens.csrf,
    setFlash: tokens.setFlash,
    takeFlash: tokens.takeFlash,
    frame,
    send: sendPage,
    base: '/portal',
    merchantScope: (req) => sessionOf(req).link.merchant_id,
    canReplay: () => true,
    replayer: (req, reply, id) => replayer(gate.limits, req, reply, id),
  });
}

/** The portal's check of a link and of the session it opened, and its answers when either does not work. */
class PortalGate {
  constructor(
    private readonly links: PortalLinksRepository,
    private readonly merchants: MerchantsRepository,
    readonly limits: AuthLimits,
    private readonly keys: ReturnType<typeof portalKeys>,
    private readonly secure: (req: FastifyRequest) => boolean,
  ) {}

  sessionCookie(req: FastifyRequest) {
    return pageCookie(PORTAL_COOKIE, '/portal', this.secure(req));
  }

  /** The session check of every page but the entry and the assets: the link's session remembered for the request. */
  async requireSession(req: FastifyRequest, reply: FastifyReply) {
    const route = req.routeOptions?.url ?? '';
    if (route.startsWith('/portal/assets/') || route === '/portal/enter') return;
    if (this.refused(req, reply)) return reply;
    const raw = req.cookies[this.sessionCookie(req).name];
    const active = raw ? await this.activeLink(openPortal(this.keys, 'session', raw)) : undefined;
    if (!active) return this.ended(req, reply);
    sessions.set(req, active);
  }

  /** A link or session that does not work: a failed authentication of the address (429 past the limit). */
  async ended(req: FastifyRequest, reply: FastifyReply) {
    const c = this.sessionCookie(req);
    if (req.cookies[c.name] !== undefined) void reply.clearCookie(c.name, c.options);
    const retryAfterS = await this.limits.failed('portal', req.ip);
    if (retryAfterS !== undefined) return tooMany(reply, retryAfterS, 'Too many expired or unknown links from this address.');
    return sendPage(reply, 401, problemPage({ title: 'Link expired', base: '/portal', csrf: '' }, 401, ENDED));
  }

  /** While the address is refused for too many failures: the 429 page (sent), else undefined. */
  refused(req: FastifyRequest, reply: FastifyReply) {
    const blocked = this.limits.blocked('portal', req.ip);
    return blocked === undefined ? undefined : tooMany(reply, blocked, 'Too many expired or unknown links from this address.');
  }

  /** The link sealed claims name, when it was issued with those claims, is not revoked and has not expired. */
  async activeLink(claims: PortalClaims | 'invalid' | 'expired'): Promise<PortalSession | undefined> {
    if (typeof claims !== 'object') return undefined;
    const link = await this.links.find(claims.linkId);
    if (!link || link.revoked_at || link.expires_at.getTime() !== claims.expiresAt.getTime() || link.expires_at.getTime() <= Date.now())
      return undefined;
    const merchant = (await this.merchants.publicIdOf(link.merchant_id)) ?? link.merchant_id;
    return merchant === claims.merchantId ? { link, merchant } : undefined;
  }
}

/** Each replay spends one of the link's budget, before anything is audited or done. */
async function replayer(limits: AuthLimits, req: FastifyRequest, reply: FastifyReply, id: string): Promise<AuditSubject | undefined> {
  const spent = await limits.spendLink('replays', sessionOf(req).link.id);
  if (spent.retryAfterS === undefined) return subjectOf(req, 'webhooks:replay', id);
  await tooMany(reply, spent.retryAfterS, 'This link asked for too many replays in a short while.');
  return undefined;
}

function sessionOf(req: FastifyRequest): PortalSession {
  const s = sessions.get(req);
  if (!s) throw new Error('portal route reached without a session');
  return s;
}

function tooMany(reply: FastifyReply, retryAfterS: number, text: string) {
  return sendPage(
    reply.header('retry-after', String(retryAfterS)),
    429,
    problemPage({ title: 'Too many requests', base: '/portal', csrf: '' }, 429, `${text} Try again in ${retryAfterS} s.`),
  );
}

function subjectOf(req: FastifyRequest, action: string, target?: string): AuditSubject {
  const s = sessionOf(req);
  return {
    portalLink: s.link.id,
    action,
    target,
    origin: `http ${req.ip}`,
    detail: { method: req.method, route: req.routeOptions?.url ?? null, via: 'portal', merchant: s.merchant },
  };
}
