import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { RebillPeriods } from '@app/contracts';
import { dataSourceOptions, NewRebill, RebillsRepository } from '@app/persistence';
import { RebillLifecycle } from '@app/rebills';
import { createMerchant } from '../support/stack';

jest.setTimeout(120_000);

/**
 * RebillLifecycle and its RebillsRepository against real Postgres (the run's migrated database), with the acquirer's
 * decisions written straight into the charges: many runners opening and moving on the same
 * rebills at once, cancels racing them, and one decision arriving twice in one batch.
 */
describe('RebillLifecycle and RebillsRepository (real Postgres)', () => {
  let db: DataSource;
  let merchantId: string;
  const repos: RebillLifecycle[] = [];
  let year = 2070;

  const rebill = (o: Partial<NewRebill> = {}): NewRebill => ({
    id: randomUUID(),
    merchantId,
    reference: `RR-${randomUUID().slice(0, 8)}`,
    period: RebillPeriods.Daily,
    frequency: 1,
    dateStart: `${year}-01-01`,
    dateEnd: `${year}-01-10`,
    retryDays: [1, 3, 5],
    shiftDays: 0,
    acquirer: 26,
    instalments: 1,
    currency: '986',
    amount: 1990,
    tokenCard: 'a'.repeat(64),
    maskedCard: '411111******1111',
    brand: 'visa',
    cardExpires: '2099-12-31',
    details: { method: 1 },
    urlReturn: 'https://merchant.example/rebills',
    ...o,
  });

  /** What the tokenizer records when the acquirer answers. */
  const decide = (transactionId: string, status: number, returnCode = status === 8 ? '00' : '05') =>
    db.query(`UPDATE transactions SET status = $2, status_version = status_version + 1, processor = $3 WHERE id = $1 AND status = 0`, [
      transactionId.toLowerCase(),
      status,
      JSON.stringify({ returnCode }),
    ]);

  const cyclesOf = async (id: string) =>
    db.query<{ cycle: number; attempt: number }[]>(
      `SELECT cycle, attempt FROM rebill_cycles WHERE rebill_id = $1 ORDER BY cycle, attempt`,
      [id],
    );

  beforeAll(async () => {
    merchantId = (await createMerchant('rebills repository shop')).internalId;
    db = await new DataSource(dataSourceOptions(process.env.DATABASE_URL as string, 8)).initialize();
    // Four runners, each with its own pool and batcher, as four processes would be.
    for (let i = 0; i < 4; i++) {
      const own = await new DataSource(dataSourceOptions(process.env.DATABASE_URL as string, 4)).initialize();
      repos.push(new RebillLifecycle(new RebillsRepository(own)));
    }
  });

  afterAll(async () => {
    await Promise.all(repos.map((r) => (r.repository as unknown as { db: DataSource }).db.destroy()));
    await db?.destroy();
  });

  beforeEach(() => {
    year++;
  });

  it('four runners opening and moving on the same rebills at once, with cancels racing them: each cycle opened once, none skipped', async () => {
    const created = await Promise.all(Array.from({ length: 24 }, () => repos[0].create(rebill(), false)));
    const ids = created.map((c) => c.rebill.id);
    const asOf = new Date(`${year}-02-01T00:00:00Z`);
    const cancelled = new Map<string, number>();
    const runner = async (repo: RebillLifecycle) => {
      for (let idle = 0; idle < 5;) {
        const opened = await repo.openDue(asOf, 5);
        if (!opened.length) {
          idle++;
          await new Promise((r) => setTimeout(r, 10));
          continue;
        }
        idle = 0;
        await Promise.all(
          opened.map(async (c) => {
            await decide(c.transactionId, 8);
            await repo.advance(c.rebillId, c.transactionId);
          }),
        );
      }
    };
    const canceller = async () => {
      for (const id of ids.slice(0, 6)) {
        await new Promise((r) => setTimeout(r, 15));
        const before = (await cyclesOf(id)).length;
        const result = await repos[3].cancel(merchantId, id);
        if (typeof result === 'object') cancelled.set(id, before);
      }
    };
    await Promise.all([...repos.map(runner), canceller()]);
    // An advance skips a rebill another holds (SKIP LOCKED); the scheduler's next pass moves it on
    // and opens what follows. Passes as the scheduler runs them, until nothing is open or due.
    for (let pass = 0; pass < 50; pass++) {
      const open = await db.query(`SELECT id, open_transaction_id FROM rebills WHERE id = ANY($1) AND open_transaction_id IS NOT NULL`, [
        ids,
      ]);
      for (const r of open) await repos[0].advance(r.id, r.open_transaction_id);
      const due = await db.query(`SELECT 1 FROM rebills WHERE id = ANY($1) AND state = 'active' AND next_due_at <= $2`, [ids, asOf]);
      if (!open.length && !due.length) break;
      await Promise.all(repos.map(runner));
    }
    for (const id of ids) {
      const cycles = await cyclesOf(id);
      const [r] = await db.query(`SELECT state, next_cycle, open_transaction_id FROM rebills WHERE id = $1`, [id]);
      // Contiguous, one charge each, in order.
      expect(cycles).toEqual(cycles.map((_, i) => ({ cycle: i + 1, attempt: 0 })));
      expect(r.open_transaction_id).toBeNull();
      if (cancelled.has(id)) {
        expect(r.state).toBe('cancelled');
        // At most the charge that was in flight when the cancel returned was decided after it.
        expect(cycles.length).toBeLessThanOrEqual(cancelled.get(id)! + 1);
      } else {
        expect([r.state, r.next_cycle, cycles.length]).toEqual(['completed', 11, 10]);
      }
    }
  });

  it('one decision moved on twice in the same batch suspends the rebill once, with one event', async () => {
    const { rebill: row, charge } = await repos[0].create(rebill({ retryDays: [] }), true);
    await decide(charge!.id, 4);
    const results = await Promise.all([repos[1].advance(row.id, charge!.id), repos[1].advance(row.id, charge!.id)]);
    expect(results.filter((r) => r?.suspended)).not.toHaveLength(0);
    const [r] = await db.query(`SELECT state, suspended_reason FROM rebills WHERE id = $1`, [row.id]);
    expect(r).toEqual({ state: 'suspended', suspended_reason: 'retries_exhausted' });
    const events = await db.query(`SELECT id FROM outbox WHERE aggregate_id = $1`, [row.id]);
    expect(events).toHaveLength(1);
  });
});
