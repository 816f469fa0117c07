import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckResult } from './checks';
import { leaksCardData } from './load';

/**
 * No card number (not even its first 12 digits), security code or secret of the run in any log
 * file under `dir`: the apps', the launcher's, the simulators', Redis's and Postgres's.
 */
export function logsClean(dir: string, secrets: { label: string; text: string }[]): CheckResult {
  const failures: string[] = [];
  let files = 0;
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((name) => {
      const p = join(d, name);
      // The cluster's own files are not logs (its log, postgres.log, is beside them).
      if (statSync(p).isDirectory()) return p === join(dir, 'pg', 'data') ? [] : walk(p);
      return /\.log(\.\d+)?$/.test(name) ? [p] : [];
    });
  for (const file of walk(dir)) {
    files++;
    const text = readFileSync(file, 'utf8');
    if (leaksCardData(text)) failures.push(`${file}: holds a card number or the security code`);
    for (const s of secrets) if (text.includes(s.text)) failures.push(`${file}: holds a ${s.label}`);
  }
  return {
    check: 'no card number or secret in any log',
    ok: failures.length === 0,
    detail: `${files} log files, card data and ${secrets.length} secrets looked for`,
    failures,
  };
}
