import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { QueryFailedError } from 'typeorm';
import { Keyring } from '@app/vault/keyring';
import { cardFingerprint, openCardRecord, VaultDecryptError } from '@app/vault/records';
import { TokenCardKeysRepository } from '@app/vault-store';

export interface RefingerprintProgress {
  /** The active fingerprint key: where every row moves. */
  fingerprintKid: string;
  /** Rows this run moved to the active key. */
  refingerprinted: number;
  /**
   * Rows left where they were because the same merchant already has the same card and expiry
   * under the active key (a second token for one card, made by a tokenizer that lacked the old
   * key): both tokens stay valid; the older one just no longer deduplicates.
   */
  twins: number;
  /** Rows whose record the configured VAULT_KEKS cannot open (a KEK missing from the ring). */
  unreadable: number;
  /** Rows still under another fingerprint key, across the whole vault (counted at the end; estimated in progress lines). */
  remaining: number;
}

export interface RefingerprintOptions {
  batchSize: number;
  /** Stops after this many batches (the rest is left for the next run); unlimited when absent. */
  maxBatches?: number;
  /** Sleeps this long between batches, to leave the database to live traffic. */
  pauseMs?: number;
}

const UNIQUE_VIOLATION = '23505';

/**
 * Online, resumable recomputation of every card fingerprint that is not under the active
 * fingerprint key. It needs the clear number, so it opens each record with the vault's KEKs; the
 * number lives only in this function's locals for the time of the HMAC and is never part of an
 * error (openCardRecord's errors carry no cause).
 *
 * Each batch is one transaction holding its rows FOR UPDATE (SKIP LOCKED: a second run takes
 * other rows). The only state is the fingerprint itself, so a killed run resumes where its last
 * commit left off. A tokenization of the same card meanwhile looks the card up under every kid in
 * one statement, so it sees the row under the old kid or the new one, never neither; the
 * NOT EXISTS guard keeps a row from moving onto a fingerprint another row already holds.
 */
@Injectable()
export class RefingerprintService {
  constructor(private readonly vault: TokenCardKeysRepository) {}

  countRemaining(fingerprints: Keyring): Promise<number> {
    return this.vault.countNotUnderFingerprintKid(fingerprints.active.kid);
  }

  /** Rows per fingerprint kid, for the operator's last check before removing a key. */
  countByKid(): Promise<Record<string, number>> {
    return this.vault.countByFingerprintKid();
  }

  async refingerprintAll(
    fingerprints: Keyring,
    kek: Keyring,
    opts: RefingerprintOptions,
    onProgress: (event: 'start' | 'progress', p: RefingerprintProgress) => void,
  ): Promise<RefingerprintProgress> {
    const total = { refingerprinted: 0, twins: 0, unreadable: 0 };
    // Keyset over tokens: rows a batch leaves behind (twins, unreadable) are not picked up again.
    let after = '';
    // Counted once: a count per batch would read the whole vault each time. In between, rows this
    // run moved are the only change (short of a tokenizer writing under an old key).
    const before = await this.countRemaining(fingerprints);
    onProgress('start', { fingerprintKid: fingerprints.active.kid, ...total, remaining: before });
    for (let batch = 0; opts.maxBatches === undefined || batch < opts.maxBatches; batch++) {
      const done = await this.batchWithRetry(fingerprints, kek, after, opts.batchSize);
      if (done.seen === 0) break;
      after = done.last;
      total.refingerprinted += done.moved;
      total.twins += done.twins;
      total.unreadable += done.unreadable;
      onProgress('progress', { fingerprintKid: fingerprints.active.kid, ...total, remaining: Math.max(0, before - total.refingerprinted) });
      if (opts.pauseMs) await sleep(opts.pauseMs);
    }
    return { fingerprintKid: fingerprints.active.kid, ...total, remaining: await this.countRemaining(fingerprints) };
  }

  /**
   * A unique violation means a tokenizer inserted this card under the active kid while the batch
   * ran, which only a tokenizer without the old key does; the batch rolled back whole, and run
   * again its guard sees the new row and leaves the old one as a twin.
   */
  private async batchWithRetry(fingerprints: Keyring, kek: Keyring, after: string, batchSize: number) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.batch(fingerprints, kek, after, batchSize);
      } catch (e) {
        const code = e instanceof QueryFailedError ? (e.driverError as { code?: string }).code : undefined;
        if (code !== UNIQUE_VIOLATION || attempt >= 3) throw e;
      }
    }
  }

  private batch(fingerprints: Keyring, kek: Keyring, after: string, batchSize: number) {
    return this.vault.inBatch(async (locked) => {
      const rows = await locked.claimNotUnderFingerprintKid(fingerprints.active.kid, after, batchSize);
      if (rows.length === 0) return { seen: 0, last: after, moved: 0, twins: 0, unreadable: 0 };
      const tokens: string[] = [];
      const next: string[] = [];
      // Two old rows of one card in one batch would both move onto the same fingerprint.
      const claimed = new Set<string>();
      let unreadable = 0;
      let twins = 0;
      for (const r of rows) {
        let fingerprint: string;
        try {
          const { pan } = openCardRecord(
            kek,
            { kekId: r.kek_id, wrappedKey: r.wrapped_key, ciphertext: r.ciphertext },
            { merchantId: r.merchant_id, token: r.token.trim() },
          );
          fingerprint = cardFingerprint(fingerprints, r.merchant_id, pan);
        } catch (e) {
          if (!(e instanceof VaultDecryptError)) throw e;
          unreadable++;
          continue;
        }
        const slot = `${r.merchant_id}|${fingerprint}|${r.exp_year}|${r.exp_month}`;
        if (claimed.has(slot)) {
          twins++;
          continue;
        }
        claimed.add(slot);
        tokens.push(r.token);
        next.push(fingerprint);
      }
      const moved = await locked.moveFingerprints(tokens, next);
      twins += tokens.length - moved;
      return { seen: rows.length, last: rows[rows.length - 1].token, moved, twins, unreadable };
    });
  }
}
