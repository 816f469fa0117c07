import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { PgBouncerOptions, writePgBouncerConfig } from './pgbouncer-config';
import { RedisOptions, redisServerArgs } from './redis-server-args';
import { clusterTools, initCluster, writeSettings } from './postgres-cluster-setup';
import { postgresCanWrite, postgresUser } from './postgres-user';
import { canConnect, redisPing } from './probes';
import { join } from 'node:path';
import { waitUntil, which, within } from './processes';

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

/**
 * A free port below Linux's ephemeral range (32768 and up), for a server started some seconds
 * later by another process (npm start binds its PORT after its migrations): a port the OS handed
 * out as ephemeral may meanwhile be taken by any outgoing connection, one below that range only by
 * another server.
 */
export async function freeServerPort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await isPortFree(port)) return port;
  }
  return freePort();
}

export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
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
  const { pg, running } = clusterTools(bin, user, dir, data);
  if (!existsSync(join(data, 'PG_VERSION'))) await initCluster(pg, data);

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

// ---------------------------------------------------------------------------------------------
// Private Redis

export async function startPrivateRedisServer(opts: RedisOptions): Promise<PrivateServer> {
  const bin = findRedisServer();
  if (!bin) throw new Error('redis-server is not installed');
  mkdirSync(opts.dir, { recursive: true });
  const port = opts.port ?? (await freePort());
  const logFile = join(opts.dir, 'redis.log');
  const args = redisServerArgs(opts, port, logFile);
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
// Private PgBouncer

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
  const port = opts.port ?? (await freePort());
  const logFile = join(dir, 'pgbouncer.log');
  const pidFile = join(dir, 'pgbouncer.pid');
  const config = writePgBouncerConfig(opts, port, logFile, pidFile);

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
