import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { runOperatorCli, withoutOperatorToken } from './launcher';

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
  // Without a token: the bootstrap is what issues the first one.
  const r = await runOperatorCli<IssuedOperator>(root, ['operator:create', '--name', name, '--role', 'admin'], withoutOperatorToken(env));
  if (r.code !== 0 || r.json === undefined)
    throw new Error(`creating the first admin (${name}) failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
  return r.json;
}

/** Whether a saved operator token is still an active operator's (undefined: the database could not tell). */
export async function operatorTokenActive(databaseUrl: string, token: string): Promise<boolean | undefined> {
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    // As operatorTokenHash (libs/operators), which this file cannot import: the test run's global
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
