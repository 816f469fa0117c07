/**
 * Quick start (`npm start`): the gateway on a developer's machine, from a fresh clone.
 *
 * Postgres and Redis are real dependencies, so first make sure both answer: use running servers,
 * else Docker Compose, else private servers under DATA_DIR (when PostgreSQL and Redis are
 * installed). Then the one-time development state (keys, database, sandbox merchant), then the
 * four apps as child processes until Ctrl-C. Running it again reuses everything it made.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { createHash, randomBytes } from 'node:crypto';
import { Client } from 'pg';
import {
  AppName,
  APPS,
  appEntry,
  cliEntry,
  LaunchedApp,
  launchApp,
  migrateDatabase,
  runOperatorCli,
  stopApp,
  waitForHealth,
} from './lib/launcher';
import { replicaName, replicaPorts, Scale, scaleFromArgs } from './lib/scale';
import {
  databaseName,
  DEFAULT_DATABASE_URL,
  DEFAULT_REDIS_URL,
  isLoopbackUrl,
  probePostgres,
  probeRedis,
  Probe,
  redactUrl,
  onLoopbackPort,
  roleUrl,
  urlPort,
} from './lib/database';
import { ensureDevKeys, KEY_VARIABLES, KeySet } from './lib/dev-keys';
import { bootstrapAdmin, operatorTokenActive } from './lib/operators';
import { compose, dockerEngineAvailable } from './lib/docker';
import {
  findPostgresBinDir,
  findRedisServer,
  freePort,
  isPortFree,
  logTail,
  PrivateServer,
  startPrivatePostgresCluster,
  startPrivateRedisServer,
} from './lib/local-servers';
import { migrateEntry, repoRoot, waitUntil } from './lib/processes';

const HEALTH_TIMEOUT_MS = 90_000;

interface SandboxMerchant {
  merchantId: string;
  merchantKey: string;
  webhookSecret: string;
}

/** A failure we can explain in plain words: printed without a stack trace. */
class StartError extends Error {}

const say = (line = '') => process.stdout.write(line + '\n');

// ---------------------------------------------------------------------------------------------
// Shutdown: undo what we started, newest first (apps before the servers they use).

const undo: { what: string; run: () => Promise<void> }[] = [];
const running: LaunchedApp[] = [];
let shuttingDown = false;

async function shutdown(exitCode: number): Promise<never> {
  if (!shuttingDown) {
    shuttingDown = true;
    for (const step of undo.reverse()) {
      try {
        await step.run();
      } catch (e) {
        say(`could not ${step.what}: ${(e as Error).message}`);
      }
    }
    say(exitCode === 0 ? 'stopped' : 'stopped after a failure');
  }
  process.exit(exitCode);
}

function installSignalHandlers(): void {
  const onSignal = (signal: NodeJS.Signals) => {
    if (shuttingDown) {
      // A second Ctrl-C: the user does not want to wait for a graceful drain.
      say(`${signal} again: killing the apps`);
      for (const app of running) app.proc.kill('SIGKILL');
      process.exit(130);
    }
    say(`\n${signal}: stopping (Ctrl-C again to force)`);
    void shutdown(0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Our children run in their own process groups; if we die of an error, take them with us.
  process.on('exit', () => running.forEach((app) => app.proc.exitCode === null && app.proc.kill('SIGKILL')));
}

// ---------------------------------------------------------------------------------------------
// Postgres and Redis

interface Dependency {
  kind: 'postgres' | 'redis';
  variable: 'DATABASE_URL' | 'REDIS_URL';
  url: string;
  defaultPort: number;
  probe: Probe;
}

async function ensureInfrastructure(root: string, dataDir: string, keys: KeySet): Promise<{ databaseUrl: string; redisUrl: string }> {
  const deps: Dependency[] = [
    {
      kind: 'postgres',
      variable: 'DATABASE_URL',
      url: process.env.DATABASE_URL || DEFAULT_DATABASE_URL,
      defaultPort: 5432,
      probe: { ok: true },
    },
    { kind: 'redis', variable: 'REDIS_URL', url: process.env.REDIS_URL || DEFAULT_REDIS_URL, defaultPort: 6379, probe: { ok: true } },
  ];
  for (const dep of deps) {
    dep.probe = dep.kind === 'postgres' ? await probePostgres(dep.url) : await probeRedis(dep.url);
    say(`${dep.kind}: ${redactUrl(dep.url)} ${dep.probe.ok ? 'is up' : `is not reachable (${dep.probe.error})`}`);
  }
  const down = deps.filter((d) => !d.probe.ok);
  if (down.length > 0) await provide(root, dataDir, keys, down);
  return { databaseUrl: deps[0].url, redisUrl: deps[1].url };
}

/** Starts what is missing, updating each dependency's URL to where it now answers. */
async function provide(root: string, dataDir: string, keys: KeySet, down: Dependency[]): Promise<void> {
  const remote = down.find((d) => !isLoopbackUrl(d.url));
  if (remote) {
    // We only stand in for servers on this machine; a remote URL is the user's to fix.
    throw new StartError(
      `${remote.variable} points at ${redactUrl(remote.url)}, which is not reachable. Start it, or unset ${remote.variable} to use a local server.`,
    );
  }
  // Compose publishes the standard ports; it can stand in only where those are what we need and free.
  const composeFits = down.every((d) => !d.probe.ok && !d.probe.portOpen && urlPort(d.url, d.defaultPort) === d.defaultPort);
  if (composeFits && (await dockerEngineAvailable())) {
    await startWithCompose(root, keys, down);
    return;
  }
  const missing = down.filter((d) => (d.kind === 'postgres' ? !findPostgresBinDir() : !findRedisServer()));
  if (missing.length > 0) throw new StartError(installHelp(missing));
  for (const dep of down) {
    dep.url = dep.kind === 'postgres' ? await startPrivatePostgres(dataDir, dep) : await startPrivateRedis(dataDir, dep);
  }
}

async function startWithCompose(root: string, keys: KeySet, down: Dependency[]): Promise<void> {
  const services = down.map((d) => d.kind);
  say(`starting ${services.join(' and ')} with Docker Compose…`);
  // The compose file reads the keys for the apps; pass ours so it never needs the user's shell to.
  const env = { ...keys, ...process.env };
  await compose(root, ['up', '-d', ...services], env);
  undo.push({ what: `stop the ${services.join('/')} containers`, run: () => compose(root, ['stop', ...services], env) });
  for (const dep of down) {
    const probe = dep.kind === 'postgres' ? probePostgres : probeRedis;
    await waitUntil(`${dep.kind} in Docker`, async () => (await probe(dep.url)).ok, 120_000, 500);
  }
}

/** Our default port when it is free; a spare one when something else (unusable to us) holds it. */
async function choosePort(dep: Dependency): Promise<number> {
  const wanted = urlPort(dep.url, dep.defaultPort);
  return (await isPortFree(wanted)) ? wanted : freePort();
}

async function startPrivatePostgres(dataDir: string, dep: Dependency): Promise<string> {
  const port = await choosePort(dep);
  let server: PrivateServer;
  try {
    server = await startPrivatePostgresCluster({ dir: join(dataDir, 'pg'), port, durable: true });
  } catch (e) {
    if (!/cannot write/.test((e as Error).message)) throw e;
    // DATA_DIR under e.g. /root is closed to the postgres user: keep the cluster in a temp folder,
    // one per DATA_DIR so two checkouts don't share a database.
    const dir = join(tmpdir(), `gateway-pg-${createHash('sha256').update(dataDir).digest('hex').slice(0, 8)}`);
    say(`(${(e as Error).message}; keeping the Postgres cluster in ${dir} instead)`);
    server = await startPrivatePostgresCluster({ dir, port, durable: true });
  }
  undo.push({ what: 'stop the private Postgres', run: () => server.stop('fast') });
  say(`postgres: started a private server on 127.0.0.1:${server.port} (data in ${shortPath(server.dir)})`);
  return onLoopbackPort(dep.url, server.port);
}

async function startPrivateRedis(dataDir: string, dep: Dependency): Promise<string> {
  const server = await startPrivateRedisServer({
    dir: join(dataDir, 'redis'),
    port: await choosePort(dep),
    persistent: true,
    detached: true,
  });
  undo.push({ what: 'stop the private Redis', run: () => server.stop('SIGTERM') });
  say(`redis: started a private server on 127.0.0.1:${server.port} (data in ${shortPath(server.dir)})`);
  return onLoopbackPort(dep.url, server.port);
}

function installHelp(missing: Dependency[]): string {
  const names = missing.map((d) => (d.kind === 'postgres' ? 'PostgreSQL' : 'Redis')).join(' and ');
  return [
    `${names} ${missing.length > 1 ? 'are' : 'is'} not running, no Docker engine answers, and ${names} ${missing.length > 1 ? 'are' : 'is'} not installed, so there is nothing to start.`,
    'Do one of these, then run "npm start" again:',
    '  - start Docker (https://docs.docker.com/get-docker/): the quick start then runs docker compose up -d postgres redis',
    '  - install the servers (the quick start runs private instances of them under DATA_DIR):',
    '      Debian/Ubuntu: sudo apt-get install postgresql redis-server',
    '      Fedora:        sudo dnf install postgresql-server redis',
    '      macOS:         brew install postgresql@16 redis',
    '  - or set DATABASE_URL / REDIS_URL to servers you already run',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// One-time development state

function requireBuild(root: string): void {
  const missing = [...APPS.map((a) => appEntry(root, a.name)), cliEntry(root), migrateEntry(root)].filter((f) => !existsSync(f));
  if (missing.length)
    throw new StartError(`the build is missing ${missing.map(shortPath).join(', ')}: run "npm run build" (npm start does)`);
}

async function prepareDatabase(root: string, env: NodeJS.ProcessEnv): Promise<void> {
  const { created, migrations } = await migrateDatabase(root, env).catch((e: Error) => {
    throw new StartError(e.message);
  });
  if (created) say(`postgres: created database ${databaseName(env.DATABASE_URL!)}`);
  say(migrations.length ? `postgres: applied migrations ${migrations.join(', ')}` : 'postgres: schema is up to date');
}

/** Created once; later runs reuse it, unless the database it lived in was reset. */
async function ensureSandboxMerchant(root: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<SandboxMerchant> {
  const file = join(dataDir, 'sandbox-merchant.json');
  const saved = existsSync(file) ? parseJson<SandboxMerchant>(readFileSync(file, 'utf8')) : undefined;
  if (saved?.merchantId && (await merchantExists(env.DATABASE_URL!, saved.merchantId))) return saved;
  if (saved) say('the saved sandbox merchant is not in this database (was it reset?): creating a new one');
  const r = await runOperatorCli<SandboxMerchant>(root, ['merchant:create', '--name', 'sandbox'], env);
  if (r.code !== 0 || r.json === undefined) throw new StartError(`creating the sandbox merchant failed:\n${r.stderr.trim()}`);
  const merchant = r.json;
  writeFileSync(file, JSON.stringify(merchant, null, 2) + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return merchant;
}

interface DevOperator {
  operator: string;
  token: string;
}

/**
 * The developer's admin operator: bootstrapped on a fresh database (operator:create without a
 * token), its token saved next to the sandbox merchant and passed as GATEWAY_OPERATOR_TOKEN to
 * the CLI calls of this script (never to the apps, which do not need it). Kept while it is active;
 * with an active admin but no usable saved token, the developer's own GATEWAY_OPERATOR_TOKEN (if any) is what the CLI uses.
 */
async function ensureDevOperator(root: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<DevOperator | undefined> {
  const file = join(dataDir, 'dev-operator.json');
  const saved = existsSync(file) ? parseJson<DevOperator>(readFileSync(file, 'utf8')) : undefined;
  if (saved?.token && (await operatorTokenActive(env.DATABASE_URL!, saved.token)) !== false) return saved;
  let issued: DevOperator;
  try {
    issued = await bootstrapAdmin(root, env, `dev-admin-${randomBytes(3).toString('hex')}`);
  } catch (e) {
    say(`no development admin: ${(e as Error).message.split('\n')[0]}`);
    say('(an active admin exists: have it run operator:create for you, then set GATEWAY_OPERATOR_TOKEN)');
    return undefined;
  }
  writeFileSync(file, JSON.stringify({ operator: issued.operator, token: issued.token }, null, 2) + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  say(`created the development admin ${issued.operator}`);
  return issued;
}

async function merchantExists(databaseUrl: string, merchantId: string): Promise<boolean> {
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    // A saved merchant has its public id (or, saved before public ids, its UUID).
    const { rowCount } = await client.query('SELECT 1 FROM merchants WHERE public_id = $1 OR id::text = lower($1)', [merchantId]);
    return rowCount === 1;
  } catch {
    // If the schema moved on and we can't tell, keep the saved merchant rather than pile up new ones.
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** What every child gets: our environment, the dev keys where it sets none, and the servers. */
function appEnvironment(keys: KeySet, dataDir: string, infra: { databaseUrl: string; redisUrl: string }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of KEY_VARIABLES) if (!env[k]) env[k] = keys[k];
  return {
    ...env,
    DATABASE_URL: infra.databaseUrl,
    REDIS_URL: infra.redisUrl,
    DATA_DIR: dataDir,
    NODE_ENV: 'development',
    // The sandbox merchant's listener is usually on this machine: webhooks may reach loopback.
    WEBHOOK_ALLOW_NETWORKS: env.WEBHOOK_ALLOW_NETWORKS ?? '127.0.0.0/8,::1/128',
  };
}

// ---------------------------------------------------------------------------------------------
// The apps

async function startApps(root: string, env: NodeJS.ProcessEnv, logsDir: string, scale: Scale): Promise<LaunchedApp[]> {
  const host = env.HOST || '127.0.0.1';
  // An API bound to every interface is still reached on loopback for the health check.
  const healthHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  // Every port settled before anything starts, so a busy API port stops us with nothing to undo.
  const first = {} as Record<AppName, number>;
  for (const spec of APPS) first[spec.name] = await appPort(spec.name, spec.defaultPort, env);
  const defaults = Object.fromEntries(APPS.map((a) => [a.name, a.name === 'api' ? first.api : a.defaultPort])) as Record<AppName, number>;
  const ports = await replicaPorts(scale, defaults, first, (port) => isPortFree(port, port === first.api ? healthHost : '127.0.0.1'));
  for (const spec of APPS) {
    for (let i = 0; i < scale[spec.name]; i++) {
      const label = replicaName(spec.name, i + 1, scale[spec.name]);
      const logFile = join(logsDir, `${label}.log`);
      // Keep the previous run's log: after a crash, the interesting lines are usually there.
      if (existsSync(logFile)) renameSync(logFile, `${logFile}.1`);
      // Each app as its own database role (the migration, above, ran as DATABASE_URL's user: the owner).
      // Own process group: a terminal Ctrl-C reaches only us, and we stop the apps in order.
      const app = launchApp({
        root,
        name: spec.name,
        label,
        // The admin app stays on loopback whatever HOST the api takes; the portal links its
        // commands print start at the api.
        env:
          spec.name === 'admin'
            ? {
                ...env,
                REPLICA_NAME: label,
                HOST: '127.0.0.1',
                PUBLIC_BASE_URL: env.PUBLIC_BASE_URL || `http://${healthHost}:${first.api}`,
              }
            : { ...env, REPLICA_NAME: label },
        port: ports[spec.name][i],
        logFile,
        healthHost: spec.name === 'api' ? healthHost : '127.0.0.1',
        detached: true,
        console: true,
      });
      void app.exited.then(({ code, signal }) => {
        if (!app.stopRequested) onUnexpectedExit(app, signal ? `killed by ${signal}` : `exit code ${code}`);
      });
      running.push(app);
      // Undo runs newest first: the API stops before the workers, so no new work arrives while they drain.
      undo.push({ what: `stop ${label}`, run: () => stopApp(app, { say }).then(() => undefined) });
    }
  }
  return running;
}

/** The API's port is what the user was told to use, so a busy one is an error; a worker's health port may move. */
async function appPort(name: string, defaultPort: number, env: NodeJS.ProcessEnv): Promise<number> {
  if (name === 'api') {
    const port = Number(env.PORT || defaultPort);
    if (!(await isPortFree(port, env.HOST && env.HOST !== '0.0.0.0' && env.HOST !== '::' ? env.HOST : '127.0.0.1'))) {
      throw new StartError(`port ${port} is in use (is the gateway already running?). Stop what uses it, or set PORT.`);
    }
    return port;
  }
  if (await isPortFree(defaultPort)) return defaultPort;
  const port = await freePort();
  say(`${name}: port ${defaultPort} is in use; its /health and /metrics are on ${port} instead`);
  return port;
}

function onUnexpectedExit(app: LaunchedApp, how: string): void {
  if (shuttingDown) return;
  say(`\n${app.label} exited unexpectedly (${how}). Last lines of ${shortPath(app.logFile)}:`);
  say(logTail(app.logFile, 15));
  say('stopping the other apps');
  void shutdown(1);
}

async function waitUntilHealthy(apps: LaunchedApp[]): Promise<void> {
  await Promise.all(
    apps.map(async (app) => {
      try {
        await waitForHealth(app, HEALTH_TIMEOUT_MS, 300);
      } catch {
        throw new StartError(
          `${app.label} did not become healthy at ${app.url}/health within ${HEALTH_TIMEOUT_MS / 1000} s. Last lines of ${shortPath(app.logFile)}:\n${logTail(app.logFile, 15)}`,
        );
      }
      say(`${app.label}: healthy, /health and /metrics on ${app.url}`);
    }),
  );
}

function printWelcome(
  merchant: SandboxMerchant,
  operator: DevOperator | undefined,
  dataDir: string,
  apps: LaunchedApp[],
  env: NodeJS.ProcessEnv,
): void {
  const apiHost = env.HOST && env.HOST !== '0.0.0.0' && env.HOST !== '::' ? env.HOST : '127.0.0.1';
  const apis = apps.filter((a) => a.name === 'api');
  const base = `http://${apiHost}:${apis[0].port}`;
  say('');
  say(`Sandbox merchant (saved in ${shortPath(join(dataDir, 'sandbox-merchant.json'))}):`);
  say(`  merchantId     ${merchant.merchantId}`);
  say(`  merchantKey    ${merchant.merchantKey}`);
  say(`  webhookSecret  ${merchant.webhookSecret}`);
  say('');
  say('Processes (each with /health and /metrics):');
  const width = Math.max(...apps.map((a) => a.label.length));
  for (const app of apps) say(`  ${app.label.padEnd(width)}  pid ${String(app.pid).padEnd(7)} ${app.url}`);
  say('');
  say(`API listening on ${base}`);
  if (apis.length > 1)
    say(
      `  (and on ${apis
        .slice(1)
        .map((a) => `http://${apiHost}:${a.port}`)
        .join(', ')}: put a balancer in front to share the load)`,
    );
  say(`API docs: ${base}/docs`);
  if (operator) {
    say(`Development admin (saved in ${shortPath(join(dataDir, 'dev-operator.json'))}): ${operator.operator}`);
    say(`  export GATEWAY_OPERATOR_TOKEN=${operator.token}   # for npm run cli`);
  }
  const admin = apps.find((a) => a.name === 'admin');
  say(`Operator dashboard: ${base}/admin/queues (Authorization: Bearer <GATEWAY_OPERATOR_TOKEN>)`);
  if (admin) say(`Operator CLI: GATEWAY_ADMIN_URL=${admin.url} npm run cli -- <command> (runs on the admin app, as your token's role)`);
  say(
    `Break-glass commands (key rotations, retention:run): DATABASE_URL=${redactUrl(roleUrl(env.DATABASE_URL!, 'cli', {}))} npm run cli -- <command>`,
  );
  say(`Logs: ${shortPath(join(dataDir, 'logs'))}/<app>.log (a replica's: <app>-<n>.log). Ctrl-C stops everything.`);
}

// ---------------------------------------------------------------------------------------------

function parseJson<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

function shortPath(p: string): string {
  const rel = relative(process.cwd(), p);
  return rel && !rel.startsWith('..') ? rel : p;
}

async function main(): Promise<void> {
  installSignalHandlers();
  // Checked before anything starts: a mistyped --scale costs nothing.
  let scale: Scale;
  try {
    scale = scaleFromArgs(process.argv.slice(2));
  } catch (e) {
    throw new StartError((e as Error).message);
  }
  const root = repoRoot();
  // Absolute, because the children resolve it against their own working directory.
  const dataDir = resolve(process.env.DATA_DIR || '.data');
  const logsDir = join(dataDir, 'logs');
  mkdirSync(logsDir, { recursive: true });

  requireBuild(root);
  const { keys, created } = ensureDevKeys(dataDir);
  say(
    created
      ? `generated development keys in ${shortPath(join(dataDir, 'dev-keys.env'))}`
      : `using development keys from ${shortPath(join(dataDir, 'dev-keys.env'))}`,
  );
  const infra = await ensureInfrastructure(root, dataDir, keys);
  const env = appEnvironment(keys, dataDir, infra);
  await prepareDatabase(root, env);
  const operator = await ensureDevOperator(root, dataDir, env);
  if (operator) env.GATEWAY_OPERATOR_TOKEN = operator.token;
  const merchant = await ensureSandboxMerchant(root, dataDir, env);
  const apps = await startApps(root, env, logsDir, scale);
  await waitUntilHealthy(apps);
  printWelcome(merchant, operator, dataDir, apps, env);
  // From here on the child processes keep us alive until a signal or a crash.
}

main().catch(async (e) => {
  if (shuttingDown) return;
  say(e instanceof StartError ? `\nnpm start: ${e.message}` : `\nnpm start failed: ${(e as Error).stack ?? e}`);
  await shutdown(1);
});
