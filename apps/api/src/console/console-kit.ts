import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import { AuditSubject, AuditTrail, OperatorRole, OperatorRow } from '@app/persistence';
import { ApiConfig } from '../config/api.config';
import { Frame, problemPage } from './layout';

/**
 * What every group of console routes is given: the Fastify scope under /console (the session
 * preHandler and the security headers already on it), the Nest app to get repositories from, and
 * the helpers every page and action uses.
 */
export interface ConsoleKit {
  scope: FastifyInstance;
  app: NestFastifyApplication;
  config: ApiConfig;
  audit: AuditTrail;
  /** The preHandler that checks a POST's CSRF token (after the session check). */
  csrf: preHandlerHookHandler;
  /** The signed-in operator (set by the session preHandler; every route but sign-in has one). */
  operatorOf: (req: FastifyRequest) => OperatorRow;
  frame: (req: FastifyRequest, reply: FastifyReply, title: string) => Frame;
  send: (reply: FastifyReply, status: number, body: string) => FastifyReply;
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
