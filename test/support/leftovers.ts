import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { discardPostgresCluster } from '../../scripts/lib/postgres-cleanup';

/**
 * A record of every process and private server the suites start, kept on disk in the run's
 * folder. A test that fails before its afterAll (or a jest worker that dies) would otherwise leave
 * apps and clusters running into the next run; the global teardown reads this and ends them.
 */
export type Leftover =
  | {
      kind: 'process';
      pid: number;
      label: string;
      /** Text its command line must contain (redis-server rewrites its own, so not always argv). */
      marker: string;
      /** A folder of its own to delete once it is gone. */
      dir?: string;
    }
  | { kind: 'postgres'; dir: string; label: string };

function registryDir(): string | undefined {
  return process.env.TEST_LEFTOVERS_DIR;
}

/** Records `entry`; call the returned function once it has been cleaned up normally. */
export function remember(entry: Leftover): () => void {
  const dir = registryDir();
  if (!dir) return () => undefined;
  mkdirSync(dir, { recursive: true });
  // Random, not a counter: jest gives every test file fresh module state, so a counter would
  // repeat across files and one file's cleanup would erase another's record.
  const file = join(dir, `${process.pid}-${randomBytes(6).toString('hex')}.json`);
  writeFileSync(file, JSON.stringify(entry));
  return () => rmSync(file, { force: true });
}

/**
 * Ends everything still recorded (only what this process recorded with `own`); returns a line per
 * thing it had to clean up.
 */
export async function cleanLeftovers(dir = registryDir(), own = false): Promise<string[]> {
  if (!dir || !existsSync(dir)) return [];
  const cleaned: string[] = [];
  for (const name of readdirSync(dir)) {
    if (own && !name.startsWith(`${process.pid}-`)) continue;
    const file = join(dir, name);
    const entry = JSON.parse(readFileSync(file, 'utf8')) as Leftover;
    try {
      if (entry.kind === 'process') {
        if (stillOurs(entry.pid, entry.marker)) {
          process.kill(entry.pid, 'SIGKILL');
          cleaned.push(`killed ${entry.label} (pid ${entry.pid})`);
        }
        if (entry.dir) rmSync(entry.dir, { recursive: true, force: true });
      } else if (entry.kind === 'postgres' && existsSync(entry.dir)) {
        await discardPostgresCluster(entry.dir);
        cleaned.push(`discarded ${entry.label} (${entry.dir})`);
      }
    } catch (e) {
      cleaned.push(`could not clean ${entry.label}: ${(e as Error).message}`);
    }
    rmSync(file, { force: true });
  }
  if (!own) rmSync(dir, { recursive: true, force: true });
  return cleaned;
}

/** A pid may have been reused since: only kill it if its command line is still the one we started. */
function stillOurs(pid: number, marker: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').includes(marker);
  } catch {
    return false; // gone (or no /proc: then we can't be sure, and leave it)
  }
}
