import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Events } from '@app/contracts';
import { dataSourceOptions, LedgerRepository, NewTransaction, TransactionsRepository } from '@app/persistence';
import { CaptureSettlement } from '@app/settlement';
import { createMerchant } from '../support/stack';

jest.setTimeout(60_000);

/**
 * The sale path's writes are batched across concurrent callers (one statement for all that
 * arrive together). Against real Postgres: the compare-and-set still lets exactly one of two
 * changes from the same version win, even inside one batch, and a losing change writes no event.
 */
describe('TransactionsRepository batching (real Postgres)', () => {
  let db: DataSource;
  let repo: TransactionsRepository;
  let merchantId: string;
  const sale = (n: number): NewTransaction => ({
    id: randomUUID().toUpperCase(),
    merchantId,
    reference: `TB-${n}`,
    operation: 'sale',
    acquirer: 26,
    method: 1,
    instalments: 1,
    currency: '986',
    amount: 10_000 + n,
    maskedCard: '411111******1111',
    brand: 'visa',
    details: { departureTax: n, softDescriptor: `it's "${n}"` },
  });
  const eventsOf = async (id: string) => (await db.query('SELECT event FROM outbox WHERE aggregate_id = $1', [id])).length;

  beforeAll(async () => {
    merchantId = (await createMerchant('tx batching shop')).internalId;
    db = await new DataSource(dataSourceOptions(process.env.DATABASE_URL as string, 4)).initialize();
    repo = new TransactionsRepository(db);
  });

  afterAll(async () => {
    await db?.destroy();
  });

  it('inserts and reads concurrent sales each as its own row', async () => {
    const input = Array.from({ length: 100 }, (_, n) => sale(n));
    const rows = await Promise.all(input.map((t) => repo.insertPending(t)));
    rows.forEach((r, n) =>
      expect([r.id, r.amount, r.status, r.status_version, r.details]).toEqual([
        input[n].id.toLowerCase(),
        String(10_000 + n),
        0,
        1,
        input[n].details,
      ]),
    );
    const read = await Promise.all([...input, input[0]].map((t) => repo.findByMerchantAndId(merchantId, t.id.toLowerCase())));
    expect(read.map((r) => r?.reference)).toEqual([...input.map((t) => t.reference), 'TB-0']);
    expect(read[100]).not.toBe(read[0]); // the same row read twice at once: two copies
    expect(await repo.findByMerchantAndId(randomUUID(), input[1].id.toLowerCase())).toBeUndefined(); // another merchant's
  });

  it('of two changes from one version in one batch exactly one wins; a stale change loses; losers write no event', async () => {
    const [a, b, c] = await Promise.all([sale(200), sale(201), sale(202)].map((t) => repo.insertPending(t)));
    const approve = (version: number) => ({ status: 8 as const, capturedAmount: 10_000 + version });
    const events = () => [{ event: Events.TransactionStatusChanged, payload: { x: 1 } }];
    const staleC = { ...c, status_version: 7 };
    const [a1, a2, b1, c1] = await Promise.all([
      repo.transition(a, approve(1), events),
      repo.transition(a, approve(2), events),
      repo.transition(b, approve(3), events),
      repo.transition(staleC, approve(4), events),
    ]);
    expect([!!a1 !== !!a2, !!b1, !!c1]).toEqual([true, true, false]);
    expect([await eventsOf(a.id), await eventsOf(b.id), await eventsOf(c.id)]).toEqual([1, 1, 0]);
    const [ra, rb, rc] = await Promise.all([a, b, c].map((t) => repo.findByMerchantAndId(merchantId, t.id)));
    expect([ra!.status_version, ra!.captured_amount]).toEqual([2, a1 ? '10001' : '10002']);
    expect([rb!.status, rb!.status_version, rc!.status, rc!.status_version]).toEqual([8, 2, 0, 1]);
  });
});

describe('CaptureSettlement batching (real Postgres)', () => {
  let db: DataSource;
  let transactions: TransactionsRepository;
  let captures: CaptureSettlement;
  let merchantId: string;

  beforeAll(async () => {
    merchantId = (await createMerchant('ledger batching shop')).internalId;
    db = await new DataSource(dataSourceOptions(process.env.DATABASE_URL as string, 4)).initialize();
    transactions = new TransactionsRepository(db);
    captures = new CaptureSettlement(new LedgerRepository(db));
  });

  afterAll(async () => {
    await db?.destroy();
  });

  /** A captured sale with settlement terms (no split: the merchant takes it all, fee 2 % + 10). */
  const captured = async (n: number, instalments: number) => {
    const row = await transactions.insertPending({
      id: randomUUID(),
      merchantId,
      reference: `LB-${n}`,
      operation: 'sale',
      acquirer: 26,
      method: 1,
      instalments,
      currency: '986',
      amount: 10_000 + n,
      maskedCard: '411111******1111',
      brand: 'visa',
      details: { terms: { kind: 'credit', brand: 'visa', fee: { ratePpm: 20_000, fixed: 10 } } },
    });
    await db.query('UPDATE transactions SET status = 8, status_version = 2, captured_amount = amount WHERE id = $1', [row.id]);
    return row.id;
  };

  it('settles concurrent captures in one go: each once, however often and however spelled its event comes', async () => {
    const ids = await Promise.all(Array.from({ length: 20 }, (_, n) => captured(n, 1 + (n % 3))));
    const calls = [...ids, ...ids.map((id) => id.toUpperCase()), ids[0]];
    const outcomes = await Promise.all(calls.map((id) => captures.settle(id)));
    // Each transaction: written exactly once among its three events, the others find it done.
    for (const id of ids) {
      const mine = outcomes.filter((_, i) => calls[i].toLowerCase() === id);
      expect(mine.filter((o) => o === 'written')).toHaveLength(1);
      expect(mine.filter((o) => o === 'already')).toHaveLength(mine.length - 1);
    }
    const rows: { transaction_id: string; n: number; gross: string }[] = await db.query(
      `SELECT transaction_id, count(*)::int AS n, sum(gross)::text AS gross FROM payables WHERE transaction_id = ANY($1::uuid[]) GROUP BY transaction_id`,
      [ids],
    );
    const byId = new Map(rows.map((r) => [r.transaction_id, r]));
    ids.forEach((id, n) => expect([byId.get(id)?.n, byId.get(id)?.gross]).toEqual([1 + (n % 3), String(10_000 + n)]));
    expect(await captures.settle(randomUUID())).toBe('nothing_captured');
  });
});
