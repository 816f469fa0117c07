import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc reports CPU time in these ticks. */
const TICKS_PER_S = 100;
/** The servers the gateway's work runs on besides its own apps. */
const SERVERS = new Set(['redis-server', 'postgres']);

/**
 * User + system CPU seconds of one process so far (0 once it is gone); with `exitedChildren`, plus
 * those of its children that exited and were waited for (a server's finished backends).
 */
export function cpuSecondsOf(pid: number, exitedChildren = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "(comm) ", field 3 (state) is index 0: utime (14) and stime (15) are 11 and 12,
    // cutime (16) and cstime (17) 13 and 14.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const children = exitedChildren ? Number(fields[13]) + Number(fields[14]) : 0;
    return (Number(fields[11]) + Number(fields[12]) + children) / TICKS_PER_S;
  } catch {
    return 0;
  }
}

/** Every Redis and Postgres process on the machine. */
export function serverPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (SERVERS.has(readFileSync(`/proc/${entry}/comm`, 'utf8').trim())) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** CPU seconds per process, each with a label: the given apps, and every Redis and Postgres process. */
export type CpuSnapshot = Map<number, { label: string; s: number }>;

export function cpuSnapshot(apps: { label: string; pid: number }[]): CpuSnapshot {
  const snap: CpuSnapshot = new Map(apps.map((a) => [a.pid, { label: a.label, s: cpuSecondsOf(a.pid) }]));
  for (const pid of serverPids()) snap.set(pid, { label: 'servers', s: cpuSecondsOf(pid) });
  return snap;
}

/**
 * CPU seconds spent between two snapshots, across the apps, Redis and Postgres (a process that
 * started in between counts from zero). The load generator is left out: it is the bench's, not
 * the gateway's.
 */
export function cpuSecondsBetween(before: CpuSnapshot, after: CpuSnapshot): { total: number; byLabel: Record<string, number> } {
  const byLabel: Record<string, number> = {};
  let total = 0;
  for (const [pid, { label, s }] of after) {
    const spent = s - (before.get(pid)?.s ?? 0);
    byLabel[label] = (byLabel[label] ?? 0) + spent;
    total += spent;
  }
  return { total, byLabel };
}
