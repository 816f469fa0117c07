import { decryptRecord, encryptRecord, RecordBinding, SealedRecord, VaultDecryptError } from './record-cipher';
import { Keyring } from '../keyring';

/** What a vault record holds: never the security code, never the holder (a column of its own). */
export interface CardRecord {
  pan: string;
  expYear: number;
  expMonth: number;
}

/** Seals a card's number and expiry for one merchant's token (envelope encryption, see record-cipher). */
export function sealCardRecord(kek: Keyring, card: CardRecord, binding: RecordBinding): SealedRecord {
  const clear = Buffer.from(JSON.stringify({ pan: card.pan, expYear: card.expYear, expMonth: card.expMonth }));
  try {
    return encryptRecord(kek, clear, binding);
  } finally {
    clear.fill(0);
  }
}

/**
 * Opens a vault record. Every failure is a VaultDecryptError with no cause: a JSON.parse error
 * would quote the text it choked on, and that text is a card number.
 */
export function openCardRecord(kek: Keyring, sealed: SealedRecord, binding: RecordBinding): CardRecord {
  const clear = decryptRecord(kek, sealed, binding);
  try {
    const parsed = JSON.parse(clear.toString('utf8')) as Partial<CardRecord>;
    if (typeof parsed.pan !== 'string' || typeof parsed.expYear !== 'number' || typeof parsed.expMonth !== 'number')
      throw new VaultDecryptError();
    return { pan: parsed.pan, expYear: parsed.expYear, expMonth: parsed.expMonth };
  } catch {
    throw new VaultDecryptError('The vault record does not hold a card.');
  } finally {
    clear.fill(0);
  }
}
