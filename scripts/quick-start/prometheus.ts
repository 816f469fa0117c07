import { join } from 'node:path';
import type { LaunchedApp } from '../lib/launcher';
import { isPortFree } from '../lib/local-servers';
import { prometheusBinary, ScrapeTarget, startPrometheus } from '../lib/prometheus';
import { onReplicaRestart } from './apps';
import { say, shortPath } from './output';
import { isShuttingDown, undo } from './shutdown';

// `npm start -- --with-prometheus`: a Prometheus scraping every replica, with the alert rules.

const targetsOf = (apps: readonly LaunchedApp[]): ScrapeTarget[] => apps.map((a) => ({ app: a.name, replica: a.label, url: a.url }));

/**
 * Starts Prometheus on 127.0.0.1:PROMETHEUS_PORT (9090) over the apps now running, and keeps its
 * targets file current as replicas are restarted; it is stopped first on Ctrl-C. Resolves with its
 * URL, or undefined when it could not start (not installed, its port taken): the stack runs on
 * without it, and says why.
 */
export async function startPrometheusBeside(
  root: string,
  dataDir: string,
  logsDir: string,
  apps: LaunchedApp[],
): Promise<string | undefined> {
  const without = (why: string) => {
    say(`--with-prometheus: ${why}; the gateway runs without it`);
    return undefined;
  };
  if (!prometheusBinary()) {
    return without('prometheus is not installed (Debian: apt-get install prometheus; or docker compose up prometheus)');
  }
  const port = Number(process.env.PROMETHEUS_PORT) || 9090;
  if (!(await isPortFree(port))) return without(`port ${port} is in use (another Prometheus?); set PROMETHEUS_PORT to use another`);
  const logFile = join(logsDir, 'prometheus.log');
  let prometheus: Awaited<ReturnType<typeof startPrometheus>>;
  try {
    prometheus = await startPrometheus({ root, dataDir, logFile, port, targets: targetsOf(apps) });
  } catch (e) {
    return without((e as Error).message);
  }
  // Ctrl-C while it was starting: the undo list has already run.
  if (isShuttingDown()) {
    await prometheus.stop();
    return undefined;
  }
  // Pushed after the apps: undone before them, so it does not see them go down one by one.
  undo.push({ what: 'stop prometheus', run: () => prometheus.stop() });
  process.on('exit', () => prometheus.proc.exitCode === null && prometheus.proc.kill('SIGKILL'));
  onReplicaRestart((now) => {
    try {
      prometheus.setTargets(targetsOf(now));
    } catch (e) {
      say(`could not rewrite the Prometheus targets: ${(e as Error).message}`);
    }
  });
  say(`prometheus: ready, scraping ${apps.length} processes; log in ${shortPath(logFile)}`);
  return prometheus.url;
}
