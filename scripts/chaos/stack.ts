import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { withDatabase } from '../lib/database';
import { operatorCliJson, runOperatorCli, CliRun } from '../lib/launcher';
import { freeServerPort, PrivateServer, startPrivatePostgresCluster, startPrivateRedisServer } from '../lib/local-servers';
import { within, waitUntil } from '../lib/processes';
import { RunningSimulator, simulatorVariables, startSimulator } from '../lib/simulators';
import { DelayProxy } from './redis-proxy';

/** The replicas the run starts and kills: two of each app on a sale's path. */
export const SCALE = 'api=2,tokenizer=2,settlement=2,notifier=2';
export const KILLABLE = ['api-1', 'api-2', 'tokenizer-1', 'tokenizer-2', 'settlement-1', 'settlement-2', 'notifier-1', 'notifier-2'];

/** The production merchants' acquirer secrets (the simulators take any); the log scan looks for them. */
export const ACQUIRER_SECRETS = ['chaos-cielo-secret-0001', 'chaos-erede-secret-0001'] as const;

export interface Merchant {
  kind: 'sandbox' | 'cielo' | 'erede';
  merchantId: string;
  merchantKey: string;
  webhookSecret: string;
}

/**
 * The stack as deployed, on servers of the run's own: a private Postgres cluster and Redis server
 * (the run restarts and stops them, never the machine's shared ones), Redis reached through the
 * delay proxy, both acquirer simulators, and `npm start --scale api=2,tokenizer=2,settlement=2,notifier=2`
 * (the launcher that restarts what dies) pointed at them.
 */
export class ChaosStack {
  apiUrls: string[] = [];
  /** Every replica's /health and /metrics, by label. */
  appUrls = new Map<string, string>();
  operatorToken = '';
  sandbox!: Merchant;

  private constructor(
    readonly root: string,
    readonly dir: string,
    readonly pg: PrivateServer,
    readonly redis: PrivateServer,
    readonly proxy: DelayProxy,
    readonly simulators: Record<'cielo' | 'erede', RunningSimulator>,
    readonly env: NodeJS.ProcessEnv,
    private readonly launcher: ChildProcess,
    private readonly launcherExited: Promise<number | null>,
  ) {}

  static async start(root: string, dir: string, budgets: Record<string, string>, say: (line: string) => void): Promise<ChaosStack> {
    mkdirSync(dir, { recursive: true });
    const started: { stop(): Promise<unknown> }[] = [];
    const undo = async () => {
      for (const s of started.reverse()) await s.stop().catch(() => undefined);
    };
    const all = async <T>(starting: Promise<T>[], stop: (started: T) => Promise<unknown>): Promise<T[]> => {
      const settled = await Promise.allSettled(starting);
      for (const r of settled) if (r.status === 'fulfilled') started.push({ stop: () => stop(r.value) });
      const failed = settled.find((r) => r.status === 'rejected');
      if (failed) {
        await undo();
        throw failed.reason;
      }
      return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
    };
    const [pg, redis] = await all<PrivateServer>(
      [
        // Durable (fsync, synchronous commits) as in production: an immediate stop must not lose a commit the gateway answered for.
        startPrivatePostgresCluster({ dir: join(dir, 'pg'), durable: true, settings: ['max_connections = 300'] }),
        startPrivateRedisServer({ dir: join(dir, 'redis'), persistent: true }),
      ],
      // Postgres's stop takes a pg_ctl mode, Redis's a signal.
      (server) => server.stop(server.kind === 'postgres' ? 'immediate' : 'SIGKILL'),
    );
    const [proxy] = await all([DelayProxy.start(redis.port)], (p) => p.close());
    const [cielo, erede] = await all(
      [
        startSimulator(root, 'cielo', 0, { logFile: join(dir, 'simulator-cielo.log') }),
        startSimulator(root, 'erede', 0, { logFile: join(dir, 'simulator-erede.log') }),
      ],
      (sim) => sim.stop(),
    );
    const env = await stackEnv(join(dir, 'data'), budgets, withDatabase(pg.url, 'gateway_chaos'), proxy.url, cielo.url, erede.url);
    const launcher = spawn(process.execPath, [join(root, 'dist', 'scripts', 'start.js'), '--scale', SCALE], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const launcherExited = new Promise<number | null>((resolve) => launcher.once('close', (code) => resolve(code)));
    const stack = new ChaosStack(root, dir, pg, redis, proxy, { cielo, erede }, env, launcher, launcherExited);
    try {
      await stack.follow(join(dir, 'launcher.log'), say);
      return stack;
    } catch (e) {
      await stack.stop();
      throw e;
    }
  }

  /** Keeps the launcher's output in `logFile`, and waits for its welcome: every replica healthy. */
  private async follow(logFile: string, say: (line: string) => void): Promise<void> {
    const log = createWriteStream(logFile, { flags: 'a' });
    log.on('error', () => undefined);
    void this.launcherExited.then(() => log.end());
    let welcomed = false;
    this.launcher.stderr!.pipe(log, { end: false });
    createInterface({ input: this.launcher.stdout! }).on('line', (line) => {
      // The welcome prints the sandbox merchant's credentials and the admin's token for the
      // developer's terminal; the run's log keeps everything else (and is scanned for them).
      log.write(
        /merchantKey|webhookSecret|GATEWAY_OPERATOR_TOKEN=/.test(line) ? '(a credential line of the welcome, not kept)\n' : line + '\n',
      );
      const healthy = /^(\S+): healthy, \/health and \/metrics on (\S+)/.exec(line);
      if (healthy) this.appUrls.set(healthy[1], healthy[2]);
      if (/^Logs: /.test(line)) welcomed = true;
      // The launcher's own words on replicas it restarts: part of the run's story.
      if (/exited unexpectedly|restarted and healthy|restarted but not healthy|cannot be restarted/.test(line))
        say(`  launcher: ${line.trim()}`);
    });
    await waitUntil(
      'the stack (npm start) to be healthy',
      () => {
        if (!this.launcherRunning())
          throw new Error(`npm start exited (${this.launcher.exitCode ?? this.launcher.signalCode}); see ${logFile}`);
        return Promise.resolve(welcomed);
      },
      180_000,
      250,
    );
    this.apiUrls = ['api-1', 'api-2'].map((l) => {
      const url = this.appUrls.get(l);
      if (!url) throw new Error(`npm start did not say where ${l} listens; see ${logFile}`);
      return url;
    });
    const dataDir = this.env.DATA_DIR!;
    this.operatorToken = (JSON.parse(readFileSync(join(dataDir, 'dev-operator.json'), 'utf8')) as { token: string }).token;
    const sandbox = JSON.parse(readFileSync(join(dataDir, 'sandbox-merchant.json'), 'utf8')) as Merchant;
    this.sandbox = { ...sandbox, kind: 'sandbox' };
  }

  /** The environment the operator CLI runs with: the stack's database and keys, the dev admin's token. */
  get cliEnv(): NodeJS.ProcessEnv {
    return { ...this.env, NODE_ENV: 'development', GATEWAY_OPERATOR_TOKEN: this.operatorToken };
  }

  cli<T>(args: string[], timeoutMs = 120_000): Promise<T> {
    return operatorCliJson<T>(this.root, args, this.cliEnv, timeoutMs);
  }

  cliRaw<T>(args: string[], timeoutMs = 300_000): Promise<CliRun<T>> {
    return runOperatorCli<T>(this.root, args, this.cliEnv, timeoutMs);
  }

  /** A merchant on Cielo (26) or e.Rede (27), with an account at the simulator, or one more sandbox merchant. */
  async merchant(kind: Merchant['kind']): Promise<Merchant> {
    const made =
      kind === 'sandbox'
        ? await this.cli<Merchant>(['merchant:create', '--name', `chaos ${kind}`])
        : await this.cli<Merchant>(['merchant:create', '--name', `chaos ${kind}`, '--environment', 'production']);
    if (kind !== 'sandbox') {
      const account =
        kind === 'cielo'
          ? ['--acquirer', '26', '--account', '7f1a0c52-3b9e-4a57-9d1c-0e2b4c6d8f10']
          : ['--acquirer', '27', '--account', '12345678'];
      await this.cli([
        'merchant:set-acquirer',
        '--merchant',
        made.merchantId,
        ...account,
        '--secret',
        ACQUIRER_SECRETS[kind === 'cielo' ? 0 : 1],
      ]);
    }
    await this.unlimited(made.merchantId);
    return { ...made, kind };
  }

  async unlimited(merchantId: string): Promise<void> {
    await this.cli(['merchant:set-limits', '--merchant', merchantId, '--reads', '100000', '--writes', '100000']);
  }

  /** The keys the stack runs with (npm start's development keys): each key's base64 value, for the log scan. */
  keyMaterial(): string[] {
    const file = readFileSync(join(this.env.DATA_DIR!, 'dev-keys.env'), 'utf8');
    return [...file.matchAll(/[A-Za-z0-9+/]{40,}={0,2}/g)].map((m) => m[0]);
  }

  /** The pid of each running replica, by its label (REPLICA_NAME in its environment). */
  replicas(): Map<string, number> {
    const out = new Map<string, number>();
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (ppid !== this.launcher.pid) continue;
        const name = /(?:^|\0)REPLICA_NAME=([^\0]*)/.exec(readFileSync(`/proc/${entry}/environ`, 'utf8'));
        if (name) out.set(name[1], Number(entry));
      } catch {
        // gone meanwhile
      }
    }
    return out;
  }

  /** SIGKILL: a crash, as far as the replica can tell. Undefined when it is not running (being restarted). */
  kill(label: string): number | undefined {
    const pid = this.replicas().get(label);
    if (pid === undefined) return undefined;
    try {
      process.kill(pid, 'SIGKILL');
      return pid;
    } catch {
      return undefined; // it exited between the look and the kill
    }
  }

  /** Whether the launcher is still running (it stops only when asked, or when it cannot restart a replica). */
  launcherRunning(): boolean {
    return this.launcher.exitCode === null && this.launcher.signalCode === null;
  }

  get logsDir(): string {
    return join(this.dir, 'data', 'logs');
  }

  /** Ctrl-C to the launcher (it stops the apps), then the simulators, the proxy and the servers; each step whatever the others did. */
  stop(): Promise<void> {
    // Once, however many ask (the run's end and a Ctrl-C).
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private stopping: Promise<void> | undefined;

  private async stopOnce(): Promise<void> {
    const step = async (what: string, run: () => Promise<unknown>) => {
      try {
        await run();
      } catch (e) {
        process.stdout.write(`stopping ${what}: ${(e as Error).message}\n`);
      }
    };
    await step('the launcher', async () => {
      if (!this.launcherRunning()) return;
      this.launcher.kill('SIGINT');
      // It stops the replicas one by one, each with a grace of 20 s.
      if ((await within(this.launcherExited, 240_000)) !== undefined) return;
      for (const pid of this.replicas().values()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      this.launcher.kill('SIGKILL');
    });
    await step('the simulators', () => Promise.all([this.simulators.cielo.stop(), this.simulators.erede.stop()]));
    await step('the Redis proxy', () => this.proxy.close());
    await step('Redis', () => this.redis.stop('SIGTERM'));
    await step('Postgres', () => this.pg.stop('fast'));
  }
}

/** What npm start runs with: the run's servers, simulators and budgets; no operator credentials of the caller's. */
async function stackEnv(
  dataDir: string,
  budgets: Record<string, string>,
  databaseUrl: string,
  redisUrl: string,
  cieloUrl: string,
  eredeUrl: string,
): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...budgets,
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_CLUSTER_NODES: '',
    QUEUE_PREFIX: 'gwchaos',
    PORT: String(await freeServerPort()),
    CONSOLE_PORT: String(await freeServerPort()),
    ...simulatorVariables('cielo', cieloUrl),
    ...simulatorVariables('erede', eredeUrl),
    // Changed merchants' limits and accounts apply within a second.
    MERCHANT_CACHE_MS: '1000',
    ACQUIRER_ACCOUNT_CACHE_MS: '1000',
  };
  delete env.GATEWAY_OPERATOR_TOKEN;
  delete env.GATEWAY_ADMIN_URL;
  return env;
}
