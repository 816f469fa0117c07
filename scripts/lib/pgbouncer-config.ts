import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface PgBouncerOptions {
  /** Folder for its settings, user list, log and pid file (created; given to the postgres user when we are root). */
  dir: string;
  /** The Postgres server it pools for (host and port; user, password and database are not used). */
  upstream: string;
  /** Who may log in (its auth_file); each gets a pool per database. */
  users: readonly string[];
  port?: number;
  /**
   * Server connections per database × user (default_pool_size). Default 20, the largest DB_POOL_SIZE
   * of an app, so one replica of each never waits on the pooler.
   */
  poolSize?: number;
}

/** Writes PgBouncer's user list and settings (see startPgBouncer) into `opts.dir`; returns the settings file's path. */
export function writePgBouncerConfig(opts: PgBouncerOptions, port: number, logFile: string, pidFile: string): string {
  const dir = opts.dir;
  const upstream = new URL(opts.upstream);
  const config = join(dir, 'pgbouncer.ini');
  const quoted = (s: string) => `"${s.replace(/"/g, '""')}"`;
  writeFileSync(join(dir, 'users.txt'), opts.users.map((u) => `${quoted(u)} ""`).join('\n') + '\n', { mode: 0o644 });
  const settings = [
    '[databases]',
    `* = host=${upstream.hostname.replace(/^\[|\]$/g, '')} port=${upstream.port || 5432}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'users.txt')}`,
    `admin_users = ${opts.users[0]}`,
    'pool_mode = transaction',
    `default_pool_size = ${opts.poolSize ?? 20}`,
    'max_client_conn = 2000',
    `logfile = ${logFile}`,
    `pidfile = ${pidFile}`,
  ];
  writeFileSync(config, settings.join('\n') + '\n', { mode: 0o644 });
  return config;
}
