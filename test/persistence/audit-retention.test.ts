import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions, RetentionRepository, RoleOwner } from '@app/persistence';
import { PRUNED_TABLES, RetentionPruner } from '@app/retention';
import { EnvReader, readRetentionConfig, RetentionConfig } from '@app/platform';
import { createDatabaseIfMissing, dropDatabase, roleUrl, withDatabase } from '../../scripts/lib/database';

jest.setTimeout(180_000);

const DAY = 86_400_000;
/** The defaults (RETENTION_AUDIT 365d), with small batches so the rule takes several. */
const config = (): RetentionConfig => ({ ...readRetentionConfig(new EnvReader({})), batchRows: 3 });

/**
 * Issue 32 finding 4: the audit trail is pruned by a retention rule (RETENTION_AUDIT), through the
 * one narrow path the migration makes (prune_audit_events(), run as the table's owner, EXECUTE for
 * the console and the operator only), while every role is still refused a DELETE of its own and the
 * trigger still refuses any other change. In a database of its own, migrated here.
 */
describe('audit trail retention (real Postgres)', () => {
  const url = withDatabase(process.env.DATABASE_URL!, `gw_audit_retention_${process.pid}`);
  let owner: DataSource;
  const asRole = new Map<RoleOwner, DataSource>();

  const ago = (ms: number) => new Date(Date.now() - ms);
  /** Appends an event as the owner, at a time of the test's choosing; its id. */
  const event = async (name: string, at: Date, outcome = 'refused', attemptId: string | null = null): Promise<string> => {
    const [{ id }]: { id: string }[] = await owner.query(
      `INSERT INTO audit_events (at, operator_name, action, target, origin, outcome, attempt_id)
       VALUES ($1, 'retention-test', 'test:event', $2, 'cli test@host', $3, $4) RETURNING id::text AS id`,
      [at, name, outcome, attemptId],
    );
    return id;
  };
  const left = async (): Promise<string[]> =>
    (await owner.query<{ target: string }[]>(`SELECT target FROM audit_events WHERE operator_name = 'retention-test' ORDER BY target`)).map(
      (r) => r.target,
    );

  beforeAll(async () => {
    await createDatabaseIfMissing(url);
    owner = await new DataSource(dataSourceOptions(url, 4)).initialize();
    await owner.runMigrations({ transaction: 'each' });
    for (const app of ['api', 'console', 'tokenizer', 'notifier', 'cli'] as const)
      asRole.set(app, await new DataSource(dataSourceOptions(roleUrl(url, app), 2)).initialize());
  });

  afterAll(async () => {
    for (const db of asRole.values()) await db.destroy();
    await owner?.destroy();
    await dropDatabase(url);
  });

  it('retention:run (every rule, as the operator) deletes the events older than RETENTION_AUDIT and keeps the younger ones', async () => {
    for (const [name, age] of [
      ['old-1', 400 * DAY],
      ['old-2', 366 * DAY],
      ['old-3', 1000 * DAY],
      ['old-4', 370 * DAY],
      ['young-1', 364 * DAY],
      ['young-2', DAY],
    ] as const)
      await event(name, ago(age));
    // An attempt past the age whose outcome is not: both kept (the outcome points at it).
    const attempt = await event('straddling-attempt', ago(365 * DAY + 60_000), 'attempted');
    await event('straddling-outcome', ago(364 * DAY), 'ok', attempt);
    // An attempt and its outcome both past the age: both go.
    const oldAttempt = await event('old-attempt', ago(500 * DAY), 'attempted');
    await event('old-outcome', ago(500 * DAY - 1000), 'ok', oldAttempt);

    const passes = await new RetentionPruner(new RetentionRepository(asRole.get('cli')!), PRUNED_TABLES, config()).run();
    expect(passes.find((p) => p.table === ('audit_events' as never))).toEqual({ table: 'audit_events', rows: 6 });
    expect(await left()).toEqual(['straddling-attempt', 'straddling-outcome', 'young-1', 'young-2']);
  });

  it("the console's own pass prunes it too; a dry run counts and deletes nothing", async () => {
    await event('console-old', ago(400 * DAY));
    const dry = await RetentionPruner.of('console', new RetentionRepository(asRole.get('cli')!), config()).run({ dry: true });
    expect(dry.find((p) => p.table === ('audit_events' as never))).toEqual({ table: 'audit_events', rows: 1 });
    expect(await left()).toContain('console-old');
    const passes = await RetentionPruner.of('console', new RetentionRepository(asRole.get('console')!), config()).run();
    expect(passes.find((p) => p.table === ('audit_events' as never))).toEqual({ table: 'audit_events', rows: 1 });
    expect(await left()).not.toContain('console-old');
  });

  it('no role may delete an event itself, nor prune younger than 30 days; only the console and the operator may prune', async () => {
    await event('guarded', ago(40 * DAY));
    for (const app of ['api', 'console', 'tokenizer', 'notifier', 'cli'] as const)
      await expect(asRole.get(app)!.query(`DELETE FROM audit_events WHERE target = 'guarded'`)).rejects.toMatchObject({ code: '42501' });
    await expect(asRole.get('console')!.query(`SELECT prune_audit_events(now() - interval '29 days', 100)`)).rejects.toThrow(/30 days/);
    for (const app of ['api', 'tokenizer', 'notifier'] as const)
      await expect(asRole.get(app)!.query(`SELECT prune_audit_events(now() - interval '400 days', 100)`)).rejects.toMatchObject({
        code: '42501',
      });
    // The owner itself is still refused an ad hoc change: the trigger allows only the function's deletes.
    await expect(owner.query(`DELETE FROM audit_events WHERE target = 'guarded'`)).rejects.toThrow(/append-only/);
    await expect(owner.query(`UPDATE audit_events SET target = 'x' WHERE target = 'guarded'`)).rejects.toThrow(/append-only/);
    expect(await left()).toContain('guarded');
    const [{ n }]: { n: number }[] = await asRole.get('cli')!.query(`SELECT prune_audit_events(now() - interval '30 days', 100) AS n`);
    // Everything past 30 days goes: this one, and what the first test left as younger than 365 days.
    expect(n).toBe(4);
    expect(await left()).toEqual(['young-2']);
  });

  it('a pass on a table another pruner holds is skipped', async () => {
    await event(`held-${randomUUID()}`, ago(400 * DAY));
    const other = owner.createQueryRunner();
    await other.connect();
    await other.startTransaction();
    try {
      await other.query(`SELECT pg_advisory_xact_lock(1765700000, hashtext('audit_events'))`);
      const passes = await RetentionPruner.of('console', new RetentionRepository(asRole.get('console')!), config()).run();
      expect(passes.find((p) => p.table === ('audit_events' as never))).toEqual({ table: 'audit_events', rows: 0, skipped: true });
    } finally {
      await other.rollbackTransaction();
      await other.release();
    }
  });
});
