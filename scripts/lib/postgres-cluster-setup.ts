import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PostgresUser } from './postgres-user';
import { run, runOrThrow } from './processes';

/** A private cluster's folder: creating it, the settings written at each start, and its tools run as the server's user. */
export type PgTool = (tool: string, args: string[], timeoutMs?: number) => Promise<unknown>;

/** The cluster's tools run as the server's user (`pg`), and whether its server runs now (`running`). */
export function clusterTools(bin: string, user: PostgresUser, dir: string, data: string): { pg: PgTool; running: () => Promise<boolean> } {
  const pg = (tool: string, args: string[], timeoutMs = 120_000) => {
    const [cmd, argv] = user.wrap(join(bin, tool), args);
    // cwd: the server user may not be allowed into ours, and tools warn when they can't chdir back.
    return runOrThrow(cmd, argv, { cwd: dir, timeoutMs, env: { ...process.env, LC_ALL: 'C' } });
  };
  const running = async () => (await run(...user.wrap(join(bin, 'pg_ctl'), ['-D', data, 'status']), { cwd: dir })).code === 0;
  return { pg, running };
}

/** Creates the cluster in `data`, its postgresql.conf including the settings file written at each start. */
export async function initCluster(pg: PgTool, data: string): Promise<void> {
  await pg('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
  // Our settings live in a file we rewrite at every start, so the port can change between runs.
  writeFileSync(
    join(data, 'postgresql.conf'),
    `${readFileSync(join(data, 'postgresql.conf'), 'utf8')}\ninclude_if_exists = 'gateway-local.conf'\n`,
  );
}

export function writeSettings(data: string, dir: string, port: number, durable: boolean, settings: string[]): void {
  const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;
  // A Unix socket path is limited to ~107 bytes; with a deep folder, go TCP-only rather than fail.
  const socketDir = `${dir}/.s.PGSQL.${port}`.length < 100 ? dir : '';
  const lines = [
    `listen_addresses = '127.0.0.1'`,
    `port = ${port}`,
    `unix_socket_directories = ${quote(socketDir)}`,
    `max_connections = 200`,
    ...(durable ? [] : ['fsync = off', 'synchronous_commit = off', 'full_page_writes = off']),
    ...settings,
  ];
  writeFileSync(join(data, 'gateway-local.conf'), lines.join('\n') + '\n', { mode: 0o644 });
}
