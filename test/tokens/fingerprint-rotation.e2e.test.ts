import { spawn } from 'node:child_process';
import { Client } from 'pg';
import { generateKeySpec } from '@app/vault/keyring';
import { createMerchant, MerchantCredentials, post, runCli, startStack, Stack } from '../support/stack';
import { luhnComplete as luhn } from '../fixtures/cards';

jest.setTimeout(240_000);

interface Result {
  fingerprintKid: string;
  refingerprinted: number;
  twins: number;
  unreadable: number;
  remaining: number;
  rowsByKid: Record<string, number>;
}

/**
 * Rotating FINGERPRINT_KEYS online: cards vaulted under key A keep their tokens while B is
 * active (dedup looks under every kid), `vault:refingerprint` moves them to B in committed
 * batches (resumable, safe beside tokenizations of the same cards), and then A can go.
 */
describe('fingerprint key rotation', () => {
  let stack: Stack;
  let db: Client;
  let shop: MerchantCredentials;
  const specA = process.env.FINGERPRINT_KEYS as string;
  const kidA = specA.split(':')[0];
  const kidB = `fb${Date.now().toString(36)}`;
  const specB = generateKeySpec(kidB);
  const rotating = `${specA},${specB}`;
  // Its own card range: other suites' bulk cards start with 4929.
  const cards = Array.from({ length: 60 }, (_, i) => luhn(`4556${String(i).padStart(11, '0')}`));
  const tokens = new Map<string, string>();

  const add = async (m: MerchantCredentials, cardNumber: string): Promise<string> => {
    const res = await post(stack.baseUrl, '/v1/token/add', {
      'transaction-request': {
        version: '1.0.0',
        verification: m,
        tokencard: { cardNumber, cardHolder: 'ROTATION', cardExpirationDate: '203104' },
      },
    });
    expect(res.status).toBe(200);
    return res.json.TokenCard as string;
  };
  const addAll = (m: MerchantCredentials, list: string[]) => Promise.all(list.map((c) => add(m, c)));
  const rowsOf = async (m: MerchantCredentials) =>
    (
      await db.query<{ kid: string; n: number }>(
        `SELECT split_part(fingerprint, '.', 1) AS kid, count(*)::int AS n FROM vault.token_cards WHERE merchant_id = $1 GROUP BY 1 ORDER BY 1`,
        [m.internalId],
      )
    ).rows;
  const refingerprint = (args: string[], keys: string) => runCli<Result>(['vault:refingerprint', ...args], { FINGERPRINT_KEYS: keys });

  beforeAll(async () => {
    stack = await startStack();
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    shop = await createMerchant('fingerprint rotation shop');
    const first = await addAll(shop, cards);
    cards.forEach((c, i) => tokens.set(c, first[i]));
    expect(new Set(first).size).toBe(cards.length);
    expect(await rowsOf(shop)).toEqual([{ kid: kidA, n: cards.length }]);
  });

  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  it('keeps every token while B is active, moves all rows to B resumably and beside live tokenizations, then works without A', async () => {
    await stack.restart('tokenizer', 'SIGTERM', { FINGERPRINT_KEYS: rotating });
    // Dedup holds across the rotation: same tokens, nothing new written.
    expect(await addAll(shop, cards)).toEqual(cards.map((c) => tokens.get(c)));
    const fresh = luhn('455699999999999');
    tokens.set(fresh, await add(shop, fresh));
    expect(await rowsOf(shop)).toEqual(
      [
        { kid: kidA, n: cards.length },
        { kid: kidB, n: 1 },
      ].sort((a, b) => a.kid.localeCompare(b.kid)),
    );

    // Interrupted: two batches of 10, then the run stops. The pass covers the whole vault, where
    // earlier suites of the run may have left cards too: 20 rows move off A, some of them this shop's.
    const underA = async () =>
      (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM vault.token_cards WHERE split_part(fingerprint, '.', 1) = $1`, [kidA]))
        .rows[0].n;
    const beforeA = await underA();
    const partial = await refingerprint(['--batch-size', '10', '--max-batches', '2'], rotating);
    expect(partial).toMatchObject({ fingerprintKid: kidB, refingerprinted: 20, twins: 0, unreadable: 0 });
    expect(partial.remaining).toBeGreaterThanOrEqual(cards.length - 20);
    expect(await underA()).toBe(beforeA - 20);
    const shopUnderA = (await rowsOf(shop)).find((r) => r.kid === kidA)?.n ?? 0;
    expect(shopUnderA).toBeGreaterThanOrEqual(cards.length - 20);
    expect(shopUnderA).toBeLessThanOrEqual(cards.length);
    // Half-way, dedup still holds for moved and unmoved cards alike.
    expect(await addAll(shop, cards)).toEqual(cards.map((c) => tokens.get(c)));

    // The rest, in small batches, while the same cards are tokenized again and again.
    const child = spawn(process.execPath, ['dist/apps/cli/src/main.js', 'vault:refingerprint', '--batch-size', '2', '--pause-ms', '40'], {
      env: { ...process.env, FINGERPRINT_KEYS: rotating },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run = { code: null as number | null, stdout: '', stderr: '', json: undefined as Result | undefined };
    child.stdout.on('data', (d: Buffer) => (run.stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (run.stderr += d.toString()));
    let exited = false;
    const exit = new Promise<void>((resolve) => child.on('exit', (code) => ((run.code = code), (exited = true), resolve())));
    let roundsDuringPass = 0;
    while (!exited) {
      const started = run.stderr.includes('"event":"progress"');
      expect(await addAll(shop, [...cards, fresh])).toEqual([...cards, fresh].map((c) => tokens.get(c)));
      if (started && !exited) roundsDuringPass++;
    }
    await exit;
    run.json = JSON.parse(run.stdout.trim().split('\n').pop()!) as Result;
    // Tokenizations really overlapped the pass's batches.
    expect(roundsDuringPass).toBeGreaterThan(0);
    expect(run.code).toBe(0);
    expect(run.json).toMatchObject({ fingerprintKid: kidB, twins: 0, unreadable: 0, remaining: 0 });
    expect(run.json.rowsByKid[kidA]).toBeUndefined();
    expect(run.json.refingerprinted).toBe(partial.remaining);
    expect(run.stderr).toContain('"event":"progress"');
    // The pass handled every clear number and wrote none of them anywhere it reports to.
    for (const c of cards) expect(run.stdout + run.stderr).not.toContain(c);
    expect(await rowsOf(shop)).toEqual([{ kid: kidB, n: cards.length + 1 }]);

    // Nothing left: running again is a no-op that says so.
    expect(await refingerprint([], rotating)).toMatchObject({ refingerprinted: 0, remaining: 0 });

    // Key A removed: the same cards still give the same tokens.
    await stack.restart('tokenizer', 'SIGTERM', { FINGERPRINT_KEYS: specB });
    expect(await addAll(shop, [...cards, fresh])).toEqual([...cards, fresh].map((c) => tokens.get(c)));
    expect(await rowsOf(shop)).toEqual([{ kid: kidB, n: cards.length + 1 }]);
  });

  it('leaves a second token made by a tokenizer without the old key in place instead of failing', async () => {
    // Precondition of the test above: tokenizer on B alone.
    const other = await createMerchant('fingerprint twin shop');
    const card = luhn('455688888888888');
    const underB = await add(other, card);
    const kidC = `fc${Date.now().toString(36)}`;
    const specC = generateKeySpec(kidC);
    // Misconfigured: C active without B, so the card is not found and a second token is made.
    await stack.restart('tokenizer', 'SIGTERM', { FINGERPRINT_KEYS: specC });
    const underC = await add(other, card);
    expect(underC).not.toBe(underB);

    const result = await refingerprint(['--batch-size', '50'], `${specB},${specC}`);
    expect(result).toMatchObject({ fingerprintKid: kidC, twins: 1, unreadable: 0, remaining: 1 });
    expect(await rowsOf(other)).toEqual([
      { kid: kidB, n: 1 },
      { kid: kidC, n: 1 },
    ]);
    expect(result.rowsByKid[kidB]).toBe(1);
    // Both tokens stay usable; the one under the active key is what dedup returns.
    await stack.restart('tokenizer', 'SIGTERM', { FINGERPRINT_KEYS: `${specB},${specC}` });
    expect(await add(other, card)).toBe(underC);
  });
});
