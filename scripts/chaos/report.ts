import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CheckResult } from './checks';
import { describe, FaultRecord } from './faults';
import type { Call } from './load';

const say = (line = '') => process.stdout.write(line + '\n');

/** Seconds from the end of a fault until the gateway served again: a replica healthy again, or the first sale started after it approved. */
export function recovery(r: FaultRecord, calls: Call[]): number | undefined {
  if (r.kind === 'kill') return r.recoveredAt ? (r.recoveredAt - r.startedAt) / 1000 : undefined;
  if (!r.endedAt) return undefined;
  const first = calls
    .filter((c) => (c.op === 'sale' || c.op === 'authorize') && c.http === 200 && c.startedAt >= r.endedAt!)
    .sort((a, b) => a.endedAt - b.endedAt)[0];
  return first ? (first.endedAt - r.endedAt) / 1000 : undefined;
}

export interface Figures {
  quietSalesPerS: number;
  faultedSalesPerS: number;
  ratio: number;
  perFault: { fault: string; salesPerS: number }[];
}

/** Sales and authorizations answered 200/202 a second: in the quiet head, from the first fault to the end, and during each server fault. */
export function loadFigures(calls: Call[], records: FaultRecord[], start: number, quietS: number, durationS: number): Figures {
  const served = calls.filter((c) => (c.op === 'sale' || c.op === 'authorize') && (c.http === 200 || c.http === 202));
  const rate = (from: number, to: number) =>
    served.filter((c) => c.endedAt >= from && c.endedAt < to).length / Math.max(0.001, (to - from) / 1000);
  const quiet = rate(start, start + quietS * 1000);
  const faulted = rate(start + quietS * 1000, start + durationS * 1000);
  return {
    quietSalesPerS: round(quiet),
    faultedSalesPerS: round(faulted),
    ratio: round(faulted / Math.max(quiet, 0.001)),
    perFault: records
      .filter((r) => r.kind !== 'kill' && r.endedAt && r.endedAt - r.startedAt >= 1000)
      .map((r) => ({ fault: describe(r), salesPerS: round(rate(r.startedAt, r.endedAt!)) })),
  };
}

const round = (n: number) => Math.round(n * 100) / 100;

export function printTable(
  checks: CheckResult[],
  records: FaultRecord[],
  start: number,
  calls: Call[],
  figures: Figures,
  drained: number | undefined,
): void {
  say('');
  say('check                                        verdict  detail');
  for (const c of checks) {
    say(`${c.check.padEnd(44)} ${(c.ok ? 'ok' : 'FAILED').padEnd(8)} ${c.detail}`);
    for (const f of c.failures.slice(0, 20)) say(`    - ${f}`);
    if (c.failures.length > 20) say(`    … and ${c.failures.length - 20} more (chaos-report.json has them all)`);
  }
  say('');
  say('fault                                             at (s)  recovered after (s)');
  for (const r of [...records].sort((a, b) => a.startedAt - b.startedAt)) {
    const rec = recovery(r, calls);
    say(
      `${describe(r).padEnd(48)} ${((r.startedAt - start) / 1000).toFixed(0).padStart(6)}  ${rec === undefined ? 'not measured' : rec.toFixed(1)}${r.note ? `  (${r.note})` : ''}`,
    );
  }
  say('');
  say(
    `sales served: ${figures.quietSalesPerS}/s in the quiet head, ${figures.faultedSalesPerS}/s under faults (${figures.ratio} of quiet)`,
  );
  say(drained === undefined ? 'the gateway did not drain in time' : `drained ${drained.toFixed(0)} s after the load ended`);
  say(checks.every((c) => c.ok) ? 'CHAOS RUN PASSED' : 'CHAOS RUN FAILED');
}

/** bench/results/chaos/<time>-seed<seed>.json: the load figures beside the bench's. */
export function recordFigures(root: string, start: number, figures: Record<string, unknown>): void {
  const out = join(root, 'bench', 'results', 'chaos');
  mkdirSync(out, { recursive: true });
  const file = join(out, `${new Date(start).toISOString().slice(0, 16).replace(/:/g, '')}Z-seed${String(figures.seed)}.json`);
  writeFileSync(file, JSON.stringify(figures, null, 2) + '\n');
  say(`load figures: ${file}`);
}
