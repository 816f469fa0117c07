import { LoadShape } from './load';

/** What a bench run measures and for how long, from the BENCH_* variables (bench/README.md). */
export const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
export const durationS = num('BENCH_DURATION_S', 10);
export const warmupS = num('BENCH_WARMUP_S', 3);
export const closed: LoadShape = { connections: num('BENCH_CONNECTIONS', 64), durationS };
export const fixed: LoadShape = { connections: 64, durationS, rate: num('BENCH_RATE', 800) };

/** BENCH_ONLY=tokens,split: a run limited to some groups (default: all). */
export const GROUPS = [
  'tokens',
  'sales',
  'operations',
  'split-sales',
  'split',
  'webhooks',
  'limiter',
  'rebills',
  'console',
  'capacity',
  'history',
  'acquirers',
] as const;
export type Group = (typeof GROUPS)[number];
export function selectedGroups(): Set<Group> {
  const names = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(GROUPS as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`BENCH_ONLY: unknown group(s) ${unknown.join(', ')}; known: ${GROUPS.join(', ')}`);
  return new Set((names.length ? names : GROUPS) as Group[]);
}
