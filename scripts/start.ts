/**
 * Quick start (`npm start`): the gateway on a developer's machine, from a fresh clone.
 *
 * Postgres and Redis are real dependencies, so first make sure both answer: use running servers,
 * else Docker Compose, else private servers under DATA_DIR (when PostgreSQL and Redis are
 * installed). Then the one-time development state (keys, database, sandbox merchant), then the
 * apps as child processes until Ctrl-C (with `--with-prometheus`, a Prometheus scraping them). Running
 * it again reuses everything it made.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StartArgs, startArgs } from './lib/scale';
import { ensureDevKeys } from './lib/dev-keys';
import { devInstance } from './lib/dev-instance';
import { repoRoot } from './lib/processes';
import { say, shortPath, StartError } from './quick-start/output';
import { installSignalHandlers, isShuttingDown, shutdown } from './quick-start/shutdown';
import { ensureInfrastructure } from './quick-start/infrastructure';
import { appEnvironment, ensureDevOperator, ensureSandboxMerchant, prepareDatabase, requireBuild } from './quick-start/dev-state';
import { startApps, startSimulators, superviseFromNowOn, waitUntilHealthy } from './quick-start/apps';
import { printWelcome } from './quick-start/welcome';
import { startPrometheusBeside } from './quick-start/prometheus';

async function main(): Promise<void> {
  installSignalHandlers();
  // Checked before anything starts: a mistyped --scale costs nothing.
  let args: StartArgs;
  try {
    args = startArgs(process.argv.slice(2));
  } catch (e) {
    throw new StartError((e as Error).message);
  }
  const { scale } = args;
  const root = repoRoot();
  // Absolute, because the children resolve it against their own working directory.
  const dataDir = resolve(process.env.DATA_DIR || '.data');
  const logsDir = join(dataDir, 'logs');
  mkdirSync(logsDir, { recursive: true });

  requireBuild(root);
  // Named before the keys are made: a DATA_DIR with keys but no name is from before, and keeps its database.
  const named = devInstance(dataDir);
  const { instance } = named;
  if (named.created)
    say(
      `this checkout's database is ${instance.database} and its queues' prefix ${instance.queuePrefix} (kept in ${shortPath(join(dataDir, 'instance.json'))})`,
    );
  const { keys, created } = ensureDevKeys(dataDir);
  say(
    created
      ? `generated development keys in ${shortPath(join(dataDir, 'dev-keys.env'))}`
      : `using development keys from ${shortPath(join(dataDir, 'dev-keys.env'))}`,
  );
  const infra = await ensureInfrastructure(root, dataDir, keys, instance);
  const env = appEnvironment(keys, dataDir, infra, instance);
  await prepareDatabase(root, env);
  const operator = await ensureDevOperator(root, dataDir, env);
  if (operator) env.GATEWAY_OPERATOR_TOKEN = operator.token;
  const merchant = await ensureSandboxMerchant(root, dataDir, env);
  const simulators = await startSimulators(root, env, logsDir);
  const apps = await startApps(root, env, logsDir, scale);
  await waitUntilHealthy(apps);
  // From here on a replica that dies is restarted; the child processes keep us alive until a signal.
  superviseFromNowOn();
  const prometheus = args.withPrometheus ? await startPrometheusBeside(root, dataDir, logsDir, apps) : undefined;
  printWelcome(merchant, operator, dataDir, apps, env, simulators, prometheus);
}

main().catch(async (e) => {
  if (isShuttingDown()) return;
  say(e instanceof StartError ? `\nnpm start: ${e.message}` : `\nnpm start failed: ${(e as Error).stack ?? e}`);
  await shutdown(1);
});
