import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { AdminQueues, CARD_BEARING_QUEUES, RETRYABLE_QUEUES } from './admin-queues';

const REDACTED = { redacted: 'card-bearing queue: job data is not shown' };

/**
 * The operator surface: every /admin path wants `Authorization: Bearer <ADMIN_TOKEN>` (compared
 * in constant time); without it, or when no token is configured, a bare 401 that says nothing
 * else. bull-board at /admin/queues shows every queue, the data of card-bearing ones redacted,
 * retries only where a retry is safe (deliveries, settlement).
 */
export async function setUpAdmin(app: NestFastifyApplication, adminToken: string | undefined): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  const expected = adminToken ? createHash('sha256').update(adminToken).digest() : undefined;
  fastify.addHook('onRequest', (req, reply, done) => {
    if (!isAdminRequest(req)) return done();
    const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const ok = !!expected && !!given && timingSafeEqual(createHash('sha256').update(given).digest(), expected);
    if (!ok) return void reply.code(401).header('www-authenticate', 'Bearer').send({ status: { code: '401', message: 'Unauthorized' } });
    // Of the dashboard's actions only retries are allowed: adding, editing, emptying or pausing a
    // queue by hand could forge a settlement event or drop work.
    const route = req.routeOptions?.url ?? '';
    if (route.startsWith('/admin/queues/api/') && req.method !== 'GET' && !/\/retry(\/:[A-Za-z]+)?$/.test(route)) {
      return void reply.code(405).send({ status: { code: '405', message: 'Only retries are allowed from the dashboard' } });
    }
    done();
  });

  const queues = app.get(AdminQueues);
  const board = new FastifyAdapter();
  board.setBasePath('/admin/queues');
  createBullBoard({
    queues: queues.all.map((q) => {
      const operable = RETRYABLE_QUEUES.includes(q.name);
      // Only deliveries and settlement may be retried from the dashboard; the rest is read-only.
      const adapter = new BullMQAdapter(q as never, { allowRetries: operable, readOnlyMode: !operable });
      if (CARD_BEARING_QUEUES.includes(q.name)) {
        adapter.setFormatter('data', () => REDACTED);
        adapter.setFormatter('returnValue', () => REDACTED);
      }
      return adapter;
    }),
    serverAdapter: board,
  });
  await fastify.register(board.registerPlugin() as never, { prefix: '/admin/queues' });
}

/**
 * Whether a request is for /admin, judged on the route Fastify matched (the decoded path: the raw
 * URL may be `/%61dmin/…` or an absolute-form `http://host/admin/…`) and, for unmatched ones, on
 * the decoded path too, so no spelling of the prefix gets past the token check.
 */
function isAdminRequest(req: FastifyRequest): boolean {
  if ((req.routeOptions?.url ?? '').startsWith('/admin')) return true;
  let path = req.url;
  try {
    path = new URL(req.url, 'http://x').pathname;
    path = decodeURIComponent(path);
  } catch {
    // undecodable: judged as written
  }
  return /^\/+admin(\/|$)/i.test(path);
}
