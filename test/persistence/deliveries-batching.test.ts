import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions, DeliveriesRepository, NewDelivery } from '@app/persistence';
import { createMerchant } from '../support/stack';

jest.setTimeout(60_000);

/**
 * The notifier's two writes per delivery are batched across concurrent callers (one statement
 * for all that arrive together). Against real Postgres: each caller still gets its own answer,
 * an event twice in one batch is created once, and one bad item fails alone.
 */
describe('DeliveriesRepository batching (real Postgres)', () => {
  let db: DataSource;
  let repo: DeliveriesRepository;
  let merchantId: string;
  const delivery = (over: Partial<NewDelivery> = {}): NewDelivery => ({
    merchantId,
    transactionId: randomUUID(),
    statusVersion: 2,
    event: 'transaction.status_changed',
    url: 'http://127.0.0.1:9/hook',
    origin: 'http://127.0.0.1:9',
    body: `{"n":"${randomUUID()}"}`,
    ...over,
  });

  beforeAll(async () => {
    merchantId = (await createMerchant('batching shop')).internalId;
    db = await new DataSource(dataSourceOptions(process.env.DATABASE_URL as string, 4)).initialize();
    repo = new DeliveriesRepository(db);
  });

  afterAll(async () => {
    await db?.destroy();
  });

  it('creates 300 concurrent deliveries in few statements, each caller getting its own row', async () => {
    const statements = jest.spyOn(db, 'query');
    const input = Array.from({ length: 300 }, () => delivery());
    const out = await Promise.all(input.map((d, i) => repo.createOnce(d, i % 2 === 0)));
    expect(statements.mock.calls.length).toBeLessThan(30);
    statements.mockRestore();
    out.forEach(({ row, created }, i) => {
      expect(created).toBe(true);
      expect(row.transaction_id).toBe(input[i].transactionId);
      expect(row.body).toBe(input[i].body);
      expect([row.status, row.attempts]).toEqual(i % 2 === 0 ? ['sending', 1] : ['pending', 0]);
    });
    // The same events again: found, not created.
    const again = await Promise.all(input.map((d) => repo.createOnce(d, true)));
    expect(again.map((a) => [a.created, a.row.id])).toEqual(out.map((o) => [false, o.row.id]));
  });

  it('an event twice in one batch is created once: only its first caller may attempt it', async () => {
    const d = delivery();
    const [a, b] = await Promise.all([repo.createOnce(d, true), repo.createOnce({ ...d }, true)]);
    expect([a.created, b.created]).toEqual([true, false]);
    expect(b.row.id).toBe(a.row.id);
    const n = await db.query('SELECT count(*)::int AS n FROM deliveries WHERE transaction_id = $1', [d.transactionId]);
    expect(n[0].n).toBe(1);
  });

  it('one bad item fails alone; the others of its batch are written', async () => {
    const good = [delivery(), delivery()];
    const bad = delivery({ merchantId: randomUUID() }); // no such merchant: a foreign key violation
    const results = await Promise.allSettled([repo.createOnce(good[0]), repo.createOnce(bad), repo.createOnce(good[1])]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const rows = await db.query('SELECT transaction_id FROM deliveries WHERE transaction_id = ANY($1)', [
      [...good, bad].map((d) => d.transactionId),
    ]);
    expect(rows.map((r: { transaction_id: string }) => r.transaction_id).sort()).toEqual(good.map((d) => d.transactionId).sort());
  });

  it('records concurrent attempts in one go, each on its own delivery', async () => {
    const made = await Promise.all(Array.from({ length: 50 }, () => repo.createOnce(delivery(), true)));
    const startedAt = new Date();
    await Promise.all(
      made.map(({ row }, i) =>
        repo.finishAttempt(
          row.id,
          1,
          {
            startedAt,
            durationMs: i,
            httpStatus: i % 2 ? 200 : 503,
            errorClass: i % 2 ? undefined : 'http_status',
            responseBody: `answer "${i}" \\ ,{}`,
          },
          i % 2 ? { status: 'succeeded' } : { status: 'pending', nextAttemptAt: new Date(startedAt.getTime() + 60_000), error: 'HTTP 503' },
        ),
      ),
    );
    for (const [i, { row }] of made.entries()) {
      const [d] = await db.query(
        'SELECT status, last_http_status, last_error, succeeded_at, next_attempt_at FROM deliveries WHERE id = $1',
        [row.id],
      );
      const attempts = await repo.attemptsOf(row.id);
      expect(attempts).toEqual([
        expect.objectContaining({ attempt: 1, duration_ms: i, http_status: i % 2 ? 200 : 503, response_body: `answer "${i}" \\ ,{}` }),
      ]);
      if (i % 2)
        expect(d).toEqual(
          expect.objectContaining({ status: 'succeeded', last_http_status: 200, last_error: null, succeeded_at: expect.any(Date) }),
        );
      else
        expect(d).toEqual(
          expect.objectContaining({
            status: 'pending',
            last_http_status: 503,
            last_error: 'HTTP 503',
            succeeded_at: null,
            next_attempt_at: new Date(startedAt.getTime() + 60_000),
          }),
        );
    }
  });
});
