import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { createDatabaseIfMissing, databaseName, dropDatabase, withDatabase } from '../../scripts/lib/database';
import { migrateEntry, repoRoot, runNode } from '../../scripts/lib/processes';
import { CANARY_CARDS } from '../fixtures/cards';
import { AppHandle, createMerchant, MerchantCredentials, runCli, runCliRaw, startApp } from '../support/stack';

jest.setTimeout(180_000);

interface AuditRow {
  id: string;
  operator_name: string | null;
  action: string;
  target: string | null;
  origin: string;
  outcome: 'attempted' | 'ok' | 'refused' | 'failed';
  error_class: string | null;
  attempt_id: string | null;
  detail: Record<string, unknown>;
}

/** The CLI as someone: `token` undefined runs it with no GATEWAY_OPERATOR_TOKEN at all. */
const as = (token: string | undefined, args: string[], databaseUrl = process.env.DATABASE_URL!) =>
  runCliRaw(args, { GATEWAY_OPERATOR_TOKEN: token ?? '', DATABASE_URL: databaseUrl });
const errorOf = (r: { stderr: string }) => r.stderr.trim().split('\n').pop() ?? '';

async function withDb<T>(url: string, fn: (db: Client) => Promise<T>): Promise<T> {
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

/** The audit events since `afterId`, oldest first. */
const eventsAfter = (afterId: string, url = process.env.DATABASE_URL!): Promise<AuditRow[]> =>
  withDb(
    url,
    async (db) =>
      (
        await db.query(
          `SELECT id::text, operator_name, action, target, origin, outcome, error_class, attempt_id::text, detail FROM audit_events WHERE id > $1 ORDER BY audit_events.id`,
          [afterId],
        )
      ).rows,
  );
const lastEventId = (url = process.env.DATABASE_URL!): Promise<string> =>
  withDb(url, async (db) => (await db.query(`SELECT coalesce(max(id), 0)::text AS id FROM audit_events`)).rows[0].id);

/** A database of its own (migrated, no operator yet), for what needs an empty operators table. */
async function freshDatabase(): Promise<string> {
  const url = withDatabase(process.env.DATABASE_URL!, `${databaseName(process.env.DATABASE_URL!)}_ops${randomBytes(3).toString('hex')}`);
  await createDatabaseIfMissing(url);
  const r = await runNode(migrateEntry(repoRoot()), [], {
    cwd: repoRoot(),
    env: { ...process.env, DATABASE_URL: url },
    timeoutMs: 120_000,
  });
  if (r.code !== 0) throw new Error(`migrations failed: ${r.stderr}`);
  return url;
}

/** Runs at most `n` at a time (the CLI is a process each). */
async function inBatches<T, R>(items: T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += n) out.push(...(await Promise.all(items.slice(i, i + n).map(fn))));
  return out;
}

describe('operators and the audit trail', () => {
  const adminToken = process.env.GATEWAY_OPERATOR_TOKEN!;
  const tokens: Record<'viewer' | 'operator' | 'admin', string> = { viewer: '', operator: '', admin: '' };
  const suffix = randomBytes(3).toString('hex');
  let shop: MerchantCredentials;
  let consoleApp: AppHandle;

  beforeAll(async () => {
    shop = await createMerchant('operators shop');
    for (const role of ['viewer', 'operator', 'admin'] as const) {
      tokens[role] = (await runCli<{ token: string }>(['operator:create', '--name', `${role}-${suffix}`, '--role', role])).token;
    }
    consoleApp = await startApp('console');
  });

  afterAll(async () => {
    await consoleApp?.stop();
  });

  it('operator:create prints a recognisable token once and stores only its SHA-256; operator:list shows no hash', async () => {
    expect(tokens.viewer).toMatch(/^op_[A-Za-z0-9_-]{43}$/);
    const stored = await withDb(
      process.env.DATABASE_URL!,
      async (db) =>
        (await db.query(`SELECT encode(token_hash, 'hex') AS h FROM operators WHERE name = $1`, [`viewer-${suffix}`])).rows[0].h,
    );
    expect(stored).toBe(createHash('sha256').update(tokens.viewer).digest('hex'));
    const listed = await runCli<Array<Record<string, unknown>>>(['operator:list']);
    const text = JSON.stringify(listed);
    expect(text).not.toContain(stored);
    expect(text).not.toContain(tokens.viewer);
    expect(listed.find((o) => o.operator === `viewer-${suffix}`)).toMatchObject({ role: 'viewer', active: true, createdBy: 'test-admin' });
  });

  /**
   * Every command and the least role that may run it. Each is run by the role just below (or with
   * an unknown token for viewer commands): refused before acting, whatever its options.
   */
  const MATRIX: Array<[string, 'viewer' | 'operator' | 'admin', string[]]> = [
    ['webhooks:list', 'viewer', ['--merchant', 'M']],
    ['fees:show', 'viewer', ['--merchant', 'M']],
    ['payables:list', 'viewer', ['--merchant', 'M']],
    ['recipient:list', 'viewer', ['--merchant', 'M']],
    ['ledger:verify', 'viewer', []],
    ['acquirer:reconcile', 'viewer', []],
    ['listener:list', 'viewer', ['--merchant', 'M']],
    ['webhooks:replay', 'operator', ['--merchant', 'M', '--since', '2026-01-01T00:00:00Z']],
    ['webhooks:recover-cancel', 'operator', ['--id', '00000000-0000-4000-8000-000000000000']],
    ['listener:disable', 'operator', ['--merchant', 'M', '--origin', 'https://hooks.example.com:443']],
    ['listener:enable', 'operator', ['--merchant', 'M', '--origin', 'https://hooks.example.com:443']],
    ['recipient:create', 'operator', ['--merchant', 'M', '--name', 'nobody']],
    ['recipient:approve', 'operator', ['--recipient', '00000000-0000-4000-8000-000000000000']],
    ['chargeback:record', 'operator', ['--transaction', '00000000-0000-4000-8000-000000000000', '--amount', '1']],
    [
      'acquirer:void-orphan',
      'operator',
      ['--merchant', 'M', '--transaction', '00000000-0000-4000-8000-000000000000', '--charge', '00000000-0000-4000-8000-000000000001'],
    ],
    [
      'fees:set',
      'operator',
      ['--merchant', 'M', '--kind', 'credit', '--brand', 'visa', '--instalments', '1', '--rate', '1', '--fixed', '1'],
    ],
    ['merchant:create', 'admin', ['--name', 'nobody']],
    ['merchant:rotate-key', 'admin', ['--merchant', 'M']],
    ['merchant:rotate-webhook-secret', 'admin', ['--merchant', 'M']],
    ['vault:rotate-key', 'admin', []],
    ['operator:create', 'admin', ['--name', 'NOBODY', '--role', 'admin']],
    ['operator:revoke', 'admin', ['--name', 'VIEWER']],
    ['operator:list', 'admin', []],
    ['audit:list', 'admin', []],
  ];
  const below = { viewer: undefined, operator: 'viewer', admin: 'operator' } as const;

  it('every command refuses the role below its own, audits the refusal and does nothing', async () => {
    const from = await lastEventId();
    const merchantsBefore = await withDb(
      process.env.DATABASE_URL!,
      async (db) => (await db.query('SELECT count(*)::int AS n FROM merchants')).rows[0].n,
    );
    const results = await inBatches(MATRIX, 4, async ([command, role, args]) => {
      const lower = below[role];
      const token = lower ? tokens[lower] : `op_${randomBytes(32).toString('base64url')}`;
      const concrete = args.map((a) =>
        a === 'M' ? shop.merchantId : a === 'NOBODY' ? `nobody-${suffix}` : a === 'VIEWER' ? `viewer-${suffix}` : a,
      );
      return { command, role, lower, r: await as(token, [command, ...concrete]) };
    });
    for (const { command, r, role, lower } of results) {
      expect({ command, code: r.code }).toEqual({ command, code: 1 });
      expect(errorOf(r)).toMatch(
        lower
          ? new RegExp(`refused: operator ${lower}-${suffix} \\(${lower}\\) may not run ${command}: it needs the ${role} role`)
          : /refused: GATEWAY_OPERATOR_TOKEN is not an operator token/,
      );
      expect(r.stdout).toBe('');
    }
    const events = await eventsAfter(from);
    for (const [command, role] of MATRIX) {
      const mine = events.filter((e) => e.action === command);
      expect({ command, outcomes: mine.map((e) => e.outcome) }).toEqual({ command, outcomes: ['refused'] });
      expect(mine[0].operator_name).toBe(below[role] ? `${below[role]}-${suffix}` : null);
      expect(mine[0].origin).toMatch(/^cli \S+@\S+$/);
    }
    const merchantsAfter = await withDb(
      process.env.DATABASE_URL!,
      async (db) => (await db.query('SELECT count(*)::int AS n FROM merchants')).rows[0].n,
    );
    expect(merchantsAfter).toBe(merchantsBefore);
    const operators = JSON.stringify(await runCli(['operator:list']));
    expect(operators).not.toContain(`nobody-${suffix}`);
    expect((await as(tokens.viewer, ['fees:show', '--merchant', shop.merchantId])).code).toBe(0);
  });

  it('each role runs its own commands and those below: allowed actions are audited attempted then ok', async () => {
    const from = await lastEventId();
    // viewer reads
    const shown = await as(tokens.viewer, ['fees:show', '--merchant', shop.merchantId]);
    expect(shown.code).toBe(0);
    // operator changes a fee plan and reads
    const set = await as(tokens.operator, [
      'fees:set',
      '--merchant',
      shop.merchantId,
      '--kind',
      'credit',
      '--brand',
      'visa',
      '--instalments',
      '1',
      '--rate',
      '2.5',
      '--fixed',
      '10',
    ]);
    expect(set.code).toBe(0);
    expect((await as(tokens.operator, ['recipient:list', '--merchant', shop.merchantId])).code).toBe(0);
    // admin creates a merchant (the event names the new merchant) and runs operator commands
    const created = await as(tokens.admin, ['merchant:create', '--name', 'made by admin']);
    expect(created.code).toBe(0);
    const newMerchant = (created.json as { merchantId: string }).merchantId;
    expect((await as(tokens.admin, ['fees:show', '--merchant', shop.merchantId])).code).toBe(0);

    const events = await eventsAfter(from);
    const pairs = (action: string) => events.filter((e) => e.action === action);
    expect(pairs('fees:show').map((e) => [e.operator_name, e.outcome])).toEqual([
      [`viewer-${suffix}`, 'attempted'],
      [`viewer-${suffix}`, 'ok'],
      [`admin-${suffix}`, 'attempted'],
      [`admin-${suffix}`, 'ok'],
    ]);
    const [attempt, ok] = pairs('fees:set');
    expect(attempt).toMatchObject({ operator_name: `operator-${suffix}`, outcome: 'attempted', target: shop.merchantId, attempt_id: null });
    expect(attempt.detail).toMatchObject({ merchant: shop.merchantId, kind: 'credit', brand: 'visa', rate: '2.5', fixed: '10' });
    expect(ok).toMatchObject({ outcome: 'ok', attempt_id: attempt.id });
    // The attempt names what the options name (the new merchant's name); the outcome the merchant made.
    expect(pairs('merchant:create').map((e) => [e.outcome, e.target])).toEqual([
      ['attempted', 'made by admin'],
      ['ok', newMerchant],
    ]);
  });

  it('a failing command is audited as failed with its error class, after its attempt', async () => {
    const from = await lastEventId();
    const r = await as(tokens.operator, ['chargeback:record', '--transaction', '00000000-0000-4000-8000-000000000000', '--amount', '100']);
    expect(r.code).toBe(1);
    const events = (await eventsAfter(from)).filter((e) => e.action === 'chargeback:record');
    expect(events.map((e) => e.outcome)).toEqual(['attempted', 'failed']);
    expect(events[1].error_class).toMatch(/^[A-Za-z]+Error$/);
    expect(events[1].attempt_id).toBe(events[0].id);
    expect(JSON.stringify(events)).not.toContain('op_');
  });

  it('a card number typed into an option never reaches the audit trail', async () => {
    const from = await lastEventId();
    const r = await as(tokens.viewer, ['fees:show', '--merchant', CANARY_CARDS.mastercard]);
    expect(r.code).toBe(1);
    const events = await eventsAfter(from);
    expect(events.length).toBeGreaterThan(0);
    expect(JSON.stringify(events)).not.toContain(CANARY_CARDS.mastercard);
    expect(events[0].target).toBe('[card-like number]');
  });

  it('an operator cannot be named with a card number: refused naming --name, nothing stored', async () => {
    for (const name of [CANARY_CARDS.visa2, CANARY_CARDS.visa2.replace(/(\d{4})(?=\d)/g, '$1-')]) {
      const r = await as(adminToken, ['operator:create', '--name', name, '--role', 'viewer']);
      expect(r.code).toBe(1);
      expect(errorOf(r)).toMatch(/--name/);
      expect(r.stdout + r.stderr).not.toContain(name);
      const n = await withDb(
        process.env.DATABASE_URL!,
        async (db) => (await db.query(`SELECT count(*)::int AS n FROM operators WHERE name = $1`, [name])).rows[0].n,
      );
      expect(n).toBe(0);
    }
  });

  it('no app process carries the admin token the suites run the CLI with', async () => {
    expect(adminToken).toMatch(/^op_/);
    const environ = readFileSync(`/proc/${consoleApp.pid}/environ`, 'utf8');
    expect(environ).toContain('DATABASE_URL=');
    expect(environ).not.toContain('GATEWAY_OPERATOR_TOKEN');
    expect(environ).not.toContain(adminToken);
  });

  it('a revoked token is refused at once, by the CLI and by /admin; the last admin cannot be revoked', async () => {
    const name = `leaver-${suffix}`;
    const token = (await runCli<{ token: string }>(['operator:create', '--name', name, '--role', 'operator'])).token;
    expect((await as(token, ['fees:show', '--merchant', shop.merchantId])).code).toBe(0);
    expect((await fetch(`${consoleApp.url}/admin/deliveries`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);

    const revoked = await runCli<{ operator: string; revokedAt: string }>(['operator:revoke', '--name', name]);
    expect(revoked.operator).toBe(name);
    const from = await lastEventId();
    const cli = await as(token, ['fees:show', '--merchant', shop.merchantId]);
    expect(cli.code).toBe(1);
    expect(errorOf(cli)).toContain(`operator ${name} was revoked`);
    const get = await fetch(`${consoleApp.url}/admin/deliveries`, { headers: { authorization: `Bearer ${token}` } });
    expect(get.status).toBe(401);
    expect(await get.json()).toEqual({ status: { code: '401', message: 'Unauthorized' } });
    const post = await fetch(`${consoleApp.url}/admin/deliveries/00000000-0000-4000-8000-000000000000/replay`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(post.status).toBe(401);
    const events = await eventsAfter(from);
    expect(events.map((e) => [e.action, e.operator_name, e.outcome, e.detail.reason])).toEqual([
      ['fees:show', name, 'refused', 'revoked operator token'],
      ['webhooks:replay', name, 'refused', 'revoked operator token'],
    ]);
    expect((await as(tokens.admin, ['operator:revoke', '--name', name])).code).toBe(1);

    // The last active admin: with every other admin revoked, revoking it is refused.
    const soloDb = await freshDatabase();
    try {
      const first = await as(undefined, ['operator:create', '--name', 'solo', '--role', 'admin'], soloDb);
      const solo = (first.json as { token: string }).token;
      const r = await as(solo, ['operator:revoke', '--name', 'solo'], soloDb);
      expect(r.code).toBe(1);
      expect(errorOf(r)).toContain('last active admin');
      expect((await as(solo, ['operator:list'], soloDb)).code).toBe(0);
    } finally {
      await dropDatabase(soloDb);
    }
  });

  describe('/admin', () => {
    const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
    const missing = '00000000-0000-4000-8000-000000000000';

    it('a viewer may read but is refused (403, wire body, audited) on a replay and on dashboard retries; an operator may', async () => {
      expect((await fetch(`${consoleApp.url}/admin/deliveries`, { headers: bearer(tokens.viewer) })).status).toBe(200);
      expect((await fetch(`${consoleApp.url}/admin/queues/api/queues`, { headers: bearer(tokens.viewer) })).status).toBe(200);
      const from = await lastEventId();

      const replay = await fetch(`${consoleApp.url}/admin/deliveries/${missing}/replay`, {
        method: 'POST',
        headers: bearer(tokens.viewer),
      });
      expect(replay.status).toBe(403);
      const body = (await replay.json()) as { status: unknown; result: { error: { code: string } } };
      expect(body.status).toEqual({ code: '403', message: 'Forbidden' });
      expect(body.result.error.code).toBe('011');
      const retry = await fetch(`${consoleApp.url}/admin/queues/api/queues/webhook.deliver/retry/failed`, {
        method: 'PUT',
        headers: bearer(tokens.viewer),
      });
      expect(retry.status).toBe(403);

      // An operator passes the role check: the unknown delivery is the handler's 404, audited as failed.
      const opReplay = await fetch(`${consoleApp.url}/admin/deliveries/${missing}/replay`, {
        method: 'POST',
        headers: bearer(tokens.operator),
      });
      expect(opReplay.status).toBe(404);
      const opRetry = await fetch(`${consoleApp.url}/admin/queues/api/queues/webhook.deliver/retry/failed`, {
        method: 'PUT',
        headers: bearer(tokens.operator),
      });
      expect(opRetry.status).toBeLessThan(400);
      // Not a retry: refused for everyone, audited.
      const pause = await fetch(`${consoleApp.url}/admin/queues/api/queues/webhook.deliver/pause`, {
        method: 'PUT',
        headers: bearer(tokens.admin),
      });
      expect(pause.status).toBe(405);
      // No token at all: 401, and not in the trail (anyone could fill it); it is in the request log.
      expect((await fetch(`${consoleApp.url}/admin/deliveries/${missing}/replay`, { method: 'POST' })).status).toBe(401);

      const events = (await eventsAfter(from)).map((e) => [e.operator_name, e.action, e.target, e.outcome, e.error_class]);
      expect(events).toEqual([
        [`viewer-${suffix}`, 'webhooks:replay', missing, 'refused', null],
        [`viewer-${suffix}`, 'queues:retry', 'webhook.deliver/failed', 'refused', null],
        [`operator-${suffix}`, 'webhooks:replay', missing, 'attempted', null],
        [`operator-${suffix}`, 'webhooks:replay', missing, 'failed', 'http_404'],
        [`operator-${suffix}`, 'queues:retry', 'webhook.deliver/failed', 'attempted', null],
        [`operator-${suffix}`, 'queues:retry', 'webhook.deliver/failed', 'ok', null],
        [`admin-${suffix}`, 'http PUT /admin/queues/api/queues/:queueName/pause', 'webhook.deliver', 'refused', null],
      ]);
      const origins = new Set((await eventsAfter(from)).map((e) => e.origin));
      expect([...origins]).toEqual(['http 127.0.0.1']);
    });

    it('hostile path parameters are refused as usual and audited without a card number: no 503 for a NUL', async () => {
      const from = await lastEventId();
      const grouped = CANARY_CARDS.visa2.replace(/(\d{4})(?=\d)/g, '$1 ');
      for (const [id, token] of [
        ['%00', tokens.viewer],
        [encodeURIComponent(grouped), tokens.viewer],
        ['%00', undefined],
      ] as const) {
        const r = await fetch(`${consoleApp.url}/admin/deliveries/${id}/replay`, { method: 'POST', headers: token ? bearer(token) : {} });
        expect(r.status).toBe(token ? 403 : 401);
      }
      const events = await eventsAfter(from);
      expect(events.map((e) => [e.operator_name, e.target, e.outcome])).toEqual([
        [`viewer-${suffix}`, '\uFFFD', 'refused'],
        [`viewer-${suffix}`, '[card-like number]', 'refused'],
        // The request with no token answered 401 (no 503) and, like every such request, is not in the trail.
      ]);
      expect(JSON.stringify(events)).not.toContain(CANARY_CARDS.visa2.slice(0, 4) + ' ');
    });

    it('GETs are not audited; every /admin request records the operator as used', async () => {
      const from = await lastEventId();
      expect((await fetch(`${consoleApp.url}/admin/deliveries`, { headers: bearer(tokens.viewer) })).status).toBe(200);
      expect(await eventsAfter(from)).toEqual([]);
      const used = await withDb(
        process.env.DATABASE_URL!,
        async (db) => (await db.query(`SELECT last_used_at FROM operators WHERE name = $1`, [`viewer-${suffix}`])).rows[0].last_used_at,
      );
      expect(used).not.toBeNull();
    });
  });

  it('the audit trail refuses UPDATE, DELETE and TRUNCATE, even to the superuser', async () => {
    await withDb(process.env.DATABASE_URL!, async (db) => {
      for (const sql of ['UPDATE audit_events SET outcome = outcome', 'DELETE FROM audit_events', 'TRUNCATE audit_events']) {
        await expect(db.query(sql)).rejects.toThrow(/audit_events is append-only/);
      }
      expect((await db.query('SELECT count(*)::int AS n FROM audit_events')).rows[0].n).toBeGreaterThan(0);
    });
  });

  it('audit:list filters by operator, action and time, newest first, with a limit', async () => {
    // The database's clock, which stamps the events.
    const since = await withDb(
      process.env.DATABASE_URL!,
      async (db) => (await db.query(`SELECT clock_timestamp() AS t`)).rows[0].t.toISOString() as string,
    );
    await as(tokens.viewer, ['recipient:list', '--merchant', shop.merchantId]);
    await as(tokens.operator, ['recipient:list', '--merchant', shop.merchantId]);
    type Listed = { id: string; operator: string | null; action: string; outcome: string; at: string };
    const byAction = await runCli<Listed[]>(['audit:list', '--since', since, '--action', 'recipient:list']);
    expect(byAction.map((e) => [e.operator, e.outcome])).toEqual([
      [`operator-${suffix}`, 'ok'],
      [`operator-${suffix}`, 'attempted'],
      [`viewer-${suffix}`, 'ok'],
      [`viewer-${suffix}`, 'attempted'],
    ]);
    const byOperator = await runCli<Listed[]>(['audit:list', '--since', since, '--operator', `viewer-${suffix}`]);
    expect(byOperator.every((e) => e.operator === `viewer-${suffix}`)).toBe(true);
    expect(byOperator.map((e) => e.action)).toEqual(['recipient:list', 'recipient:list']);
    const limited = await runCli<Listed[]>(['audit:list', '--limit', '2']);
    expect(limited).toHaveLength(2);
    expect(Number(limited[0].id)).toBeGreaterThan(Number(limited[1].id));
    expect(
      (await runCli<Listed[]>(['audit:list', '--since', new Date(Date.now() + 60_000).toISOString()])).filter(
        (e) => e.action !== 'audit:list',
      ),
    ).toEqual([]);
    const bad = await as(adminToken, ['audit:list', '--since', 'yesterday']);
    expect(bad.code).toBe(1);
    expect(errorOf(bad)).toContain('--since');
  });

  describe('on an empty database', () => {
    let url: string;
    beforeAll(async () => {
      url = await freshDatabase();
    });
    afterAll(async () => {
      await dropDatabase(url);
    });

    it('bootstraps exactly one first admin without a token, then never again', async () => {
      const viewerFirst = await as(undefined, ['operator:create', '--name', 'early', '--role', 'viewer'], url);
      expect(viewerFirst.code).toBe(1);
      expect(errorOf(viewerFirst)).toContain('--role admin');
      // Two racing bootstraps: one admin.
      const [a, b] = await Promise.all(
        ['first-a', 'first-b'].map((n) => as(undefined, ['operator:create', '--name', n, '--role', 'admin'], url)),
      );
      expect([a.code, b.code].sort()).toEqual([0, 1]);
      const again = await as(undefined, ['operator:create', '--name', 'second', '--role', 'admin'], url);
      expect(again.code).toBe(1);
      expect((await as(undefined, ['merchant:create', '--name', 'x'], url)).code).toBe(1);
      const admins = await withDb(url, async (db) => (await db.query(`SELECT name, created_by FROM operators`)).rows);
      expect(admins).toHaveLength(1);
      expect(admins[0].created_by).toBeNull();

      const events = await eventsAfter('0', url);
      const ok = events.filter((e) => e.outcome === 'ok');
      expect(ok).toHaveLength(1);
      expect(ok[0]).toMatchObject({ action: 'operator:create', operator_name: null, target: admins[0].name });
      expect(ok[0].detail).toMatchObject({ bootstrap: true, role: 'admin' });
      expect(events.filter((e) => e.outcome === 'refused').length).toBeGreaterThanOrEqual(3);
    });

    it('when the audit trail cannot be written the command fails: before acting (nothing done) or after (attempt recorded)', async () => {
      // An admin of this database's own, with a token this test knows.
      const adminToken2 = `op_${randomBytes(32).toString('base64url')}`;
      await withDb(url, (db) =>
        db.query(`INSERT INTO operators (id, name, role, token_hash) VALUES (gen_random_uuid(), 'hand-made', 'admin', sha256($1::bytea))`, [
          Buffer.from(adminToken2),
        ]),
      );

      await withDb(url, (db) =>
        db.query(`CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit store full'; END $$`),
      );
      try {
        await withDb(url, (db) =>
          db.query(
            `CREATE TRIGGER refuse_attempts BEFORE INSERT ON audit_events FOR EACH ROW WHEN (NEW.outcome = 'attempted') EXECUTE FUNCTION refuse_audit()`,
          ),
        );
        const before = await as(adminToken2, ['merchant:create', '--name', 'unrecorded'], url);
        expect(before.code).toBe(1);
        expect(errorOf(before)).toContain('audit trail could not record merchant:create');
        expect(await withDb(url, async (db) => (await db.query(`SELECT count(*)::int AS n FROM merchants`)).rows[0].n)).toBe(0);
        await withDb(url, (db) => db.query(`DROP TRIGGER refuse_attempts ON audit_events`));

        await withDb(url, (db) =>
          db.query(
            `CREATE TRIGGER refuse_outcomes BEFORE INSERT ON audit_events FOR EACH ROW WHEN (NEW.outcome = 'ok') EXECUTE FUNCTION refuse_audit()`,
          ),
        );
        const after = await as(adminToken2, ['merchant:create', '--name', 'half-recorded'], url);
        expect(after.code).toBe(1);
        expect(errorOf(after)).toContain('audit trail could not record merchant:create (ok)');
        const attempts = await withDb(
          url,
          async (db) =>
            (await db.query(`SELECT outcome FROM audit_events WHERE action = 'merchant:create' AND operator_name = 'hand-made'`)).rows,
        );
        expect(attempts).toEqual([{ outcome: 'attempted' }]);
      } finally {
        await withDb(url, (db) =>
          db.query(
            `DROP TRIGGER IF EXISTS refuse_attempts ON audit_events; DROP TRIGGER IF EXISTS refuse_outcomes ON audit_events; DROP FUNCTION refuse_audit()`,
          ),
        );
      }
    });
  });
});
