import type { Client } from 'pg';
import type { RedisConnection } from '@app/platform';
import { deleteKeys } from '@app/platform/redis';
import { eventually } from './stack';

/**
 * Waits until the outbox has published the transaction's `event` rows, then makes Redis forget
 * them as a restart without persistence would: every stream of that event in this run's queue
 * prefix is deleted, on every master of a cluster. Resolves with how many rows the outbox holds.
 */
export async function loseEvents(db: Client, redis: RedisConnection, transactionId: string, event: string): Promise<number> {
  const published = await eventually(
    async () => {
      const { rows } = await db.query('SELECT published_at FROM outbox WHERE aggregate_id = $1 AND event = $2', [transactionId, event]);
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((r) => r.published_at !== null)).toBe(true);
      return rows.length;
    },
    { timeoutMs: 20_000 },
  );
  expect(await deleteKeys(redis, `${process.env.QUEUE_PREFIX}*${event}*:stream`)).toBeGreaterThan(0);
  return published;
}
