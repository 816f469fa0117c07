import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions, RebillsRepository } from '@app/persistence';
import { RebillLifecycle } from '@app/rebills';
import { createMerchant } from '../support/stack';

jest.setTimeout(60_000);

/**
 * A rebill's advance is batched across concurrent callers of one process (one Postgres
 * transaction for all that arrive together). In a tokenizer two callers can ask to move the same
 * rebill on from the same decided charge at once: the charge's job following its decision up,
 * and the scheduler's pass finding the rebill decided but not yet moved on. However they are
 * batched, the rebill moves on once: one answer says so, and a suspension is told to the
 * merchant once.
 */
describe('RebillLifecycle.advance batching (real Postgres)', () => {
  let db: DataSource;
  let repo: RebillLifecycle;
  let merchantId: string;

  beforeAll(async () => {
    merchantId = (await createMerchant('rebill batching shop')).internalId;
    db = await new DataSource(dataSourceOptions(process.env.DATABASE_URL as string, 4)).initialize();
    repo = new RebillLifecycle(new RebillsRepository(db));
  });

  afterAll(async () => {
    await db?.destroy();
  });

  /** A rebill (monthly, in 2061: no other suite's time) with its first charge open, then declined as `returnCode` says. */
  async function openAndDecline(returnCode: string): Promise<{ id: string; tx: string }> {
    const id = randomUUID();
    const { charge } = await repo.create(
      {
        id,
        merchantId,
        reference: `RB-${id.slice(0, 8)}`,
        period: 3,
        frequency: 1,
        dateStart: '2061-01-10',
        dateEnd: '2061-12-31',
        retryDays: [1, 3, 5],
        shiftDays: 0,
        acquirer: 26,
        instalments: 1,
        currency: '986',
        amount: 1500,
        tokenCard: 'f'.repeat(64),
        maskedCard: '400700******0005',
        brand: 'visa',
        cardExpires: '2035-12-31',
        details: { method: 1 },
        urlReturn: 'https://merchant.example/rebills',
      },
      true,
    );
    await db.query(
      `UPDATE transactions SET status = 4, status_version = status_version + 1, processor = jsonb_build_object('returnCode', $2::text) WHERE id = $1`,
      [charge!.id, returnCode],
    );
    return { id, tx: charge!.id };
  }

  const suspensionEvents = async (id: string): Promise<number> =>
    (await db.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM outbox WHERE aggregate_id = $1`, [id]))[0].n;

  it('two advances of one rebill from one decided charge in one batch: it moves on once, and its suspension is told once', async () => {
    const blocked = await openAndDecline('78');
    const results = await Promise.all([repo.advance(blocked.id, blocked.tx), repo.advance(blocked.id, blocked.tx)]);
    expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    expect(results.find((r) => r !== undefined)).toMatchObject({ state: 'suspended', suspended: 'hard_decline' });
    expect(await suspensionEvents(blocked.id)).toBe(1);
    const row = await repo.repository.find(undefined, blocked.id);
    expect(row).toMatchObject({
      state: 'suspended',
      suspended_reason: 'hard_decline',
      open_transaction_id: null,
      next_cycle: 1,
      next_attempt: 0,
    });
  });

  it('a soft decline advanced twice at once schedules one retry', async () => {
    const declined = await openAndDecline('05');
    const results = await Promise.all([repo.advance(declined.id, declined.tx), repo.advance(declined.id, declined.tx)]);
    expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    const row = await repo.repository.find(undefined, declined.id);
    expect(row).toMatchObject({ state: 'active', open_transaction_id: null, next_cycle: 1, next_attempt: 1 });
    expect(row!.next_due_at).toEqual(new Date('2061-01-11T00:00:00Z'));
    expect(await suspensionEvents(declined.id)).toBe(0);
  });
});
