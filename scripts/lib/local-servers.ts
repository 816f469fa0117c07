import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, Socket } from 'node:net';
import { join } from 'node:path';
import { run, runOrThrow, waitUntil, which, within } from './processes';

/**
 * Private Postgres clusters and Redis servers on loopback: the quick start's embedded default when
 * no server is running, and the fault tests' disposable instances (they stop and restart these,
 * which they must never do to a shared server). Also a private PgBouncer in front of a server, for
 * the suites and the bench that run the apps through a pooler in transaction mode.
 */
export interface PrivateServer {
  readonly kind: 'postgres' | 'redis' | 'pgbouncer';
  readonly port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres, redis://127.0.0.1:<port>, or for PgBouncer the upstream URL on its port */
  readonly url: string;
  readonly dir: string;
  readonly logFile: string;
  /** Starts it again on the same port with the same data folder. */
  start(): Promise<void>;
  /** Postgres: a pg_ctl shutdown mode; Redis: the signal sent to the server. */
  stop(how?: string): Promise<void>;
  /** Stops it and deletes its folder. */
  destroy(): Promise<void>;
  isRunning(): boolean;
  /** The server's process id while it runs (for cleanup records). */
  pid(): number | undefined;
}

// ---------------------------------------------------------------------------------------------
// Ports

/** A port the OS says is free now. Another process may take it before we bind it; callers retry. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/** A TCP connect, nothing more: tells "nothing listens" apart from "something answers wrongly". */
export function canConnect(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket: Socket = connect({ port, host });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** RESP PING over a raw socket so that readiness checks need no client library or retry logic. */
export function redisPing(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      reply += d.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
    socket.once('error', () => done(false));
  });
}

// ---------------------------------------------------------------------------------------------
// Finding the server programs

/** The folder with initdb, pg_ctl and postgres, or undefined when PostgreSQL is not installed. */
export function findPostgresBinDir(): string | undefined {
  const complete = (dir: string) => ['initdb', 'pg_ctl', 'postgres'].every((b) => existsSync(join(dir, b)));
  const candidates: string[] = [];
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    // pg_config comes with the client dev package, which a server install may lack
  }
  // Debian/Ubuntu keep server binaries off PATH, one folder per major version: prefer the newest.
  if (existsSync('/usr/lib/postgresql')) {
    const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join('/usr/lib/postgresql', v, 'bin')));
  }
  const initdb = which('initdb');
  if (initdb) candidates.push(join(initdb, '..'));
  return candidates.find(complete);
}

export function findRedisServer(): string | undefined {
  return which('redis-server');
}

/** Debian installs it in /usr/sbin, which a non-root PATH may lack. */
export function findPgBouncer(): string | undefined {
  return which('pgbouncer') ?? ['/usr/sbin/pgbouncer', '/usr/local/sbin/pgbouncer'].find(existsSync);
}

// ---------------------------------------------------------------------------------------------
// Running Postgres as its own user

interface PostgresUser {
  /** Turns a command into one that runs as the postgres user (unchanged when we are not root). */
  wrap(cmd: string, args: string[]): [string, string[]];
  /** Gives a folder we created to the user the server runs as. */
  own(dir: string): void;
}

/**
 * initdb and postgres refuse to run as root (a compromised server must not own the machine), so
 * when we are root they run as the `postgres` system account, in folders that account owns.
 */
function postgresUser(): PostgresUser {
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
async function postgresCanWrite(user: PostgresUser, dir: string): Promise<boolean> {
  const [cmd, args] = user.wrap('test', ['-w', dir, '-a', '-x', dir]);
  return (await run(cmd, args, { cwd: '/' })).code === 0;
}

// ---------------------------------------------------------------------------------------------
// Private Postgres

export interface PostgresOptions {
  /** Folder for the cluster (created); its `data` subfolder holds the cluster itself. */
  dir: string;
  /** Port to use; by default a free one. Ignored when the cluster in `dir` is already running. */
  port?: number;
  /** Tests trade crash safety for speed; a developer's sandbox data should survive a crash. */
  durable?: boolean;
  /** More postgresql.conf lines, e.g. `shared_preload_libraries = 'pg_stat_statements'` (bench). */
  settings?: string[];
}

/**
 * Creates (first time) and starts a cluster in `opts.dir`, trusting local connections as user
 * postgres on 127.0.0.1 only. A cluster left running there by an earlier process is adopted.
 */
export async function startPrivatePostgresCluster(opts: PostgresOptions): Promise<PrivateServer> {
  const bin = findPostgresBinDir();
  if (!bin) throw new Error('PostgreSQL server binaries (initdb, pg_ctl, postgres) are not installed');
  const user = postgresUser();
  const dir = opts.dir;
  const data = join(dir, 'data');
  const logFile = join(dir, 'postgres.log');
  mkdirSync(dir, { recursive: true });
  user.own(dir);
  if (!(await postgresCanWrite(user, dir))) {
    throw new Error(`the postgres user cannot write ${dir} (a parent folder is not accessible to it)`);
  }
  const pg = (tool: string, args: string[], timeoutMs = 120_000) => {
    const [cmd, argv] = user.wrap(join(bin, tool), args);
    // cwd: the server user may not be allowed into ours, and tools warn when they can't chdir back.
    return runOrThrow(cmd, argv, { cwd: dir, timeoutMs, env: { ...process.env, LC_ALL: 'C' } });
  };

  if (!existsSync(join(data, 'PG_VERSION'))) {
    await pg('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
    // Our settings live in a file we rewrite at every start, so the port can change between runs.
    writeFileSync(
      join(data, 'postgresql.conf'),
      `${readFileSync(join(data, 'postgresql.conf'), 'utf8')}\ninclude_if_exists = 'gateway-local.conf'\n`,
    );
  }

  const running = async () => (await run(...user.wrap(join(bin, 'pg_ctl'), ['-D', data, 'status']), { cwd: dir })).code === 0;
  let port = opts.port ?? (await freePort());
  if (await running()) {
    // postmaster.pid line 4 is the port the running server listens on.
    port = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[3]);
  } else {
    writeSettings(data, dir, port, opts.durable ?? false, opts.settings ?? []);
  }

  let up = false;
  const server: PrivateServer = {
    kind: 'postgres',
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dir,
    logFile,
    isRunning: () => up,
    pid: () => {
      try {
        return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]) || undefined;
      } catch {
        return undefined;
      }
    },
    async start() {
      if (await running()) {
        up = true;
        return;
      }
      await pg('pg_ctl', ['-D', data, '-l', logFile, '-w', '-t', '60', 'start']);
      up = true;
    },
    async stop(mode = 'fast') {
      if (await running()) await pg('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
      up = false;
    },
    async destroy() {
      try {
        await server.stop('immediate');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  await server.start();
  return server;
}

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

function writeSettings(data: string, dir: string, port: number, durable: boolean, settings: string[]): void {
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

// ---------------------------------------------------------------------------------------------
// Private Redis

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

export async function startPrivateRedisServer(opts: RedisOptions): Promise<PrivateServer> {
  const bin = findRedisServer();
  if (!bin) throw new Error('redis-server is not installed');
  mkdirSync(opts.dir, { recursive: true });
  const port = opts.port ?? (await freePort());
  const logFile = join(opts.dir, 'redis.log');
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    opts.persistent ? 'yes' : 'no',
    '--dir',
    opts.dir,
    '--logfile',
    logFile,
    '--daemonize',
    'no',
    ...(opts.extraArgs ?? []),
  ];
  const child = new ChildServer('redis-server', port, logFile);

  const server: PrivateServer = {
    kind: 'redis',
    port,
    url: `redis://127.0.0.1:${port}`,
    dir: opts.dir,
    logFile,
    isRunning: () => child.running(),
    pid: () => child.proc?.pid,
    start: () =>
      child.start(
        () => {
          const proc = spawn(bin, args, { stdio: 'ignore', detached: opts.detached ?? false });
          if (opts.detached) proc.unref();
          return proc;
        },
        () => redisPing(port),
      ),
    stop: (signal = 'SIGTERM') => child.stop(signal as NodeJS.Signals),
    async destroy() {
      try {
        await server.stop('SIGKILL');
      } finally {
        rmSync(opts.dir, { recursive: true, force: true });
      }
    },
  };
  await server.start();
  return server;
}

// ---------------------------------------------------------------------------------------------
// Private Redis Cluster

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

// ---------------------------------------------------------------------------------------------
// Private PgBouncer

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

/**
 * A PgBouncer on loopback in transaction mode in front of `upstream`, every database (`*`),
 * trusting the listed users on loopback (the server then authenticates them as it would the apps).
 * PgBouncer 1.18 keeps no prepared statements across transactions in this mode: the apps behind
 * it run with DATABASE_PREPARED_STATEMENTS=false. `url` is `upstream` on its port; `owner` (the
 * first of `users`) may also open its admin console (database `pgbouncer`: SHOW POOLS, SHOW SERVERS).
 */
export async function startPgBouncer(opts: PgBouncerOptions): Promise<PrivateServer> {
  const bin = findPgBouncer();
  if (!bin) throw new Error('pgbouncer is not installed (Debian: apt-get install pgbouncer)');
  const user = postgresUser(); // it refuses to run as root, like Postgres
  const dir = opts.dir;
  mkdirSync(dir, { recursive: true });
  user.own(dir);
  const upstream = new URL(opts.upstream);
  const port = opts.port ?? (await freePort());
  const logFile = join(dir, 'pgbouncer.log');
  const pidFile = join(dir, 'pgbouncer.pid');
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

  const pgbouncerPid = (): number | undefined => {
    try {
      return Number(readFileSync(pidFile, 'utf8').trim()) || undefined;
    } catch {
      return undefined;
    }
  };
  // Signal PgBouncer itself: runuser would pass SIGTERM on, but not SIGKILL.
  const child = new ChildServer('pgbouncer', port, logFile, (proc, signal) => {
    const own = pgbouncerPid();
    try {
      if (own) process.kill(own, signal);
    } finally {
      proc.kill(signal);
    }
  });
  const server: PrivateServer = {
    kind: 'pgbouncer',
    port,
    url: onLoopbackPort(opts.upstream, port),
    dir,
    logFile,
    isRunning: () => child.running(),
    // PgBouncer's own pid (under runuser when we are root): what a cleanup must signal.
    pid: () => (child.proc ? (pgbouncerPid() ?? child.proc.pid) : undefined),
    start: () =>
      child.start(
        () => spawn(...user.wrap(bin, [config]), { cwd: dir, stdio: 'ignore' }),
        async () => pgbouncerPid() !== undefined && (await canConnect(port)),
      ),
    async stop(signal = 'SIGTERM') {
      await child.stop(signal as NodeJS.Signals);
      rmSync(pidFile, { force: true });
    },
    async destroy() {
      try {
        await server.stop();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  await server.start();
  return server;
}

/** Where a private server answers: it listens on 127.0.0.1 only, and "localhost" may resolve to ::1. */
export function onLoopbackPort(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(port);
  return u.toString();
}

/** A server program run as our child: started until it answers, stopped with a signal, killed if it does not go. */
class ChildServer {
  proc: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    private readonly name: string,
    private readonly port: number,
    private readonly logFile: string,
    private readonly signal: (proc: ChildProcess, signal: NodeJS.Signals) => void = (proc, signal) => proc.kill(signal),
  ) {}

  running(): boolean {
    return this.proc !== undefined;
  }

  /** Spawns it and waits (15 s at most) until `ready`; if it exits or never is, it is killed and the error has its log's tail. */
  async start(spawnIt: () => ChildProcess, ready: () => Promise<boolean>): Promise<void> {
    if (this.proc) return;
    const proc = spawnIt();
    this.proc = proc;
    let gone = false;
    this.exited = new Promise((resolve) =>
      proc.once('exit', () => {
        gone = true;
        if (this.proc === proc) this.proc = undefined;
        resolve();
      }),
    );
    try {
      await waitUntil(
        `${this.name} on port ${this.port}`,
        async () => {
          if (gone) throw new Error(`${this.name} exited: ${logTail(this.logFile)}`);
          return ready();
        },
        15_000,
        100,
      );
    } catch (e) {
      this.send(proc, 'SIGKILL');
      throw e;
    }
  }

  /** Sends `signal`; SIGKILL after 10 s if it has not exited. */
  async stop(signal: NodeJS.Signals): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    this.send(proc, signal);
    if (
      !(await within(
        this.exited.then(() => true),
        10_000,
      ))
    ) {
      this.send(proc, 'SIGKILL');
      await this.exited;
    }
  }

  private send(proc: ChildProcess, signal: NodeJS.Signals): void {
    try {
      this.signal(proc, signal);
    } catch {
      // already gone
    }
  }
}

export function logTail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
