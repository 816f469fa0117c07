import { Injectable } from '@nestjs/common';
import { Keyring } from '@app/vault/keyring';
import { rewrapRecord } from '@app/vault/records';
import { TokenCardKeysRepository } from '@app/vault-store';
import type { RotationTarget } from '../keys/key-rotation';

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

  constructor(private readonly vault: TokenCardKeysRepository) {}

  countRemaining(kek: Keyring): Promise<number> {
    return this.vault.countNotUnderKek(kek.active.kid);
  }

  batch(kek: Keyring, batchSize: number): Promise<number> {
    return this.vault.inBatch(async (locked) => {
      const rows = await locked.claimNotUnderKek(kek.active.kid, batchSize);
      if (rows.length === 0) return 0;
      const rewrappedKeys = rows.map((r) =>
        rewrapRecord(
          kek,
          { kekId: r.kek_id, wrappedKey: r.wrapped_key, ciphertext: r.ciphertext },
          { merchantId: r.merchant_id, token: r.token.trim() },
        ),
      );
      await locked.setWrappedKeys(
        kek.active.kid,
        rows.map((r) => r.token),
        rewrappedKeys.map((s) => s.wrappedKey),
      );
      return rows.length;
    });
  }
}
