import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { Browser, BrowserContext, BrowserContextOptions, chromium, Page } from 'playwright-core';
import { repoRoot } from '../../scripts/lib/processes';
import { LOCAL_LISTENER_ENV } from './deliveries';
import { Listener } from './listener';
import { createMerchant, MerchantCredentials, runCli, Stack, startStack } from './stack';

/** Debian's Chromium (.ci/run installs it when missing); CHROMIUM_PATH for another one. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** CONSOLE_SCREENSHOTS=1 refreshes the pictures in docs/console; otherwise they go to this run's log folder. */
export const SHOTS =
  process.env.CONSOLE_SCREENSHOTS === '1'
    ? join(repoRoot(), 'docs', 'console')
    : join(process.env.TEST_LOG_DIR ?? join(repoRoot(), 'test', '.logs', 'adhoc'), 'console');

/**
 * Chromium for the page suites (with the screenshot folder made). Running as root (CI) needs
 * --no-sandbox; only the gateway's own pages are loaded.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/** Chromium (driven by playwright-core) for the console's suites: a context per signed-in operator, closed together. */
export class ConsoleBrowser {
  private readonly contexts: BrowserContext[] = [];

  private constructor(private readonly browser: Browser) {}

  static async launch(): Promise<ConsoleBrowser> {
    return new ConsoleBrowser(await launchChromium());
  }

  /** A fresh context (its own cookies), closed with the browser. */
  async context(opts: BrowserContextOptions = {}): Promise<BrowserContext> {
    const context = await this.browser.newContext(opts);
    this.contexts.push(context);
    return context;
  }

  /** A page signed in to the console with an operator token (on the overview). */
  async signedIn(baseUrl: string, token: string, viewport = { width: 1280, height: 900 }): Promise<Page> {
    const page = await (await this.context({ viewport })).newPage();
    await page.goto(`${baseUrl}/console/sign-in`);
    await page.fill('#token', token);
    await Promise.all([page.waitForURL(/\/console\/overview$/), page.click('button[type=submit]')]);
    return page;
  }

  shot(page: Page, name: string): Promise<Buffer> {
    return shot(page, name);
  }

  async close(): Promise<void> {
    for (const c of this.contexts) await c.close().catch(() => undefined);
    await this.browser.close();
  }
}

/** A picture of the whole page, in docs/console or the run's log folder (see SHOTS). */
export const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
/**
 * The page a form's POST redirected back to (at `path`), loaded: to wait for with the click, since
 * the address may not change (a notice comes from the POST's flash, not from the address).
 */
export const redirectedBack = (page: Page, path: string) =>
  page.waitForResponse((r) => r.request().redirectedFrom()?.method() === 'POST' && new URL(r.url()).pathname === path);
/** The CSRF token of the page's first form. */
export const csrfOf = (page: Page) => page.getAttribute('input[name=_csrf]', 'value');

export interface AuditRow {
  operator_name: string | null;
  action: string;
  target: string | null;
  origin: string;
  outcome: string;
  detail: Record<string, unknown>;
}

/** Reads the audit trail: the last event's id now, and the events of one action recorded after an id. */
export function auditReader(db: Client) {
  return {
    lastEventId: async (): Promise<string> => (await db.query(`SELECT coalesce(max(id), 0)::text AS id FROM audit_events`)).rows[0].id,
    eventsAfter: async (id: string, action: string): Promise<AuditRow[]> =>
      (
        await db.query(
          `SELECT operator_name, action, target, origin, outcome, detail FROM audit_events WHERE id > $1 AND action = $2 ORDER BY id`,
          [id, action],
        )
      ).rows,
  };
}

/** What a console suite runs against: a stack, its database, a listener, a merchant, a viewer and an operator, and Chromium. */
export interface ConsoleSuite {
  stack: Stack;
  db: Client;
  listener: Listener;
  browser: ConsoleBrowser;
  shop: MerchantCredentials;
  tokens: { viewer: string; operator: string };
}

/**
 * Starts a console suite: the stack (its notifier delivering to this machine quickly, plus
 * `notifierEnv`), a listener, a merchant, operators `<prefix>-viewer-<suffix>` and
 * `<prefix>-operator-<suffix>`, and Chromium.
 */
export async function startConsoleSuite(prefix: string, suffix: string, notifierEnv: Record<string, string> = {}): Promise<ConsoleSuite> {
  const db = new Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  const listener = await new Listener().start();
  const stack = await startStack({}, { withConsole: true, envFor: { notifier: { ...LOCAL_LISTENER_ENV, ...notifierEnv } } });
  const shop = await createMerchant(`${prefix} shop`);
  const tokens = { viewer: '', operator: '' };
  for (const role of ['viewer', 'operator'] as const)
    tokens[role] = (await runCli<{ token: string }>(['operator:create', '--name', `${prefix}-${role}-${suffix}`, '--role', role])).token;
  return { stack, db, listener, shop, tokens, browser: await ConsoleBrowser.launch() };
}

/** Stops what startConsoleSuite started (what of it did start). */
export async function stopConsoleSuite(s: Partial<ConsoleSuite>): Promise<void> {
  await s.browser?.close();
  await s.stack?.stop();
  await s.listener?.stop();
  await s.db?.end();
}
