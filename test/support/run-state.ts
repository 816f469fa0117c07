import type { PrivateRedisCluster } from '../../scripts/lib/local-servers';
import type { Infra } from './infra';

/** What the global setup hands to the global teardown (jest runs both in its main process). */
export interface TestRun {
  infra: Infra;
  databaseUrl: string;
  queuePrefix: string;
  /** Temp folder of the run: DATA_DIR and the leftovers registry. */
  scratch: string;
  /** TEST_REDIS=cluster: the run's own Redis Cluster, stopped by the teardown. */
  redisCluster?: PrivateRedisCluster;
}

export const RUN_STATE = Symbol.for('gateway.integration-run');
