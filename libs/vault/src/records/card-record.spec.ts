import { openCardRecord, sealCardRecord } from './card-record';
import { generateKeySpec, parseKeyring } from '../keyring';
import { encryptRecord, VaultDecryptError } from './record-cipher';

const kek = parseKeyring(generateKeySpec('k1'), 'VAULT_KEKS');
const binding = { merchantId: 'm1', token: 't1' };
const card = { pan: '4111111111111111', expYear: 2031, expMonth: 4 };

describe('card records', () => {
  it('round-trips a card for its own row only', () => {
    const sealed = sealCardRecord(kek, card, binding);
    expect(sealed.ciphertext.toString('latin1')).not.toContain(card.pan);
    expect(openCardRecord(kek, sealed, binding)).toEqual(card);
    expect(() => openCardRecord(kek, sealed, { merchantId: 'm2', token: 't1' })).toThrow(VaultDecryptError);
  });

  it('never quotes what it decrypted when that is not a card', () => {
    for (const clear of [`x${card.pan}`, `{"pan":${card.pan}`, `${card.pan}`, '{"pan":1}']) {
      const sealed = encryptRecord(kek, Buffer.from(clear), binding);
      let error: unknown;
      try {
        openCardRecord(kek, sealed, binding);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(VaultDecryptError);
      expect(`${(error as Error).message} ${(error as Error).stack} ${String((error as Error).cause)}`).not.toContain(card.pan);
    }
  });
});
