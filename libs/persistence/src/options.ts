import type { DataSourceOptions } from 'typeorm';
import { PREPARED_STATEMENTS } from './prepared';
import { Init1763800000000 } from './migrations/1763800000000-init';
import { Transactions1763900000000 } from './migrations/1763900000000-transactions';
import { Settlement1764000000000 } from './migrations/1764000000000-settlement';
import { Webhooks1764100000000 } from './migrations/1764100000000-webhooks';
import { PendingSales1764200000000 } from './migrations/1764200000000-pending-sales';
import { Chargebacks1764300000000 } from './migrations/1764300000000-chargebacks';
import { OperationClaims1764400000000 } from './migrations/1764400000000-operation-claims';
import { MerchantPublicIds1764500000000 } from './migrations/1764500000000-merchant-public-ids';
import { SealedWebhookSecrets1764600000000 } from './migrations/1764600000000-sealed-webhook-secrets';
import { FingerprintKids1764650000000 } from './migrations/1764650000000-fingerprint-kids';
import { Operators1764700000000 } from './migrations/1764700000000-operators';
import { MerchantRateLimits1764800000000 } from './migrations/1764800000000-merchant-rate-limits';
import { DatabaseRoles1764900000000 } from './migrations/1764900000000-database-roles';
import { Listeners1765000000000 } from './migrations/1765000000000-listeners';
import { ConsoleListenerGrants1765100000000 } from './migrations/1765100000000-console-listener-grants';
import { Recoveries1765200000000 } from './migrations/1765200000000-recoveries';
import { WebhookThrottle1765300000000 } from './migrations/1765300000000-webhook-throttle';
import { PortalLinks1765400000000 } from './migrations/1765400000000-portal-links';
import { ConsoleVolume1765500000000 } from './migrations/1765500000000-console-volume';
import { ConsoleSessions1765600000000 } from './migrations/1765600000000-console-sessions';
import { Retention1765700000000 } from './migrations/1765700000000-retention';
import { TokenFacts1765800000000 } from './migrations/1765800000000-token-facts';
import { Rebills1765900000000 } from './migrations/1765900000000-rebills';
import { OperatorRoles1766000000000 } from './migrations/1766000000000-operator-roles';
import { AuditRetention1766100000000 } from './migrations/1766100000000-audit-retention';
import { AcquirerAccounts1766200000000 } from './migrations/1766200000000-acquirer-accounts';
import { ConsoleRole1766300000000 } from './migrations/1766300000000-console-role';
import { AttemptTraces1766400000000 } from './migrations/1766400000000-attempt-traces';

export const MIGRATIONS = [
  Init1763800000000,
  Transactions1763900000000,
  Settlement1764000000000,
  Webhooks1764100000000,
  PendingSales1764200000000,
  Chargebacks1764300000000,
  OperationClaims1764400000000,
  MerchantPublicIds1764500000000,
  SealedWebhookSecrets1764600000000,
  FingerprintKids1764650000000,
  Operators1764700000000,
  MerchantRateLimits1764800000000,
  // Last: it grants on every table above (a migration after it that adds a table calls applyRoleGrants).
  DatabaseRoles1764900000000,
  Listeners1765000000000,
  ConsoleListenerGrants1765100000000,
  Recoveries1765200000000,
  WebhookThrottle1765300000000,
  PortalLinks1765400000000,
  ConsoleVolume1765500000000,
  ConsoleSessions1765600000000,
  Retention1765700000000,
  TokenFacts1765800000000,
  Rebills1765900000000,
  OperatorRoles1766000000000,
  AuditRetention1766100000000,
  AcquirerAccounts1766200000000,
  ConsoleRole1766300000000,
  AttemptTraces1766400000000,
];

/** How the gateway's connections to Postgres are made (DATABASE_URL, DB_POOL_SIZE, DATABASE_PREPARED_STATEMENTS). */
export interface DatabaseSettings {
  databaseUrl: string;
  /** Default true. False behind a pooler in transaction mode: preparedStatement() then sends unnamed statements. */
  preparedStatements?: boolean;
}

/** One definition for apps, the CLI and the migration runner; synchronize is never on. */
export function dataSourceOptions(db: DatabaseSettings | string, poolSize = 10): DataSourceOptions {
  const { databaseUrl, preparedStatements = true } = typeof db === 'string' ? { databaseUrl: db } : db;
  return {
    type: 'postgres',
    url: databaseUrl,
    // No entities: repositories speak SQL; TypeORM runs the migrations and pools connections.
    entities: [],
    migrations: MIGRATIONS,
    synchronize: false,
    migrationsRun: false,
    logging: false,
    // node-postgres ignores the keys it does not know; preparedStatement() reads its own from here.
    extra: { max: poolSize, connectionTimeoutMillis: 3000, [PREPARED_STATEMENTS]: preparedStatements },
  };
}
