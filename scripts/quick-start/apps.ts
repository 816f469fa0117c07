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
      const app = launchApp({
        root,
        name: spec.name,
        label,
        // The admin app stays on loopback whatever HOST the api and the console take; the portal
        // links its commands print start at the console.
        env:
          spec.name === 'admin'
            ? {
                ...env,
                REPLICA_NAME: label,
                HOST: '127.0.0.1',
                CONSOLE_PUBLIC_URL: env.CONSOLE_PUBLIC_URL || env.PUBLIC_BASE_URL || `http://${healthHost}:${first.console}`,
              }
            : { ...env, REPLICA_NAME: label },
        port: ports[spec.name][i],
        logFile,
        healthHost: spec.name === 'api' || spec.name === 'console' ? healthHost : '127.0.0.1',
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

function onUnexpectedExit(app: LaunchedApp, how: string): void {
  if (isShuttingDown()) return;
  say(`\n${app.label} exited unexpectedly (${how}). Last lines of ${shortPath(app.logFile)}:`);
  say(logTail(app.logFile, 15));
  say('stopping the other apps');
  void shutdown(1);
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
