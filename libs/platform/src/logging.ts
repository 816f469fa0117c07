import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import pino from 'pino';
import type { DynamicModule } from '@nestjs/common';
import { currentCorrelationId } from './correlation';

const CARD_FIELDS = ['cardNumber', 'cardSecurityCode', 'cardExpirationDate', 'cardHolder', 'pan', 'securityCode', 'sealedCard', 'merchantKey'];

/**
 * Every path that can hold card data or a credential, at the depths our payloads use (a job's
 * `p`, a request's `tokencard`, a sale's `payment`). Bodies are never logged on purpose; these
 * paths are the second line of defence for anything that ends up in a log call by mistake.
 * Deeper intermediate wildcards were measured to cost more CPU than the rest of a log line.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  ...CARD_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]),
];

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** A caller's x-request-id is kept only when it is short and plain, so it can't forge log lines. */
export function requestIdOf(req: IncomingMessage): string {
  const h = req.headers['x-request-id'];
  return typeof h === 'string' && REQUEST_ID.test(h) ? h : randomUUID();
}

export function loggingModule(app: string, level: string): DynamicModule {
  return LoggerModule.forRoot({
    pinoHttp: [
      {
        level,
        name: app,
        redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
        genReqId: (req) => requestIdOf(req),
        // Ties worker log lines to the request that caused them.
        mixin: () => {
          const correlationId = currentCorrelationId();
          return correlationId ? { correlationId } : {};
        },
        autoLogging: { ignore: (req) => req.url === '/health' || req.url === '/metrics' },
        serializers: {
          req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
          res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        },
      },
      // Synchronous writes: the last lines before an exit (a drain, a boot failure) are the ones
      // an operator needs, and an async buffer loses them on process.exit.
      pino.destination({ dest: 1, sync: true }),
    ],
  });
}
