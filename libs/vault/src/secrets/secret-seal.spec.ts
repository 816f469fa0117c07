import { generateKeySpec, parseKeyring } from '../keyring';
import { openSecret, resealSecret, sealSecret, SecretKeyMissingError, SecretOpenError } from './secret-seal';

const s1 = generateKeySpec('s1');
const s2 = generateKeySpec('s2');
const before = parseKeyring(s1, 'SECRETS_KEKS');
const after = parseKeyring(`${s1},${s2}`, 'SECRETS_KEKS');
const secret = 'whsec_' + 'A'.repeat(43);
const row = { merchantId: '6f1c2a3e-0000-4000-8000-000000000001', column: 'webhook_secret' };

function refusal(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected opening to fail');
}

describe('sealed secrets', () => {
  it('round-trips under the active key, never holding the clear text in the sealed bytes', () => {
    const sealed = sealSecret(before, secret, row);
    expect(sealed.kid).toBe('s1');
    expect(sealed.sealed.toString('latin1')).not.toContain('whsec_');
    expect(openSecret(before, sealed, row)).toBe(secret);
    expect(sealSecret(before, secret, row).sealed.equals(sealed.sealed)).toBe(false); // fresh IV each time
  });

  it.each([
    ['another merchant', { ...row, merchantId: '6f1c2a3e-0000-4000-8000-000000000002' }],
    ['another column', { ...row, column: 'previous_webhook_secret' }],
  ])('refuses a value moved to %s, saying nothing of the secret', (_what, elsewhere) => {
    const e = refusal(() => openSecret(before, sealSecret(before, secret, row), elsewhere));
    expect(e).toBeInstanceOf(SecretOpenError);
    expect(e.message).not.toContain('whsec');
    expect(e.cause).toBeUndefined();
  });

  it('refuses a relabelled key id, a flipped bit and a truncated value', () => {
    const sealed = sealSecret(before, secret, row);
    const sameKeyOtherId = parseKeyring(`s1:${s1.split(':')[1]},s9:${s1.split(':')[1]}`, 'SECRETS_KEKS');
    expect(refusal(() => openSecret(sameKeyOtherId, { ...sealed, kid: 's9' }, row))).toBeInstanceOf(SecretOpenError);
    const flipped = Buffer.from(sealed.sealed);
    flipped[14] ^= 1;
    expect(refusal(() => openSecret(before, { ...sealed, sealed: flipped }, row))).toBeInstanceOf(SecretOpenError);
    expect(refusal(() => openSecret(before, { ...sealed, sealed: sealed.sealed.subarray(0, 20) }, row))).toBeInstanceOf(SecretOpenError);
  });

  it('names a missing key by id only', () => {
    const e = refusal(() => openSecret(before, sealSecret(parseKeyring(s2, 'SECRETS_KEKS'), secret, row), row));
    expect(e).toBeInstanceOf(SecretKeyMissingError);
    expect(e.message).toContain('"s2"');
  });

  it('re-seals under the new active key, which the old keyring cannot open', () => {
    const old = sealSecret(before, secret, row);
    const moved = resealSecret(after, old, row);
    expect(moved.kid).toBe('s2');
    expect(openSecret(after, moved, row)).toBe(secret);
    expect(resealSecret(after, moved, row)).toBe(moved);
    expect(refusal(() => openSecret(before, moved, row))).toBeInstanceOf(SecretKeyMissingError);
  });
});
