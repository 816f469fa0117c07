import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { PrivateServer, startPrivateRedisServer } from './local-servers';
import { run, runOrThrow, waitUntil, which } from './processes';

export interface PrivateRedisCluster {
  /** The masters, each a private Redis server (stop one to take a node down). */
  readonly nodes: PrivateServer[];
  /** REDIS_CLUSTER_NODES for the apps: 127.0.0.1:<port>,… */
  readonly spec: string;
  destroy(): Promise<void>;
}

/**
 * A Redis Cluster of `masters` masters (no replicas) on loopback, each node in its own folder under
 * `dir` on a free port: the servers start with cluster mode on, `redis-cli --cluster create`
 * assigns the 16384 slots over them, and this waits until every node says cluster_state:ok.
 */
export async function startPrivateRedisCluster(opts: { dir: string; masters?: number }): Promise<PrivateRedisCluster> {
  const redisCli = which('redis-cli');
  if (!redisCli) throw new Error('redis-cli is not installed (it creates the cluster)');
  const nodes: PrivateServer[] = [];
  const destroy = async () => {
    await Promise.all(nodes.map((n) => n.destroy().catch(() => undefined)));
    rmSync(opts.dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < (opts.masters ?? 3); i++) {
      const dir = join(opts.dir, `node${i}`);
      nodes.push(
        await startPrivateRedisServer({
          dir,
          extraArgs: ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf')],
        }),
      );
    }
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    await runOrThrow(redisCli, ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], { timeoutMs: 30_000 });
    await waitUntil(
      'cluster_state:ok on every node',
      async () => {
        const states = await Promise.all(
          nodes.map((n) => run(redisCli, ['-p', String(n.port), 'cluster', 'info'], { timeoutMs: 5_000 }).then((r) => r.stdout)),
        );
        return states.every((s) => /cluster_state:ok/.test(s));
      },
      30_000,
      200,
    );
    return { nodes, spec: addresses.join(','), destroy };
  } catch (e) {
    await destroy();
    throw e;
  }
}
