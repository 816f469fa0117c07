import { execFileSync } from 'node:child_process';
import { chownSync, existsSync } from 'node:fs';
import { run, which } from './processes';

export interface PostgresUser {
  /** Turns a command into one that runs as the postgres user (unchanged when we are not root). */
  wrap(cmd: string, args: string[]): [string, string[]];
  /** Gives a folder we created to the user the server runs as. */
  own(dir: string): void;
}

/**
 * initdb and postgres refuse to run as root (a compromised server must not own the machine), so
 * when we are root they run as the `postgres` system account, in folders that account owns.
 */
export function postgresUser(): PostgresUser {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    return { wrap: (cmd, args) => [cmd, args], own: () => undefined };
  }
  let uid: number;
  let gid: number;
  try {
    uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  } catch {
    throw new Error('running as root, but there is no "postgres" user to run initdb/postgres as (PostgreSQL refuses to run as root)');
  }
  const runuser = which('runuser') ?? ['/usr/sbin/runuser', '/sbin/runuser'].find(existsSync);
  if (!runuser)
    throw new Error('running as root, but "runuser" (util-linux) is missing: it is needed to run Postgres as the postgres user');
  return {
    wrap: (cmd, args) => [runuser, ['-u', 'postgres', '--', cmd, ...args]],
    own: (dir) => chownSync(dir, uid, gid),
  };
}

/** Can the account the server runs as write here? Fails e.g. under /root (mode 0700). */
export async function postgresCanWrite(user: PostgresUser, dir: string): Promise<boolean> {
  const [cmd, args] = user.wrap('test', ['-w', dir, '-a', '-x', dir]);
  return (await run(cmd, args, { cwd: '/' })).code === 0;
}
