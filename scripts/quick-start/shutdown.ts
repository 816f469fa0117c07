import type { LaunchedApp } from '../lib/launcher';
import { say } from './output';

// Shutdown: undo what we started, newest first (apps before the servers they use).

export const undo: { what: string; run: () => Promise<void> }[] = [];
export const running: LaunchedApp[] = [];
let shuttingDown = false;

export async function shutdown(exitCode: number): Promise<never> {
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

export function installSignalHandlers(): void {
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

/** Whether a shutdown has begun (a failure or an exit after it is part of that shutdown). */
export function isShuttingDown(): boolean {
  return shuttingDown;
}
