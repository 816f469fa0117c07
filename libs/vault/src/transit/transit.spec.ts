import fc from 'fast-check';
import { generateKeySpec, parseKeyring } from '../keyring';
import { openJson, sealJson, TransitError } from './transit';

const card = { cardNumber: '4111111111111111', cardHolder: 'MARIA SILVA', cardExpirationDate: '203012', cardSecurityCode: '0917' };
const t1 = generateKeySpec('t1');
const t2 = generateKeySpec('t2');

async function failure(p: Promise<unknown>): Promise<TransitError> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected openJson to fail');
}

describe('transit sealing', () => {
  const ring = parseKeyring(`${t1},${t2}`, 'TRANSIT_KEYS');

  it('round-trips JSON and hides it from whoever holds only the string', async () => {
    const jwe = await sealJson(ring, card);
    expect(jwe.split('.')).toHaveLength(5);
    expect(jwe).not.toContain(card.cardNumber);
    expect(Buffer.from(jwe.split('.')[3], 'base64url').toString('latin1')).not.toContain(card.cardNumber);
    expect(await openJson(ring, jwe)).toEqual(card);
  });

  it('puts the active kid, dir and A256GCM in the protected header', async () => {
    const header = JSON.parse(Buffer.from((await sealJson(ring, card)).split('.')[0], 'base64url').toString());
    expect(header).toEqual({ alg: 'dir', enc: 'A256GCM', kid: 't2' });
  });

  it('opens a payload sealed under a previous key after rotation', async () => {
    const old = await sealJson(parseKeyring(t1, 'TRANSIT_KEYS'), card);
    expect(await openJson(ring, old)).toEqual(card);
  });

  it('refuses a payload under a kid it does not hold', async () => {
    const jwe = await sealJson(parseKeyring(generateKeySpec('t9'), 'TRANSIT_KEYS'), card);
    const e = await failure(openJson(ring, jwe));
    expect(e).toBeInstanceOf(TransitError);
    expect(e.reason).toBe('unknown_kid');
  });

  it('refuses a payload under a different key with the same kid', async () => {
    const jwe = await sealJson(parseKeyring(generateKeySpec('t2'), 'TRANSIT_KEYS'), card);
    expect(await failure(openJson(ring, jwe))).toBeInstanceOf(TransitError);
  });

  it.each(['', 'garbage', 'a.b.c.d.e', 'a.b.c'])('refuses %p', async (jwe) => {
    expect(await failure(openJson(ring, jwe))).toBeInstanceOf(TransitError);
  });

  it('refuses a payload with any byte of header, iv, ciphertext or tag changed, without quoting it', async () => {
    const jwe = await sealJson(ring, card);
    const parts = jwe.split('.');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(0, 2, 3, 4), fc.nat(), fc.integer({ min: 1, max: 255 }), async (segment, at, mask) => {
        const bytes = Buffer.from(parts[segment], 'base64url');
        bytes[at % bytes.length] ^= mask;
        const tampered = parts.map((p, i) => (i === segment ? bytes.toString('base64url') : p)).join('.');
        const e = await failure(openJson(ring, tampered));
        expect(e).toBeInstanceOf(TransitError);
        expect(e.message).not.toContain(card.cardNumber);
        expect(e.message).not.toContain(card.cardSecurityCode);
      }),
    );
  });

  it('refuses a non-empty encrypted-key segment (dir carries none)', async () => {
    const parts = (await sealJson(ring, card)).split('.');
    parts[1] = Buffer.alloc(32).toString('base64url');
    expect(await failure(openJson(ring, parts.join('.')))).toBeInstanceOf(TransitError);
  });

  it('refuses a header that asks for another algorithm', async () => {
    const parts = (await sealJson(ring, card)).split('.');
    parts[0] = Buffer.from(JSON.stringify({ alg: 'dir', enc: 'A128GCM', kid: 't2' })).toString('base64url');
    expect(await failure(openJson(ring, parts.join('.')))).toBeInstanceOf(TransitError);
  });
});
