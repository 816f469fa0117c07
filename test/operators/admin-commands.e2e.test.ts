import { existsSync, readFileSync } from 'node:fs';
import { Client } from 'pg';
import { REMOTE_COMMANDS } from '@app/contracts';
import { runCliRaw, Stack, startStack } from '../support/stack';

jest.setTimeout(180_000);

/** A database nobody listens on: what the operator's machine knows of the database now (nothing). */
const NO_DATABASE = 'postgres://nobody@127.0.0.1:1/none';

/**
 * Issue 32, finding 1: the operator commands run on the admin app, where the role check and the
 * audit trail happen in a process the operator does not control, as the operator role that only
 * the admin app holds. The CLI needs an operator token and GATEWAY_ADMIN_URL, no database login.
 */
describe('operator commands on the admin app', () => {
  let stack: Stack;
  let adminUrl: string;
  let shopId: string;
  const adminToken = () => process.env.GATEWAY_OPERATOR_TOKEN!;
  /** The CLI as an operator's machine runs it now: the admin app's URL, a token, no database. */
  const remote = <T = Record<string, unknown>>(args: string[], token = adminToken()) =>
    runCliRaw<T>(args, { GATEWAY_ADMIN_URL: adminUrl, GATEWAY_OPERATOR_TOKEN: token, DATABASE_URL: NO_DATABASE });
  const post = (name: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${adminUrl}/admin/commands/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken()}`, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const auditSince = async (id: number) => {
    const db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      return (
        await db.query<{ action: string; outcome: string; origin: string; operator_name: string | null; target: string | null }>(
          'SELECT action, outcome, origin, operator_name, target FROM audit_events WHERE id > $1 ORDER BY id',
          [id],
        )
      ).rows;
    } finally {
      await db.end();
    }
  };
  const lastAuditId = async () => {
    const db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      return Number((await db.query<{ id: string }>('SELECT coalesce(max(id), 0) AS id FROM audit_events')).rows[0].id);
    } finally {
      await db.end();
    }
  };

  beforeAll(async () => {
    stack = await startStack({}, { withAdmin: true, envFor: { admin: { ADMIN_MAX_COMMANDS: '2' } } });
    adminUrl = stack.adminUrl!;
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('runs a command for a token alone, and audits it with the admin app and the caller as its origin', async () => {
    const from = await lastAuditId();
    const created = await remote<{ merchantId: string; merchantKey: string }>(['merchant:create', '--name', 'remote shop']);
    expect(created.code).toBe(0);
    expect(created.json?.merchantId).toMatch(/^\d{10}$/);
    shopId = created.json!.merchantId;
    const events = await auditSince(from);
    expect(events.map((e) => [e.action, e.outcome, e.operator_name])).toEqual([
      ['merchant:create', 'attempted', 'test-admin'],
      ['merchant:create', 'ok', 'test-admin'],
    ]);
    expect(events[1].origin).toMatch(/^admin app for cli \S+@\S+ from 127\.0\.0\.1$/);
  });

  it("refuses a viewer's change on the server, audited, and lets it read", async () => {
    const viewer = await remote<{ token: string }>(['operator:create', '--name', `remote-viewer-${Date.now()}`, '--role', 'viewer']);
    // stderr first: when the command fails, the failure says why.
    expect(viewer.stderr).toBe('');
    expect(viewer.code).toBe(0);
    const from = await lastAuditId();
    const refused = await remote(['merchant:create', '--name', 'not for a viewer'], viewer.json!.token);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/\(viewer\) may not run merchant:create: it needs the admin role/);
    const read = await remote<unknown[]>(['recipient:list', '--merchant', shopId], viewer.json!.token);
    expect(read.stderr).toBe('');
    expect(read.code).toBe(0);
    expect(Array.isArray(read.json)).toBe(true);
    const events = await auditSince(from);
    expect(events.filter((e) => e.action === 'merchant:create').map((e) => e.outcome)).toEqual(['refused']);
  });

  it('answers 401 without a well-formed token, and an unknown token is refused and audited by the command gate', async () => {
    expect((await post('operator:list', { args: [] }, { authorization: '' })).status).toBe(401);
    expect((await post('operator:list', { args: [] }, { authorization: 'Bearer nope' })).status).toBe(401);
    const from = await lastAuditId();
    const unknown = await remote(['operator:list'], `op_${'A'.repeat(43)}`);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/not an operator token/);
    expect((await auditSince(from)).map((e) => [e.action, e.outcome])).toEqual([['operator:list', 'refused']]);
  });

  it('never runs a break-glass command, and names what it runs', async () => {
    const glass = await post('vault:rotate-key', { args: [] });
    expect(glass.status).toBe(400);
    expect(((await glass.json()) as { error: string }).error).toMatch(/break-glass/);
    expect((await post('no:such-command', { args: [] })).status).toBe(404);
    const list = (await (await fetch(`${adminUrl}/admin/commands`)).json()) as { commands: string[] };
    expect(list.commands).toEqual([...REMOTE_COMMANDS]);
    expect(list.commands).not.toContain('vault:rotate-key');
  });

  it.each([
    ['a body without args', {}],
    ['args that is not an array', { args: 'operator:list' }],
    ['a number among the args', { args: [1] }],
    ['a NUL in an argument', { args: ['--name', 'a\u0000b'] }],
    ['a control character in an argument', { args: ['--name', 'a\u001bb'] }],
    ['65 arguments', { args: Array.from({ length: 65 }, () => 'x') }],
    ['an argument of 4097 characters', { args: ['x'.repeat(4097)] }],
    ['broken JSON', '{"args": ['],
  ])('answers 400 naming the problem for %s, and runs nothing', async (_what, body) => {
    const from = await lastAuditId();
    const res = await post('merchant:create', body);
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toMatch(/args|JSON|json|body/i);
    expect(await auditSince(from)).toEqual([]);
  });

  it('runs at most ADMIN_MAX_COMMANDS at once: one more is a 429 with Retry-After', async () => {
    const answers = await Promise.all(Array.from({ length: 3 }, () => post('operator:list', { args: [] })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 200, 429]);
    expect(answers.find((a) => a.status === 429)!.headers.get('retry-after')).toBe('5');
    // Once they are done, a command runs again.
    expect((await post('operator:list', { args: [] })).status).toBe(200);
  });

  it('passes arguments as a vector, never through a shell', async () => {
    const name = `shop $(touch /tmp/admin-app-shell-${process.pid}); \`id\` | cat`;
    const created = await remote<{ merchantId: string }>(['merchant:create', '--name', name]);
    expect(created.code).toBe(0);
    const db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      const rows = await db.query<{ name: string }>('SELECT name FROM merchants WHERE public_id = $1', [created.json!.merchantId]);
      expect(rows.rows).toEqual([{ name }]);
    } finally {
      await db.end();
    }
    expect(existsSync(`/tmp/admin-app-shell-${process.pid}`)).toBe(false);
  });

  it("gives a person's read-only login (gateway_viewer) reads, and no way to forge an admin or take over a key", async () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.username = 'gateway_viewer';
    url.password = '';
    const db = new Client({ connectionString: url.toString() });
    await db.connect();
    try {
      expect((await db.query('SELECT name FROM merchants WHERE public_id = $1', [shopId])).rows).toEqual([{ name: 'remote shop' }]);
      expect((await db.query('SELECT count(*)::int AS n FROM audit_events')).rows[0].n).toBeGreaterThan(0);
      const refused = async (sql: string, params: unknown[] = []) => {
        await db.query('SAVEPOINT probe');
        const e = await db.query(sql, params).then(
          () => undefined,
          (err: { code?: string }) => err,
        );
        await db.query('ROLLBACK TO SAVEPOINT probe');
        return e?.code;
      };
      await db.query('BEGIN');
      // The forgery: an admin of one's own making, then another merchant's key set to one's own.
      expect(
        await refused(`INSERT INTO operators (id, name, role, token_hash) VALUES (gen_random_uuid(), 'forged', 'admin', $1)`, [
          Buffer.alloc(32, 7),
        ]),
      ).toBe('42501');
      expect(await refused(`UPDATE merchants SET key_hash = $1 WHERE public_id = $2`, [Buffer.alloc(32, 7), shopId])).toBe('42501');
      expect(await refused(`UPDATE merchants SET rate_limit_writes_per_s = 1`)).toBe('42501');
      expect(await refused(`DELETE FROM deliveries`)).toBe('42501');
      expect(await refused(`INSERT INTO audit_events (action, origin, outcome) VALUES ('x', 'y', 'ok')`)).toBe('42501');
      // Nor a secret to read.
      expect(await refused('SELECT key_hash FROM merchants')).toBe('42501');
      expect(await refused('SELECT webhook_secret_sealed FROM merchants')).toBe('42501');
      expect(await refused('SELECT token_hash FROM operators')).toBe('42501');
      expect(await refused('SELECT count(*) FROM vault.token_cards')).toBe('42501');
      await db.query('ROLLBACK');
    } finally {
      await db.end();
    }
  });

  it('keeps no operator token in its own environment', () => {
    const environ = readFileSync(`/proc/${stack.apps.admin.pid}/environ`, 'utf8');
    // The operator role is the admin app's login (the break-glass passes have one of their own).
    expect(environ).toMatch(/(^|\0)DATABASE_URL=postgres:\/\/gateway_operator@/);
    expect(environ).not.toContain('GATEWAY_OPERATOR_TOKEN');
    expect(environ).not.toContain(adminToken());
  });
});
