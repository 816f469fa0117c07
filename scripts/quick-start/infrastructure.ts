import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import {
  DEFAULT_DATABASE_URL,
  DEFAULT_REDIS_URL,
  isLoopbackUrl,
  probePostgres,
  probeRedis,
  Probe,
  redactUrl,
  onLoopbackPort,
  urlPort,
  withDatabase,
} from '../lib/database';
import { KeySet } from '../lib/dev-keys';
import { DevInstance } from '../lib/dev-instance';
import { compose, dockerEngineAvailable } from '../lib/docker';
import {
  findPostgresBinDir,
  findRedisServer,
  freePort,
  isPortFree,
  PrivateServer,
  startPrivatePostgresCluster,
  startPrivateRedisServer,
} from '../lib/local-servers';
import { waitUntil } from '../lib/processes';
import { say, shortPath, StartError } from './output';
import { undo } from './shutdown';

// Postgres and Redis: running servers, else Docker Compose, else private servers under DATA_DIR.

interface Dependency {
  kind: 'postgres' | 'redis';
  variable: 'DATABASE_URL' | 'REDIS_URL';
  url: string;
  defaultPort: number;
  probe: Probe;
}

export async function ensureInfrastructure(
  root: string,
  dataDir: string,
  keys: KeySet,
  instance: DevInstance,
): Promise<{ databaseUrl: string; redisUrl: string }> {
  const deps: Dependency[] = [
    {
      kind: 'postgres',
      variable: 'DATABASE_URL',
      url: process.env.DATABASE_URL || withDatabase(DEFAULT_DATABASE_URL, instance.database),
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
