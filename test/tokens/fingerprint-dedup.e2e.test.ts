import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '@app/persistence';
import { NewTokenCard, TokenCardsRepository } from '@app/vault-store';

jest.setTimeout(60_000);

/**
 * The tokenizer's dedup statement against the re-fingerprinting pass, with the interleavings
 * forced rather than hoped for: the pass holding a row it has moved but not committed, and many
 * adds of one new card at once while the ring holds two keys.
 */
describe('dedup across fingerprint kids', () => {
  let db: DataSource;
  let repo: TokenCardsRepository;
  /** Another tokenizer replica: its own batches, racing the first's. */
  let second: TokenCardsRepository;
  // The rows here hold no real record: they go when the suite ends, so that no later suite's pass
  // or rotation meets them.
  const merchants: string[] = [];
  const newMerchant = () => {
    const id = randomUUID();
    merchants.push(id);
    return id;
  };
  const fp = (kid: string) => `${kid}.${randomBytes(32).toString('base64url')}`;
  const card = (merchantId: string, fingerprint: string, knownFingerprints: string[]): NewTokenCard => ({
    token: randomBytes(32).toString('hex'),
    merchantId,
    fingerprint,
    knownFingerprints,
    expYear: 2031,
    expMonth: 4,
    masked: '455600******0000',
    brand: 'visa',
    holder: 'RACE',
    billing: null,
    kekId: 'k1',
    wrappedKey: randomBytes(60),
    ciphertext: randomBytes(80),
  });
  const rowsOf = async (merchantId: string) =>
    db.query<{ token: string; fingerprint: string }[]>(`SELECT token, fingerprint FROM vault.token_cards WHERE merchant_id = $1`, [
      merchantId,
    ]);

  beforeAll(async () => {
    db = await new DataSource(dataSourceOptions(process.env.DATABASE_URL!, 24)).initialize();
    repo = new TokenCardsRepository(db);
    second = new TokenCardsRepository(db);
  });

  afterAll(async () => {
    await db?.query(`DELETE FROM vault.token_cards WHERE merchant_id = ANY($1::uuid[])`, [merchants]);
    await db?.destroy();
  });

  it('finds the card while a pass holds it moved but uncommitted, and after it commits, without a second row', async () => {
    const merchant = newMerchant();
    const [oldFp, newFp] = [fp('fa'), fp('fb')];
    const stored = await repo.insertOrFindDuplicate(card(merchant, oldFp, [oldFp]));

    const pass = db.createQueryRunner();
    await pass.connect();
    await pass.startTransaction();
    try {
      await pass.query(`SELECT 1 FROM vault.token_cards WHERE token = $1 FOR UPDATE`, [stored.token]);
      await pass.query(`UPDATE vault.token_cards SET fingerprint = $2 WHERE token = $1`, [stored.token, newFp]);
      // A tokenization now sees the committed row (old kid) and answers without waiting for the pass.
      const during = await Promise.race([
        repo.insertOrFindDuplicate(card(merchant, newFp, [newFp, oldFp])),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('blocked behind the pass')), 5_000)),
      ]);
      expect(during.token).toBe(stored.token);
      await pass.commitTransaction();
    } finally {
      if (pass.isTransactionActive) await pass.rollbackTransaction();
      await pass.release();
    }
    expect((await repo.insertOrFindDuplicate(card(merchant, newFp, [newFp, oldFp]))).token).toBe(stored.token);
    // Once the old key is gone from the ring, the moved row is still the one found.
    expect((await repo.insertOrFindDuplicate(card(merchant, newFp, [newFp]))).token).toBe(stored.token);
    expect(await rowsOf(merchant)).toEqual([{ token: stored.token, fingerprint: newFp }]);
  });

  it('gives every concurrent add of a new card the same token, under the active kid', async () => {
    const merchant = newMerchant();
    const [active, old] = [fp('fb'), fp('fa')];
    const results = await Promise.all(Array.from({ length: 20 }, () => repo.insertOrFindDuplicate(card(merchant, active, [active, old]))));
    expect(new Set(results.map((r) => r.token)).size).toBe(1);
    expect(await rowsOf(merchant)).toEqual([{ token: results[0].token, fingerprint: active }]);
  });

  it('prefers the row under the active kid when a card has rows under two kids', async () => {
    const merchant = newMerchant();
    const [active, old] = [fp('fb'), fp('fa')];
    const underOld = await repo.insertOrFindDuplicate(card(merchant, old, [old]));
    const underActive = await repo.insertOrFindDuplicate(card(merchant, active, [active]));
    expect(underActive.token).not.toBe(underOld.token);
    expect((await repo.insertOrFindDuplicate(card(merchant, active, [active, old]))).token).toBe(underActive.token);
    expect(await rowsOf(merchant)).toHaveLength(2);
  });

  it("answers every add of a concurrent batch like one add at a time: one row per card, each add its card's token", async () => {
    // Adds fired together go out in shared statements (and from two replicas, in racing ones):
    // a mix of new cards, repeats of one card, cards another merchant has, and cards already
    // vaulted under the old key. The model: one row per (merchant, card), every add of a card
    // answered with that row, a card vaulted before keeping its row.
    const [active, old] = ['fb', 'fa'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ merchant: fc.nat(1), card: fc.nat(4), replica: fc.boolean() }), { minLength: 1, maxLength: 40 }),
        fc.subarray([0, 1, 2, 3, 4]),
        async (adds, vaultedBefore) => {
          const ms = [newMerchant(), newMerchant()];
          const pans = Array.from({ length: 5 }, () => randomBytes(32).toString('base64url'));
          const before = new Map<string, string>();
          for (const c of vaultedBefore) {
            const row = await repo.insertOrFindDuplicate(card(ms[0], `${old}.${pans[c]}`, [`${old}.${pans[c]}`]));
            before.set(`0|${c}`, row.token);
          }
          const answers = await Promise.all(
            adds.map((a) => {
              const fps = [`${active}.${pans[a.card]}`, `${old}.${pans[a.card]}`];
              return (a.replica ? second : repo).insertOrFindDuplicate({ ...card(ms[a.merchant], fps[0], fps), holder: `H${a.card}` });
            }),
          );
          const tokenOf = new Map<string, string>(before);
          adds.forEach((a, i) => {
            const key = `${a.merchant}|${a.card}`;
            expect(answers[i].holder).toBe(before.has(key) ? 'RACE' : `H${a.card}`);
            if (!tokenOf.has(key)) tokenOf.set(key, answers[i].token);
            expect(answers[i].token).toBe(tokenOf.get(key));
          });
          expect(new Set(tokenOf.values()).size).toBe(tokenOf.size);
          for (const [m, merchant] of ms.entries()) {
            const rows = await rowsOf(merchant);
            const expected = [...tokenOf].filter(([k]) => k.startsWith(`${m}|`)).map(([, t]) => t);
            expect(rows.map((r) => r.token).sort()).toEqual(expected.sort());
          }
        },
      ),
      { numRuns: 25 },
    );
  });
  it('loads every card of a concurrent batch like one load at a time: the row this merchant has, or none', async () => {
    // Card loads fired together (token sales, rebill charges; from two replicas) go out in shared
    // statements. The model is the one-row statement they replaced: the sealed row when this
    // merchant holds this token, nothing for another merchant's, an unknown one, or a token of
    // another length or case; the same token loaded twice at once gets two copies.
    const ms = [newMerchant(), newMerchant()];
    const vaulted = await Promise.all(
      Array.from({ length: 4 }, (_, i) => repo.insertOrFindDuplicate(card(ms[i % 2], fp('fb'), [fp('fb')]))),
    );
    const tokens = vaulted.map((r) => r.token);
    const variants = [
      (t: string) => t,
      (t: string) => t,
      (t: string) => t.toUpperCase(),
      (t: string) => t.slice(1),
      (t: string) => `${t}0`,
    ];
    const oneAtATime = async (merchantId: string, token: string) =>
      (
        await db.query<Record<string, unknown>[]>(
          'SELECT token, holder, brand, kek_id, wrapped_key, ciphertext FROM vault.token_cards WHERE token = $1 AND merchant_id = $2',
          [token, merchantId],
        )
      )[0];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ merchant: fc.nat(1), token: fc.nat(4), variant: fc.nat(variants.length - 1), replica: fc.boolean() }), {
          minLength: 1,
          maxLength: 40,
        }),
        async (loads) => {
          const asked = loads.map((l) => ({
            merchantId: l.merchant ? ms[1].toUpperCase() : ms[0],
            // 4: a token nobody holds.
            token: variants[l.variant](l.token < 4 ? tokens[l.token] : randomBytes(32).toString('hex')),
            replica: l.replica,
          }));
          const answers = await Promise.all(
            asked.map((a) => (a.replica ? second : repo).findSealedByMerchantAndToken(a.merchantId, a.token)),
          );
          for (const [i, a] of asked.entries()) {
            expect(answers[i]).toEqual(await oneAtATime(a.merchantId, a.token));
          }
          const buffers = answers.flatMap((r) => (r ? [r.wrapped_key, r.ciphertext] : []));
          expect(new Set(buffers).size).toBe(buffers.length);
        },
      ),
      { numRuns: 30 },
    );
  });
});
