import { run, runOrThrow, which } from './processes';

/** `docker info` talks to the engine: a client without a daemon (common in CI) fails it quickly. */
export async function dockerEngineAvailable(timeoutMs = 8000): Promise<boolean> {
  if (!which('docker')) return false;
  try {
    return (await run('docker', ['info', '--format', '{{.ServerVersion}}'], { timeoutMs })).code === 0;
  } catch {
    return false;
  }
}

/** Compose v2 is a docker plugin; older installs have the standalone docker-compose. */
export async function composeCommand(): Promise<[string, string[]] | undefined> {
  if ((await run('docker', ['compose', 'version'], { timeoutMs: 8000 }).catch(() => undefined))?.code === 0) return ['docker', ['compose']];
  if (which('docker-compose')) return ['docker-compose', []];
  return undefined;
}

export async function compose(root: string, args: string[], env: NodeJS.ProcessEnv = process.env, timeoutMs = 15 * 60_000): Promise<void> {
  const cmd = await composeCommand();
  if (!cmd) throw new Error('Docker is running but Docker Compose is not installed');
  await runOrThrow(cmd[0], [...cmd[1], '-f', `${root}/docker-compose.yml`, ...args], { cwd: root, env, timeoutMs });
}
