import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client } from 'pg';
import { generateKeySpec, parseKeyring } from '@app/vault/keyring';
import { decryptRecord } from '@app/vault/records';
import { createMerchant, post, runCli, startStack, Stack } from '../support/stack';
import { BULK_CARD_COUNT, bulkCards } from '../fixtures/cards';

jest.setTimeout(180_000);

interface VaultRow {
  token: string;
  merchant_id: string;
  kek_id: string;
  wrapped_key: Buffer;
  ciphertext: Buffer;
}

/**
 * Key rotation runs online against a live vault: every record must still decrypt to the same
 * card afterwards, and a rotation killed halfway must finish when run again.
 */
describe('vault key rotation', () => {
  let stack: Stack;
  let db: Client;
  const oldSpec = process.env.VAULT_KEKS as string;
  const newKid = `k${Date.now().toString(36)}`;
  const rotatedSpec = `${oldSpec},${generateKeySpec(newKid)}`;

  beforeAll(async () => {
    stack = await startStack();
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    const m = await createMerchant('rotation shop');
    const cards = bulkCards(BULK_CARD_COUNT);
    for (let i = 0; i < cards.length; i += 40) {
      const batch = cards.slice(i, i + 40).map((cardNumber) =>
        post(stack.baseUrl, '/v1/token/add', {
          'transaction-request': {
            version: '1.0.0',
            verification: m,
            tokencard: { cardNumber, cardHolder: 'BULK', cardExpirationDate: '203005' },
          },
        }),
      );
      for (const res of await Promise.all(batch)) expect(res.status).toBe(200);
    }
  });

  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  });

  const rows = async (): Promise<VaultRow[]> =>
    (await db.query<VaultRow>('SELECT token, merchant_id, kek_id, wrapped_key, ciphertext FROM vault.token_cards ORDER BY token')).rows;

  const decryptAll = (all: VaultRow[], spec: string) => {
    const kek = parseKeyring(spec, 'VAULT_KEKS');
    return all.map((r) =>
      decryptRecord(
        kek,
        { kekId: r.kek_id, wrappedKey: r.wrapped_key, ciphertext: r.ciphertext },
        { merchantId: r.merchant_id, token: r.token },
      ).toString('hex'),
    );
  };

  /** Vault rows whose facts the api would not find as they are (missing, or different). */
  const withoutFacts = async (): Promise<string[]> =>
    (
      await db.query<{ token: string }>(
        `SELECT t.token FROM vault.token_cards t LEFT JOIN token_facts f ON f.token = t.token AND f.merchant_id = t.merchant_id
           AND f.masked = t.masked AND f.brand = t.brand AND f.holder = t.holder AND f.exp_year = t.exp_year
           AND f.exp_month = t.exp_month AND f.billing IS NOT DISTINCT FROM t.billing AND f.created_at = t.created_at
         WHERE f.token IS NULL`,
      )
    ).rows.map((r) => r.token);

  it('re-wraps every record, survives a crash halfway, and decrypts to identical cards', async () => {
    const before = await rows();
    expect(await withoutFacts()).toEqual([]);
    expect(before.length).toBeGreaterThanOrEqual(BULK_CARD_COUNT);
    const clearBefore = decryptAll(before, oldSpec);

    // First run: killed (SIGKILL, no cleanup) right after its first committed batch.
    const child = spawn(process.execPath, ['dist/apps/cli/src/main.js', 'vault:rotate-key', '--batch-size', '10'], {
      env: { ...process.env, VAULT_KEKS: rotatedSpec },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ? null : code)));
    for await (const line of createInterface({ input: child.stderr })) {
      if (line.includes('"event":"progress"')) {
        child.kill('SIGKILL');
        break;
      }
    }
    expect(await exited).toBeNull();
    const halfway = await rows();
    const moved = halfway.filter((r) => r.kek_id === newKid).length;
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThan(halfway.length);

    // Second run resumes and finishes.
    const result = await runCli(['vault:rotate-key', '--batch-size', '50'], { VAULT_KEKS: rotatedSpec });
    expect(result).toMatchObject({ kekId: newKid, remaining: 0 });
    expect(Number(result.rewrapped)).toBe(halfway.length - moved);

    const after = await rows();
    expect(after.every((r) => r.kek_id === newKid)).toBe(true);
    // The old key is no longer needed, and every card decrypts exactly as before.
    expect(decryptAll(after, `${generateKeySpec('unused')},${rotatedSpec.split(',').pop()}`)).toEqual(clearBefore);
    expect(after.map((r) => r.ciphertext.toString('hex'))).toEqual(before.map((r) => r.ciphertext.toString('hex')));
    // What the api reads of each token is untouched by the rotation and still matches the vault.
    expect(await withoutFacts()).toEqual([]);
  });

  it('refuses to rotate when nothing is left to move to the active key', async () => {
    await expect(runCli(['vault:rotate-key'], { VAULT_KEKS: rotatedSpec })).rejects.toThrow(/already wrapped/);
  });
});
