import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { scanKeys } from '@app/platform';
import { Client } from 'pg';
import { allCanaryNumbers, allCanaryTexts, CANARY_CODES } from '../fixtures/cards';
import { testRedis } from '../support/redis';

/**
 * DESIGN.md security invariant 1, checked after every other suite ran (the sequencer runs this
 * file last): no card number or security code the tests sent is anywhere in Postgres, Redis
 * (every key, queue data included) or the apps' logs.
 */
jest.setTimeout(120_000);

const numbers = allCanaryNumbers();
// A security code is short: look for it only as a standalone value, not inside hex or base64.
const codePatterns = CANARY_CODES.map((c) => new RegExp(`(?<![0-9A-Za-z+/=_-])${c}(?![0-9A-Za-z+/=_-])`));

// Cardholder and billing text the log-leak suite planted in a failing insert (case-insensitive).
const texts = allCanaryTexts().map((t) => t.toLowerCase());

function leaks(haystack: string): string[] {
  const found = numbers.filter((n) => haystack.includes(n)).map((n) => `card number ${n.slice(0, 6)}…`);
  const lower = texts.length ? haystack.toLowerCase() : '';
  for (const t of texts) if (lower.includes(t)) found.push(`planted text "${t.slice(0, 12)}…"`);
  for (const [i, re] of codePatterns.entries()) if (re.test(haystack)) found.push(`security code ${CANARY_CODES[i]}`);
  return found;
}

/**
 * The sequencer runs this suite last, but with several jest workers another worker may still be
 * running a suite: wait (test/support/active-suites-reporter.js lists them) until none is left.
 */
async function otherSuitesDone(timeoutMs: number): Promise<void> {
  const dir = process.env.TEST_ACTIVE_DIR;
  if (!dir) return;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const others = existsSync(dir)
      ? readdirSync(dir)
          .map((f) => readFileSync(join(dir, f), 'utf8'))
          .filter((path) => path !== __filename)
      : [];
    if (!others.length) return;
    if (Date.now() > deadline) throw new Error(`suites still running after ${timeoutMs / 1000} s: ${others.join(', ')}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Every lane's database (one per jest worker), or the run's one. */
const databases = (): string[] =>
  process.env.TEST_LANE_DATABASES ? (JSON.parse(process.env.TEST_LANE_DATABASES) as string[]) : [process.env.DATABASE_URL as string];

describe('canary scan: no clear card data at rest', () => {
  beforeAll(() => otherSuitesDone(45 * 60_000), 46 * 60_000);

  it('finds no test card number or security code in any Postgres table (every lane)', async () => {
    let rows = 0;
    for (const url of databases()) {
      const db = new Client({ connectionString: url });
      await db.connect();
      try {
        const tables = await db.query<{ schema: string; name: string }>(
          `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
           WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
        );
        expect(tables.rows.map((t) => `${t.schema}.${t.name}`)).toEqual(expect.arrayContaining(['vault.token_cards', 'public.merchants']));
        for (const t of tables.rows) {
          const dump = await db.query<{ row: string }>(`SELECT t::text AS row FROM "${t.schema}"."${t.name}" t`);
          rows += dump.rowCount ?? 0;
          const table = `${new URL(url).pathname.slice(1)} ${t.schema}.${t.name}`;
          expect({ table, leaks: leaks(dump.rows.map((r) => r.row).join('\n')) }).toEqual({ table, leaks: [] });
        }
      } finally {
        await db.end();
      }
    }
    // The scan must have had something to scan: the suites before it vaulted cards.
    expect(rows).toBeGreaterThan(100);
  });

  it('finds none in any Redis key, queue data included (every master of a cluster)', async () => {
    const connection = testRedis();
    try {
      const keys: string[] = [];
      const found: string[] = [];
      // Each key is read on the server that holds it.
      for await (const { node: redis, keys: batch } of scanKeys(connection)) {
        keys.push(...batch);
        for (const key of batch) {
          const type = await redis.type(key);
          let content: unknown;
          if (type === 'string') content = await redis.getBuffer(key);
          else if (type === 'hash') content = await redis.hgetall(key);
          else if (type === 'list') content = await redis.lrange(key, 0, -1);
          else if (type === 'set') content = await redis.smembers(key);
          else if (type === 'zset') content = await redis.zrange(key, 0, -1, 'WITHSCORES');
          else if (type === 'stream') content = await redis.xrange(key, '-', '+');
          const text = Buffer.isBuffer(content) ? content.toString('latin1') : JSON.stringify(content);
          for (const l of leaks(`${key}\n${text}`)) found.push(`${key}: ${l}`);
        }
      }
      const prefix = (process.env.TEST_RUN_QUEUE_PREFIX ?? process.env.QUEUE_PREFIX) as string;
      expect(keys.some((k) => k.startsWith(prefix))).toBe(true);
      expect(found).toEqual([]);
    } finally {
      connection.disconnect();
    }
  });

  it('finds none in the captured logs', () => {
    const dir = process.env.TEST_LOG_DIR as string;
    expect(existsSync(dir)).toBe(true);
    const files = readdirSync(dir)
      .map((f) => join(dir, f))
      .filter((f) => statSync(f).isFile());
    expect(files.length).toBeGreaterThan(0);
    const found: string[] = [];
    for (const f of files) for (const l of leaks(readFileSync(f, 'utf8'))) found.push(`${f}: ${l}`);
    expect(found).toEqual([]);
  });
});
