import type { PrivateServer } from '../../scripts/lib/local-servers';
import type { PrivateRedisCluster } from '../../scripts/lib/redis-cluster';
import type { Infra } from './infra';

/** What the global setup hands to the global teardown (jest runs both in its main process). */
export interface TestRun {
  infra: Infra;
  /** The run's database, straight on the server (the migration runner's; what the teardown drops). */
  databaseUrl: string;
  /** Every lane's database (one per jest worker; the run's own database when there is one lane). */
  laneDatabaseUrls: string[];
  /** TEST_POSTGRES=pgbouncer: the run's own PgBouncer, which the apps, the CLI and the suites go through. */
  pooler?: PrivateServer;
  queuePrefix: string;
  /** Temp folder of the run: DATA_DIR and the leftovers registry. */
  scratch: string;
  /** TEST_REDIS=cluster: the run's own Redis Cluster, stopped by the teardown. */
  redisCluster?: PrivateRedisCluster;
}

export const RUN_STATE = Symbol.for('gateway.integration-run');
