import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where an official SDK's files are: the copy in test/simulators/sdk/<name> (see its README), or,
 * when `mirrorVariable` names a bare clone, that clone's HEAD extracted to a temporary folder.
 */
export function sdkSource(name: 'cielo' | 'erede', mirrorVariable: string): { dir: string; cleanup: () => void } {
  const mirror = process.env[mirrorVariable];
  if (!mirror) return { dir: join(__dirname, 'sdk', name), cleanup: () => undefined };
  if (!existsSync(mirror)) throw new Error(`${mirrorVariable}=${mirror}: no such bare clone`);
  const dir = mkdtempSync(join(tmpdir(), `${name}-sdk-`));
  execFileSync('sh', ['-c', `git --git-dir "${mirror}" archive HEAD | tar -x -C "${dir}"`]);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
