import { readKeyring } from '@app/boot';
import { BaseConfig, EnvReader, readBaseConfig } from '@app/platform';
import { Keyring } from '@app/vault/keyring';
import { ConnectorSettings, readConnectorSettings } from '@app/acquirer';

export interface VaultKeys {
  /** Opens the API's sealed card payloads. */
  transit: Keyring;
  /** Wraps each record's data key; the active one wraps new records, the others still unwrap. */
  kek: Keyring;
  /** Keys the per-merchant card fingerprint used for dedup. */
  fingerprint: Keyring;
}

export class TokenizerConfig {
  base: BaseConfig;
  healthPort: number;
  keys: VaultKeys;
  concurrency: number;
  dbPoolSize: number;
  /** Sandbox acquirer: how long a card ending in 9 takes to be approved (docs/merchants/sandbox.md). */
  sandboxSlowApprovalMs: number;
  /** Sandbox acquirer: how long a capture or cancel takes, as a remote acquirer's round trip would. */
  sandboxFollowUpLatencyMs: number;
  outboxIntervalMs: number;
  /** After a commit that wrote events, the relay's pass runs within this delay (events go out in bursts). */
  outboxPokeDelayMs: number;
  /** A sale at status 0 this long, with no authorization job, is abandoned (declined, `101`). */
  orphanAfterS: number;
  reconcileIntervalMs: number;
  /** How long a capture or cancel waits for another one on the same transaction before a 409 (038). */
  operationWaitMs: number;
  /** A claim this old is a dead worker's: the reconciler settles it with the acquirer. */
  claimStaleAfterS: number;
  /** The longest a capture or cancel call to the acquirer may take before its answer counts as lost. */
  acquirerTimeoutMs: number;
  /** Captures (and cancels) in flight per process, most of them waiting their turn on a busy transaction. */
  operationConcurrency: number;
  /** Of those, the most that may wait on one transaction; more get 038 at once. */
  operationQueuePerTransaction: number;
  /** Cielo's and e.Rede's hosts, timeouts, breakers (docs/acquirers.md). */
  connectors: ConnectorSettings;
  /** Opens production merchants' acquirer secrets (SECRETS_KEKS, as the notifier opens webhook secrets). */
  secrets: Keyring;
  /** How often this tokenizer looks for due rebill cycles (0: never; another replica or the CLI charges them). */
  rebillPollMs: number;
  /** Rebill charges opened (and sent) per statement. */
  rebillBatch: number;
  /** An open rebill charge still undecided this long has its authorization sent again (same job). */
  rebillResendAfterS: number;
}

export function readVaultKeys(r: EnvReader, base: BaseConfig): VaultKeys {
  const keyring = (name: string) => readKeyring(r, base, name);
  return { transit: keyring('TRANSIT_KEYS'), kek: keyring('VAULT_KEKS'), fingerprint: keyring('FINGERPRINT_KEYS') };
}

export function loadTokenizerConfig(env: NodeJS.ProcessEnv = process.env): TokenizerConfig {
  const r = new EnvReader(env);
  const base = readBaseConfig(r);
  const cfg: Omit<TokenizerConfig, 'connectors' | 'secrets'> & Partial<TokenizerConfig> = {
    base,
    healthPort: r.int('HEALTH_PORT', 3001, 0, 65535),
    keys: readVaultKeys(r, base),
    // Per-pattern concurrency of this worker; the pool must be able to serve it.
    concurrency: r.int('TOKENIZER_CONCURRENCY', 32, 1, 1000),
    dbPoolSize: r.int('DB_POOL_SIZE', 16, 1, 200),
    sandboxSlowApprovalMs: r.int('SANDBOX_SLOW_APPROVAL_MS', 2000, 0, 60_000),
    sandboxFollowUpLatencyMs: r.int('SANDBOX_FOLLOW_UP_LATENCY_MS', 0, 0, 60_000),
    outboxIntervalMs: r.int('OUTBOX_INTERVAL_MS', 200, 10, 60_000),
    outboxPokeDelayMs: r.int('OUTBOX_POKE_DELAY_MS', 20, 0, 1_000),
    // Well above the API's sync wait and a normal queue delay: only a sale nobody will decide.
    orphanAfterS: r.int('SALE_ORPHAN_AFTER_S', 120, 1, 86_400),
    reconcileIntervalMs: r.int('SALE_RECONCILE_INTERVAL_MS', 30_000, 100, 3_600_000),
    operationWaitMs: r.int('OPERATION_WAIT_MS', 5_000, 1, 60_000),
    // Far above one acquirer call: a live holder has finished or given up long before.
    claimStaleAfterS: r.int('CLAIM_STALE_AFTER_S', 60, 1, 86_400),
    acquirerTimeoutMs: r.int('ACQUIRER_TIMEOUT_MS', 3_000, 100, 60_000),
    operationConcurrency: r.int('OPERATION_CONCURRENCY', 128, 1, 10_000),
    operationQueuePerTransaction: r.int('OPERATION_QUEUE_PER_TRANSACTION', 32, 1, 10_000),
    rebillPollMs: r.int('REBILL_POLL_MS', 5_000, 0, 3_600_000),
    rebillBatch: r.int('REBILL_BATCH', 500, 1, 5_000),
    // Well past a reply wait, well before SALE_ORPHAN_AFTER_S would abandon the charge.
    rebillResendAfterS: r.int('REBILL_RESEND_AFTER_S', 30, 1, 86_400),
  };
  cfg.connectors = readConnectorSettings(r, cfg.acquirerTimeoutMs);
  cfg.secrets = readKeyring(r, base, 'SECRETS_KEKS');
  // A holder must be done (its acquirer call and, if lost, the fence) long before the reconciler
  // takes its claim for a dead worker's.
  if (cfg.claimStaleAfterS * 1000 < 4 * cfg.acquirerTimeoutMs) {
    r.problem(`CLAIM_STALE_AFTER_S (${cfg.claimStaleAfterS}) must be at least 4 × ACQUIRER_TIMEOUT_MS (${cfg.acquirerTimeoutMs} ms)`);
  }
  r.done('tokenizer');
  return cfg as TokenizerConfig;
}
