import fc from 'fast-check';
import { generateKeySpec, parseKeyring } from '../keyring';
import { decryptRecord, encryptRecord, rewrapRecord, SealedRecord, VaultDecryptError } from './record-cipher';

const k1 = generateKeySpec('k1');
const k2 = generateKeySpec('k2');
const before = parseKeyring(k1, 'VAULT_KEKS');
const after = parseKeyring(`${k1},${k2}`, 'VAULT_KEKS');
const binding = { merchantId: 'merchant-a', token: 'a'.repeat(64) };
const card = Buffer.from(JSON.stringify({ pan: '4111111111111111', expYear: 2030, expMonth: 12 }));

function decryptError(fn: () => unknown): VaultDecryptError {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected decryption to fail');
}

function expectRefused(fn: () => unknown): void {
  const e = decryptError(fn);
  expect(e).toBeInstanceOf(VaultDecryptError);
  expect(e.message).not.toContain('4111');
  expect(e.cause).toBeUndefined();
}

const flipped = (buf: Buffer, at: number, mask: number) => {
  const copy = Buffer.from(buf);
  copy[at % copy.length] ^= mask;
  return copy;
};

describe('record cipher', () => {
  it('round-trips and lays out iv | ciphertext | tag under the active kid', () => {
    const sealed = encryptRecord(after, card, binding);
    expect(sealed.kekId).toBe('k2');
    expect(sealed.ciphertext).toHaveLength(12 + card.length + 16);
    expect(sealed.wrappedKey).toHaveLength(12 + 32 + 16);
    expect(sealed.ciphertext.includes(card)).toBe(false);
    expect(decryptRecord(after, sealed, binding).equals(card)).toBe(true);
  });

  it('round-trips any plaintext, and never reuses a data key or iv', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
        const pt = Buffer.from(bytes);
        const a = encryptRecord(before, pt, binding);
        const b = encryptRecord(before, pt, binding);
        expect(decryptRecord(before, a, binding).equals(pt)).toBe(true);
        expect(a.wrappedKey.equals(b.wrappedKey)).toBe(false);
        expect(a.ciphertext.subarray(0, 12).equals(b.ciphertext.subarray(0, 12))).toBe(false);
      }),
    );
  });

  it('refuses a record with any single byte of iv, ciphertext or tag changed, in either layer', () => {
    const sealed = encryptRecord(before, card, binding);
    fc.assert(
      fc.property(
        fc.constantFrom<keyof SealedRecord>('ciphertext', 'wrappedKey'),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (field, at, mask) => {
          const tampered = { ...sealed, [field]: flipped(sealed[field] as Buffer, at, mask) };
          expectRefused(() => decryptRecord(before, tampered, binding));
        },
      ),
    );
  });

  it('refuses a ciphertext moved to another row (other merchant or token)', () => {
    const sealed = encryptRecord(before, card, binding);
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), fc.boolean(), (other, moveMerchant) => {
        const target = moveMerchant ? { ...binding, merchantId: other } : { ...binding, token: other };
        fc.pre(target.merchantId !== binding.merchantId || target.token !== binding.token);
        expectRefused(() => decryptRecord(before, sealed, target));
      }),
    );
  });

  it('refuses another row’s data key spliced in, even for the same merchant', () => {
    const mine = encryptRecord(before, card, binding);
    const theirs = encryptRecord(before, card, { ...binding, token: 'b'.repeat(64) });
    expectRefused(() => decryptRecord(before, { ...mine, wrappedKey: theirs.wrappedKey }, binding));
  });

  it('refuses a record relabelled with another kid', () => {
    const sealed = encryptRecord(after, card, binding);
    const k2AsK1 = parseKeyring(`k1:${k2.split(':')[1]},${k2}`, 'VAULT_KEKS');
    expectRefused(() => decryptRecord(k2AsK1, { ...sealed, kekId: 'k1' }, binding));
  });

  it('refuses truncated tags and blobs', () => {
    const sealed = encryptRecord(before, card, binding);
    expectRefused(() => decryptRecord(before, { ...sealed, ciphertext: sealed.ciphertext.subarray(0, -4) }, binding));
    expectRefused(() => decryptRecord(before, { ...sealed, ciphertext: sealed.ciphertext.subarray(0, 27) }, binding));
    expectRefused(() => decryptRecord(before, { ...sealed, wrappedKey: sealed.wrappedKey.subarray(0, -4) }, binding));
  });

  it('refuses an unknown kid and a wrong key with a known kid', () => {
    const sealed = encryptRecord(before, card, binding);
    expectRefused(() => decryptRecord(parseKeyring(k2, 'VAULT_KEKS'), sealed, binding));
    expectRefused(() => decryptRecord(parseKeyring(generateKeySpec('k1'), 'VAULT_KEKS'), sealed, binding));
  });

  it('refuses a binding with the associated-data separator in it', () => {
    expect(() => encryptRecord(before, card, { merchantId: 'a|b', token: 't' })).toThrow(/binding/);
    expect(() => encryptRecord(before, card, { merchantId: 'a', token: '' })).toThrow(/binding/);
    expectRefused(() => decryptRecord(before, encryptRecord(before, card, binding), { merchantId: 'merchant-a|', token: binding.token }));
  });
});

describe('rewrapRecord', () => {
  it('moves the data key to the active kid, keeps the ciphertext and decrypts to the same plaintext', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 256 }), (bytes) => {
        const pt = Buffer.from(bytes);
        const old = encryptRecord(before, pt, binding);
        const moved = rewrapRecord(after, old, binding);
        expect(moved.kekId).toBe('k2');
        expect(moved.ciphertext).toBe(old.ciphertext);
        expect(moved.wrappedKey.equals(old.wrappedKey)).toBe(false);
        expect(decryptRecord(after, moved, binding).equals(pt)).toBe(true);
        // Once rotated, the old key alone can no longer read it: that is what retires it.
        expectRefused(() => decryptRecord(before, moved, binding));
      }),
    );
  });

  it('returns the same object when already on the active kid', () => {
    const sealed = encryptRecord(after, card, binding);
    expect(rewrapRecord(after, sealed, binding)).toBe(sealed);
  });

  it('refuses when the keyring no longer holds the old kid', () => {
    const old = encryptRecord(before, card, binding);
    expectRefused(() => rewrapRecord(parseKeyring(k2, 'VAULT_KEKS'), old, binding));
  });

  it('refuses to rewrap under another binding', () => {
    const old = encryptRecord(before, card, binding);
    expectRefused(() => rewrapRecord(after, old, { ...binding, merchantId: 'merchant-b' }));
  });
});
