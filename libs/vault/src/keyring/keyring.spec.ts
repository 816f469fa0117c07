import { randomBytes } from 'node:crypto';
import { generateKeySpec, Keyring, parseKeyring } from '.';

const b64 = (n = 32) => randomBytes(n).toString('base64');

describe('parseKeyring', () => {
  it('makes the last entry active', () => {
    const k1 = b64();
    const k2 = b64();
    const ring = parseKeyring(`k1:${k1},k2:${k2}`, 'VAULT_KEKS');
    expect(ring.active.kid).toBe('k2');
    expect(ring.active.key.equals(Buffer.from(k2, 'base64'))).toBe(true);
    expect(ring.get('k1')?.equals(Buffer.from(k1, 'base64'))).toBe(true);
    expect(ring.get('k3')).toBeUndefined();
    expect(ring.kids()).toEqual(['k1', 'k2']);
  });

  it('honours ;active= and tolerates whitespace from env files', () => {
    const ring = parseKeyring(` old:${b64()} , new:${b64()} ;active=old\n`, 'TRANSIT_KEYS');
    expect(ring.active.kid).toBe('old');
  });

  it('accepts base64url keys', () => {
    const key = randomBytes(32);
    expect(parseKeyring(`a:${key.toString('base64url')}`, 'X').active.key.equals(key)).toBe(true);
  });

  it('round-trips through toSpec, with and without an explicit active key', () => {
    for (const spec of [`a:${b64()},b:${b64()}`, `a:${b64()},b:${b64()};active=a`]) {
      const ring = parseKeyring(spec, 'X');
      const again = parseKeyring(ring.toSpec(), 'X');
      expect(again.active.kid).toBe(ring.active.kid);
      expect(again.kids()).toEqual(ring.kids());
      for (const kid of ring.kids()) expect(again.get(kid)?.equals(ring.get(kid)!)).toBe(true);
    }
    expect(parseKeyring(`a:${b64()},b:${b64()}`, 'X').toSpec()).not.toContain(';active=');
  });

  const secret = b64();
  it.each([
    ['empty', ''],
    ['no colon', secret],
    ['bad kid', `has space:${secret}`],
    ['kid too long', `${'k'.repeat(33)}:${secret}`],
    ['kid with a colon inside the key part', `a:b:${secret}`],
    ['not base64', `a:${secret.slice(0, -4)}!!!!`],
    ['short key', `a:${b64(16)}`],
    ['long key', `a:${b64(33)}`],
    ['duplicate kid', `a:${secret},a:${b64()}`],
    ['empty entry', `a:${secret},`],
    ['unknown active', `a:${secret};active=b`],
    ['malformed option', `a:${secret};primary=a`],
    ['two options', `a:${secret};active=a;active=a`],
  ])('rejects %s, naming the variable and never echoing the key', (_name, spec) => {
    let error: Error | undefined;
    try {
      parseKeyring(spec, 'VAULT_KEKS');
    } catch (e) {
      error = e;
    }
    expect(error?.message).toMatch(/^VAULT_KEKS /);
    expect(error?.message).not.toContain(secret);
    expect(error?.message).not.toContain(secret.slice(0, 16));
  });
});

describe('Keyring', () => {
  it('refuses duplicate kids or an active kid it does not hold', () => {
    const key = randomBytes(32);
    expect(() => new Keyring([])).toThrow();
    expect(() => new Keyring([{ kid: 'a', key }], 'b')).toThrow();
    expect(
      () =>
        new Keyring([
          { kid: 'a', key },
          { kid: 'a', key },
        ]),
    ).toThrow();
  });
});

describe('generateKeySpec', () => {
  it('makes a fresh 32-byte entry that parses and appends as the new active key', () => {
    const a = generateKeySpec('k1');
    const b = generateKeySpec('k1');
    expect(a).not.toBe(b);
    const ring = parseKeyring(`${a},${generateKeySpec('k2')}`, 'X');
    expect(ring.active.kid).toBe('k2');
    expect(ring.get('k1')).toHaveLength(32);
  });

  it('refuses a kid the parser would reject', () => {
    expect(() => generateKeySpec('no:colons')).toThrow();
  });
});
