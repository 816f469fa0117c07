export interface RedisOptions {
  dir: string;
  port?: number;
  /** Append-only file on: queued jobs survive a restart (the quick start); off for tests. */
  persistent?: boolean;
  /**
   * Own process group, so a Ctrl-C in the terminal reaches only the quick start, which then stops
   * the apps before their Redis. Tests keep it in their group so it dies with them.
   */
  detached?: boolean;
  /** More redis-server arguments (a cluster node's, for instance). */
  extraArgs?: string[];
}

/** redis-server's command line for a private server on loopback, its files in `opts.dir`. */
export function redisServerArgs(opts: RedisOptions, port: number, logFile: string): string[] {
  return [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    opts.persistent ? 'yes' : 'no',
    // Written to disk every second: a restart loses at most the last second of jobs and events.
    '--appendfsync',
    'everysec',
    '--dir',
    opts.dir,
    '--logfile',
    logFile,
    '--daemonize',
    'no',
    ...(opts.extraArgs ?? []),
  ];
}
