import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
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
    if (!req.url.startsWith('/admin')) return done();
    const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const ok = !!expected && !!given && timingSafeEqual(createHash('sha256').update(given).digest(), expected);
    if (ok) return done();
    void reply.code(401).header('www-authenticate', 'Bearer').send({ status: { code: '401', message: 'Unauthorized' } });
  });

  const queues = app.get(AdminQueues);
  const board = new FastifyAdapter();
  board.setBasePath('/admin/queues');
  createBullBoard({
    queues: queues.all.map((q) => {
      const operable = RETRYABLE_QUEUES.includes(q.name);
      // Only deliveries and settlement may be retried (or cleaned) from the dashboard; the rest is read-only.
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
