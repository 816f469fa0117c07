import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions, DeliveriesRepository, DeliveryRow } from '@app/persistence';
import { createMerchant } from '../support/stack';
import type { NotifierConfig } from '../../apps/notifier/src/config/notifier.config';
import type { DeliveryWorker } from '../../apps/notifier/src/deliveries/delivery.worker';

jest.mock('@app/contracts', () => ({ ...jest.requireActual('@app/contracts'), toTransactionResponse: (v: unknown) => v }));
import { DeliveriesService } from '../../apps/notifier/src/deliveries/deliveries.service';
import { EventSweeper } from '../../apps/notifier/src/deliveries/event.sweeper';

jest.setTimeout(120_000);
const config = { eventSweepGraceS: 1, eventSweepHorizonS: 21_600, sweepIntervalMs: 3_600_000 } as NotifierConfig;

/**
 * The notifier's event sweep on the real repository and Postgres, with a stand-in for the attempt
 * (it claims the delivery as DeliveryWorker does and keeps it in flight 300 ms instead of sending):
 * replicas sweeping at once, a relay batch sharing one publication time, and a session whose
 * DateStyle and time zone print timestamps in another form.
 */
describe('the event sweep, replica against replica', () => {
  let db: DataSource;
  let merchantId: string;

  beforeAll(async () => {
    merchantId = (await createMerchant('sweep review')).internalId;
    db = await new DataSource(dataSourceOptions(process.env.DATABASE_URL as string, 1)).initialize();
  });
  afterAll(async () => db?.destroy());

  /** `n` status changes with no delivery, published `agoS` seconds ago, spread over `spreadS` (0: one published_at for all). */
  async function lostChanges(n: number, agoS: number, spreadS = 0): Promise<string[]> {
    const ids = Array.from({ length: n }, () => randomUUID());
    await db.query(
      `INSERT INTO outbox (id, event, aggregate_id, payload, published_at)
       SELECT gen_random_uuid(), 'transaction.status_changed', t, jsonb_build_object('transactionId', t, 'merchantId', $2::text,
         'statusVersion', 1, 'urlReturn', 'http://127.0.0.1:9/hook', 'view', jsonb_build_object('id', t)),
         date_trunc('second', now()) - make_interval(secs => $3::int) + make_interval(secs => $4::float8 * i / $5::int)
       FROM unnest($1::uuid[]) WITH ORDINALITY AS u (t, i)`,
      [ids, merchantId, agoS, spreadS, n],
    );
    return ids;
  }

  /** A replica: its repository, service and a worker that claims and "sends" as DeliveryWorker does (attempt in flight 300 ms). */
  function replica(sends: string[]) {
    const repo = new DeliveriesRepository(db);
    const worker = {
      deliverNow: async (d: DeliveryRow, claimed = false) => {
        const row = claimed ? d : await repo.startAttempt(d.id);
        if (!row) return;
        sends.push(row.transaction_id);
        await new Promise((r) => setTimeout(r, 300));
        await db.query(`UPDATE deliveries SET status = 'succeeded' WHERE id = $1`, [row.id]);
      },
    };
    return new EventSweeper(repo, new DeliveriesService(repo, worker as unknown as DeliveryWorker), config);
  }

  it('two replicas sweeping at the same time send each lost change once', async () => {
    const ids = await lostChanges(20, 3_600);
    const sends: string[] = [];
    await Promise.all([replica(sends).run(), replica(sends).run()]);
    const mine = sends.filter((t) => ids.includes(t));
    expect(new Set(mine).size).toBe(20);
    expect(mine).toHaveLength(20); // each webhook sent once
  });

  it('1 200 changes sharing one published_at (one relay batch) are all swept, once', async () => {
    const ids = await lostChanges(1_200, 7_200);
    const sends: string[] = [];
    await replica(sends).run();
    const mine = sends.filter((t) => ids.includes(t));
    expect(mine).toHaveLength(1_200);
    expect(new Set(mine).size).toBe(1_200);
  });

  it('with a non-ISO DateStyle and an IST time zone, changes spread over 5 h are all swept', async () => {
    const ids = await lostChanges(600, 5 * 3_600, 5 * 3_600 - 120);
    await db.query(`SET DateStyle = '${'SQL, MDY'}'`);
    await db.query(`SET TimeZone = 'Asia/Kolkata'`);
    try {
      const sends: string[] = [];
      await replica(sends).run();
      expect(sends.filter((t) => ids.includes(t))).toHaveLength(600);
    } finally {
      await db.query(`RESET DateStyle`);
      await db.query(`RESET TimeZone`);
    }
  });
});
