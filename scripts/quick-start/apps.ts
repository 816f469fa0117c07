import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { AppName, APPS, LaunchedApp, launchApp, stopApp, waitForHealth } from '../lib/launcher';
import { replicaName, replicaPorts, Scale } from '../lib/scale';
import { freePort, isPortFree, logTail } from '../lib/local-servers';
import { firstFreePort, RunningSimulator, simulatorsWanted, simulatorVariables, startSimulator } from '../lib/simulators';
import { say, shortPath, StartError } from './output';
import { isShuttingDown, running, shutdown, undo } from './shutdown';

// The acquirer simulators and the apps, as child processes until Ctrl-C.

const HEALTH_TIMEOUT_MS = 90_000;

/**
 * Cielo's and e.Rede's simulators on the first free ports from 8701, the apps pointed at them
 * (CIELO_API_URL, CIELO_QUERY_URL, EREDE_API_URL). An acquirer whose variables are set already is
 * used as given, and its simulator is not started.
 */
export async function startSimulators(root: string, env: NodeJS.ProcessEnv, logsDir: string): Promise<RunningSimulator[]> {
  const started: RunningSimulator[] = [];
  const taken = new Set<number>();
  for (const name of simulatorsWanted(env)) {
    const port = await firstFreePort(8701, taken);
    taken.add(port);
    const sim = await startSimulator(root, name, port, { logFile: join(logsDir, `simulator-${name}.log`) });
    Object.assign(env, simulatorVariables(name, sim.url));
    started.push(sim);
    undo.push({ what: `stop the ${name} simulator`, run: () => sim.stop() });
  }
  return started;
}

export async function startApps(root: string, env: NodeJS.ProcessEnv, logsDir: string, scale: Scale): Promise<LaunchedApp[]> {
  const host = env.HOST || '127.0.0.1';
  // An API bound to every interface is still reached on loopback for the health check.
  const healthHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  // Every port settled before anything starts, so a busy API port stops us with nothing to undo.
  const first = {} as Record<AppName, number>;
  for (const spec of APPS) first[spec.name] = await appPort(spec.name, spec.defaultPort, env);
  const defaults = Object.fromEntries(
    APPS.map((a) => [a.name, a.name === 'api' || a.name === 'console' ? first[a.name] : a.defaultPort]),
  ) as Record<AppName, number>;
  const webPorts = new Set([first.api, first.console]);
  const ports = await replicaPorts(scale, defaults, first, (port) => isPortFree(port, webPorts.has(port) ? healthHost : '127.0.0.1'));
  for (const spec of APPS) {
    for (let i = 0; i < scale[spec.name]; i++) {
      const label = replicaName(spec.name, i + 1, scale[spec.name]);
      const logFile = join(logsDir, `${label}.log`);
      // Keep the previous run's log: after a crash, the interesting lines are usually there.
      if (existsSync(logFile)) renameSync(logFile, `${logFile}.1`);
      // Each app as its own database role (the migration, above, ran as DATABASE_URL's user: the owner).
      // Own process group: a terminal Ctrl-C reaches only us, and we stop the apps in order.
      const replica: Replica = {
        label,
        restarts: 0,
        launch: (restarts) =>
          launchApp({
            root,
            name: spec.name,
            label,
            // The admin app stays on loopback whatever HOST the api and the console take; the portal
            // links its commands print start at the console.
            env: {
              ...(spec.name === 'admin'
                ? {
                    ...env,
                    HOST: '127.0.0.1',
                    CONSOLE_PUBLIC_URL: env.CONSOLE_PUBLIC_URL || env.PUBLIC_BASE_URL || `http://${healthHost}:${first.console}`,
                  }
                : env),
              REPLICA_NAME: label,
              // Its /metrics says how often it was restarted (launcher_restarts).
              LAUNCHER_RESTARTS: String(restarts),
            },
            port: ports[spec.name][i],
            logFile,
            healthHost: spec.name === 'api' || spec.name === 'console' ? healthHost : '127.0.0.1',
            detached: true,
            console: true,
          }),
      };
      const app = replica.launch(0);
      running.push(app);
      watch(replica, app);
      // Undo runs newest first: the API stops before the workers, so no new work arrives while they drain.
      undo.push({ what: `stop ${label}`, run: () => stopReplica(replica) });
    }
  }
  return running;
}

/**
 * The API's port (PORT) and the console's when CONSOLE_PORT names it are what the user asked for,
 * so a busy one is an error; any other (the console's default, a worker's health port) may move.
 */
async function appPort(name: string, defaultPort: number, env: NodeJS.ProcessEnv): Promise<number> {
  const asked =
    name === 'api'
      ? { variable: 'PORT', value: env.PORT || String(defaultPort) }
      : name === 'console' && env.CONSOLE_PORT
        ? { variable: 'CONSOLE_PORT', value: env.CONSOLE_PORT }
        : undefined;
  if (asked) {
    const port = Number(asked.value);
    if (!(await isPortFree(port, env.HOST && env.HOST !== '0.0.0.0' && env.HOST !== '::' ? env.HOST : '127.0.0.1'))) {
      throw new StartError(`port ${port} is in use (is the gateway already running?). Stop what uses it, or set ${asked.variable}.`);
    }
    return port;
  }
  if (await isPortFree(defaultPort)) return defaultPort;
  const port = await freePort();
  say(`${name}: port ${defaultPort} is in use; its /health and /metrics are on ${port} instead`);
  return port;
}

/** One replica as the launcher keeps it: the process now, and how often it was restarted. */
interface Replica {
  label: string;
  restarts: number;
  launch(restarts: number): LaunchedApp;
  /** The restart waiting for its backoff. */
  pending?: NodeJS.Timeout;
  /** The process now (set by watch). */
  current?: LaunchedApp;
  /** When the current process was started (ms since epoch). */
  startedAt?: number;
  /** Restarted processes in a row that died within STABLE_MS: the backoff doubles with each. */
  crashLoop?: number;
}

/** Told, with the processes now, each time a replica is started again (the Prometheus targets follow). */
const restartListeners: ((apps: readonly LaunchedApp[]) => void)[] = [];

export function onReplicaRestart(listener: (apps: readonly LaunchedApp[]) => void): void {
  restartListeners.push(listener);
}

/** From this call on, a replica that dies is restarted; before it (the stack starting), an exit stops the stack. */
let supervising = false;

/** A replica up this long is well again: its next restart waits the shortest backoff. */
const STABLE_MS = 60_000;
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;

/** Called once every app is healthy: from then on, the launcher restarts what dies. */
export function superviseFromNowOn(): void {
  supervising = true;
}

function watch(replica: Replica, app: LaunchedApp): void {
  replica.current = app;
  replica.startedAt = Date.now();
  void app.exited.then(({ code, signal }) => {
    if (app.stopRequested || isShuttingDown()) return;
    onUnexpectedExit(replica, app, signal ? `killed by ${signal}` : `exit code ${code}`);
  });
}

/**
 * An app that cannot start at all stops the stack (nothing would serve). A replica that dies once
 * the stack is up is started again, after a backoff that doubles while it keeps dying (1 s up to
 * 30 s), while the other apps and replicas go on serving.
 */
function onUnexpectedExit(replica: Replica, app: LaunchedApp, how: string): void {
  if (!supervising) {
    say(`\n${app.label} exited unexpectedly (${how}). Last lines of ${shortPath(app.logFile)}:`);
    say(logTail(app.logFile, 15));
    say('stopping the other apps');
    void shutdown(1);
    return;
  }
  // A restarted replica that dies again within a minute is in a crash loop: each time waits twice as long.
  const upMs = Date.now() - (replica.startedAt ?? 0);
  replica.crashLoop = replica.restarts > 0 && upMs < STABLE_MS ? (replica.crashLoop ?? 0) + 1 : 0;
  const delayMs = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** replica.crashLoop);
  replica.restarts += 1;
  say(
    `\n${app.label} exited unexpectedly (${how}); restarting it in ${delayMs / 1000} s (restart ${replica.restarts}). ` +
      `Last lines of ${shortPath(app.logFile)}:`,
  );
  say(logTail(app.logFile, 15));
  replica.pending = setTimeout(() => {
    replica.pending = undefined;
    if (isShuttingDown()) return;
    let next: LaunchedApp;
    try {
      next = replica.launch(replica.restarts);
    } catch (e) {
      // Its build is gone (dist/ deleted under us): nothing to restart it from.
      say(`${app.label} cannot be restarted: ${(e as Error).message}; stopping the other apps`);
      void shutdown(1);
      return;
    }
    const at = running.indexOf(app);
    if (at >= 0) running[at] = next;
    else running.push(next);
    watch(replica, next);
    for (const listener of restartListeners) listener(running);
    waitForHealth(next, HEALTH_TIMEOUT_MS, 300).then(
      () => say(`${next.label}: restarted and healthy (restart ${replica.restarts})`),
      // Its exit, if that is why, is handled by watch; a replica that never answers is said.
      () => next.isRunning() && say(`${next.label}: restarted but not healthy within ${HEALTH_TIMEOUT_MS / 1000} s`),
    );
  }, delayMs);
}

/** Ctrl-C: a restart not made yet is called off; the process now is stopped. */
async function stopReplica(replica: Replica): Promise<void> {
  clearTimeout(replica.pending);
  if (replica.current) await stopApp(replica.current, { say });
}

export async function waitUntilHealthy(apps: LaunchedApp[]): Promise<void> {
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
