import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import { OperatorRow } from '@app/persistence';
import { AuditSubject, AuditTrail, OperatorRole } from '@app/operators';
import { ConsoleConfig } from '../config/console.config';
import { Frame, problemPage } from './layout';
import type { PageTokens } from './page-tokens';

/**
 * What the pages of a scope are given: the Fastify scope (its session check and security headers
 * already on it), the Nest app to get repositories from, and the helpers every page and action uses.
 * The console's and the merchant portal's (portal.setup.ts) are both this.
 */
export interface PageKit {
  scope: FastifyInstance;
  app: NestFastifyApplication;
  audit: AuditTrail;
  /** The preHandler that checks a POST's CSRF token is this session's (after the session check). */
  csrf: preHandlerHookHandler;
  /** Leaves a notice for the page at `path`, which the POST then redirects to (a flash bound to the session). */
  setFlash: PageTokens['setFlash'];
  /** The notice a POST of this session left for this page, if any (read once). */
  takeFlash: PageTokens['takeFlash'];
  frame: (req: FastifyRequest, reply: FastifyReply, title: string) => Frame;
  send: (reply: FastifyReply, status: number, body: string) => FastifyReply;
}

/** The delivery pages (deliveries.routes.ts) as the console or the portal serves them. */
export interface DeliveryPagesKit extends PageKit {
  /** Where the pages' links and forms point. */
  base: '/console' | '/portal';
  /** The only merchant whose deliveries this request may see and replay (the portal's link), or undefined: all (the console). */
  merchantScope: (req: FastifyRequest) => string | undefined;
  /** Whether the detail page offers the replay button. */
  canReplay: (req: FastifyRequest) => boolean;
  /**
   * The audit subject of a replay of delivery `id` when this request may replay it; otherwise the
   * refusal has been recorded and answered, and it gives undefined.
   */
  replayer: (req: FastifyRequest, reply: FastifyReply, id: string) => Promise<AuditSubject | undefined>;
  /**
   * The console's: each attempt's trace, linked by TRACE_URL_TEMPLATE (an empty template shows
   * the id alone). Absent in the portal: the gateway's traces are not the merchant's to read.
   */
  traceLink?: (traceId: string) => string | undefined;
}

/** What every group of console routes is given: a PageKit under /console, and the signed-in operator and their role. */
export interface ConsoleKit extends PageKit {
  config: ConsoleConfig;
  /** The signed-in operator (set by the session preHandler; every route but sign-in has one). */
  operatorOf: (req: FastifyRequest) => OperatorRow;
  /**
   * True when the signed-in operator holds `role`; otherwise records the refusal in the audit
   * trail, answers 403 with a page naming the role needed, and answers false.
   */
  allowed: (req: FastifyRequest, reply: FastifyReply, role: OperatorRole, action: string, target?: string) => Promise<boolean>;
}

export function subjectOf(req: FastifyRequest, operator: Pick<OperatorRow, 'id' | 'name'>, action: string, target?: string): AuditSubject {
  return {
    operator: { id: operator.id, name: operator.name },
    action,
    target,
    origin: `http ${req.ip}`,
    detail: { method: req.method, route: req.routeOptions?.url ?? null, via: 'console' },
  };
}

export function refusePage(
  kit: Pick<ConsoleKit, 'frame' | 'send'>,
  req: FastifyRequest,
  reply: FastifyReply,
  operator: OperatorRow,
  role: OperatorRole,
  verb: string,
) {
  return kit.send(
    reply,
    403,
    problemPage(
      kit.frame(req, reply, 'Refused'),
      403,
      `Operator ${operator.name} (${operator.role}) may not ${verb}: it needs the ${role} role.`,
    ),
  );
}
