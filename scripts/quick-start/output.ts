import { relative } from 'node:path';

/** A failure we can explain in plain words: printed without a stack trace. */
export class StartError extends Error {}

export const say = (line = '') => process.stdout.write(line + '\n');

export function shortPath(p: string): string {
  const rel = relative(process.cwd(), p);
  return rel && !rel.startsWith('..') ? rel : p;
}
