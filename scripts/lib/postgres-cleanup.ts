import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { findPostgresBinDir } from './local-servers';
import { postgresUser } from './postgres-user';
import { run } from './processes';

/**
 * For cleanup after a crashed test process: stops whatever cluster runs in `dir` (if any) without
 * waiting for clients, and deletes the folder.
 */
export async function discardPostgresCluster(dir: string): Promise<void> {
  const bin = findPostgresBinDir();
  const data = join(dir, 'data');
  if (bin && existsSync(join(data, 'postmaster.pid'))) {
    const [cmd, args] = postgresUser().wrap(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
    await run(cmd, args, { cwd: '/', timeoutMs: 30_000 });
  }
  rmSync(dir, { recursive: true, force: true });
}
