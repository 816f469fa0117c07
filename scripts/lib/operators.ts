import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { roleUrl } from './database';
import { cliEntry, lastJsonLine, runNode } from './processes';

export interface IssuedOperator {
  operator: string;
  role: string;
  token: string;
}

/**
 * The first admin of a fresh database (operator:create's bootstrap, which works only while no
 * active admin exists), for the quick start, the tests and the bench: every later CLI call runs
 * with its token as GATEWAY_OPERATOR_TOKEN.
 */
export async function bootstrapAdmin(root: string, env: NodeJS.ProcessEnv, name: string): Promise<IssuedOperator> {
  const { GATEWAY_OPERATOR_TOKEN: _ignored, ...withoutToken } = env;
  // As every CLI call: the operator's database role (env's DATABASE_URL is the tables' owner).
  const asOperator = { ...withoutToken, DATABASE_URL: roleUrl(env.DATABASE_URL!, 'cli', env) };
  const r = await runNode(cliEntry(root), ['operator:create', '--name', name, '--role', 'admin'], { cwd: root, env: asOperator, timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`creating the first admin (${name}) failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
  return lastJsonLine<IssuedOperator>(r.stdout);
}

/** Whether a saved operator token is still an active operator's (undefined: the database could not tell). */
export async function operatorTokenActive(databaseUrl: string, token: string): Promise<boolean | undefined> {
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    // As operatorTokenHash (libs/persistence), which this file cannot import: the test run's global
    // setup loads it without the @app aliases.
    const hash = createHash('sha256').update(token).digest();
    const { rowCount } = await client.query('SELECT 1 FROM operators WHERE token_hash = $1 AND revoked_at IS NULL', [hash]);
    return rowCount === 1;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * An app's environment without the operator token: the quick start, the tests and the bench hold
 * an admin's token for their CLI calls, and no app reads it, so an app process (its
 * /proc/<pid>/environ, a crash report, a compromise) must not carry an admin credential.
 */
export function withoutOperatorToken(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { GATEWAY_OPERATOR_TOKEN: _token, ...rest } = env;
  return rest;
}
