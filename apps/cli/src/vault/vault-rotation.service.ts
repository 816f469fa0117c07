import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Keyring } from '@app/vault/keyring';
import { rewrapRecord } from '@app/vault/records';
import type { RotationTarget } from '../keys/key-rotation';

interface Row {
  token: string;
  merchant_id: string;
  kek_id: string;
  wrapped_key: Buffer;
  ciphertext: Buffer;
}

/**
 * Online re-wrap of every record's data key under the active key-encryption key. The card
 * ciphertext is untouched, so this is cheap and readers never see a half-rotated record: each
 * batch commits on its own, and "not yet on the active key" is the only state, so a crashed run
 * simply resumes where the last commit left off. SKIP LOCKED lets two runs share the work.
 */
@Injectable()
export class VaultRotationService implements RotationTarget {
  readonly keyring = 'VAULT_KEKS';
  readonly movedLabel = 'rewrapped';
  readonly noun = 'record';
  readonly state = 'wrapped by';
  readonly readers = 'tokenizers';

  constructor(private readonly db: DataSource) {}

  countRemaining(kek: Keyring): Promise<number> {
    return this.db.query('SELECT count(*)::int AS n FROM vault.token_cards WHERE kek_id <> $1', [kek.active.kid]).then((r: { n: number }[]) => r[0].n);
  }

  batch(kek: Keyring, batchSize: number): Promise<number> {
    return this.db.transaction(async (tx) => {
      const rows: Row[] = await tx.query(
        `SELECT token, merchant_id, kek_id, wrapped_key, ciphertext FROM vault.token_cards
         WHERE kek_id <> $1 ORDER BY token LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [kek.active.kid, batchSize],
      );
      if (rows.length === 0) return 0;
      const rewrappedKeys = rows.map((r) =>
        rewrapRecord(kek, { kekId: r.kek_id, wrappedKey: r.wrapped_key, ciphertext: r.ciphertext }, { merchantId: r.merchant_id, token: r.token.trim() }),
      );
      await tx.query(
        `UPDATE vault.token_cards AS t SET kek_id = $1, wrapped_key = u.wrapped_key
         FROM unnest($2::text[], $3::bytea[]) AS u(token, wrapped_key) WHERE t.token = u.token`,
        [kek.active.kid, rows.map((r) => r.token), rewrappedKeys.map((s) => s.wrappedKey)],
      );
      return rows.length;
    });
  }
}
