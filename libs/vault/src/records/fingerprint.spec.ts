import fc from 'fast-check';
import { cardFingerprint, cardFingerprints, fingerprintKid } from './fingerprint';
import { generateKeySpec, parseKeyring } from '../keyring';

const f1 = generateKeySpec('f1');
const ring = parseKeyring(f1, 'FINGERPRINT_KEYS');
const rotated = parseKeyring(`${f1},${generateKeySpec('f2')}`, 'FINGERPRINT_KEYS');
const pan = '4111111111111111';

describe('cardFingerprint', () => {
  it('is the active kid and a base64url HMAC-SHA-256, with no trace of the number', () => {
    const fp = cardFingerprint(ring, 'm1', pan);
    expect(fp).toMatch(/^f1\.[A-Za-z0-9_-]{43}$/);
    expect(fp).not.toContain(pan.slice(-4));
  });

  it('is stable for the same merchant, card and key', () => {
    expect(cardFingerprint(ring, 'm1', pan)).toBe(cardFingerprint(parseKeyring(f1, 'FINGERPRINT_KEYS'), 'm1', pan));
  });

  it('differs across merchants, cards and keys', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (a, b) => {
        fc.pre(a !== b);
        expect(cardFingerprint(ring, a, pan)).not.toBe(cardFingerprint(ring, b, pan));
      }),
    );
    expect(cardFingerprint(ring, 'm1', pan)).not.toBe(cardFingerprint(ring, 'm1', '4012888888881881'));
    expect(cardFingerprint(rotated, 'm1', pan)).toMatch(/^f2\./);
    expect(cardFingerprint(rotated, 'm1', pan).split('.')[1]).not.toBe(cardFingerprint(ring, 'm1', pan).split('.')[1]);
    // Same key bytes filed under another kid: the kid prefix keeps the two apart.
    expect(cardFingerprint(parseKeyring(`f9:${f1.split(':')[1]}`, 'X'), 'm1', pan)).not.toBe(cardFingerprint(ring, 'm1', pan));
  });

  it('can be computed under an older kid, so dedup still finds cards after a rotation', () => {
    expect(cardFingerprint(rotated, 'm1', pan, 'f1')).toBe(cardFingerprint(ring, 'm1', pan));
    expect(() => cardFingerprint(rotated, 'm1', pan, 'nope')).toThrow();
  });
});

describe('cardFingerprints', () => {
  it('lists the card under every kid, the active one first, even when the active key is not the last', () => {
    const f2 = generateKeySpec('f2');
    const activeFirst = parseKeyring(`${f1},${f2};active=f1`, 'FINGERPRINT_KEYS');
    expect(cardFingerprints(activeFirst, 'm1', pan)).toEqual([
      cardFingerprint(activeFirst, 'm1', pan, 'f1'),
      cardFingerprint(activeFirst, 'm1', pan, 'f2'),
    ]);
    expect(cardFingerprints(rotated, 'm1', pan).map(fingerprintKid)).toEqual(['f2', 'f1']);
    expect(cardFingerprints(ring, 'm1', pan)).toEqual([cardFingerprint(ring, 'm1', pan)]);
  });

  it('reads the kid back from a stored fingerprint', () => {
    expect(fingerprintKid(cardFingerprint(rotated, 'm1', pan))).toBe('f2');
    expect(fingerprintKid('no-dot')).toBe('');
  });
});
