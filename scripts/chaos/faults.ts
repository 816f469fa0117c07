import { Random } from './random';
import { ChaosStack, KILLABLE } from './stack';

export type FaultKind = 'kill' | 'redis-restart' | 'postgres-restart' | 'postgres-outage' | 'acquirer-hang' | 'redis-delay';

/** One fault of the schedule: when it starts (s after the load began) and how long it lasts. */
export interface PlannedFault {
  kind: FaultKind;
  atS: number;
  durationS: number;
  /** The replica killed, or the simulator made to hang. */
  target?: string;
  /** redis-delay: the delay each way, in ms. */
  delayMs?: number;
}

export interface FaultRecord extends PlannedFault {
  startedAt: number;
  endedAt?: number;
  /** A killed replica: when the launcher had it back and healthy. */
  recoveredAt?: number;
  /** What happened (a killed pid, a target that was down already). */
  note?: string;
  /** The fault could not be injected (or its server would not come back): the run fails. */
  error?: string;
}

/**
 * The schedule, drawn from the seed. After `quietS` seconds of load without faults (the quiet
 * minute the bench compares against): a SIGKILL of a random replica every 10–20 s until the end,
 * and, each once, in an order of the seed's, a Redis restart, a Postgres restart, a Postgres
 * outage of `outageS`, an acquirer simulator that acts and stops answering for 30 s, and a network
 * delay on Redis. The three that take a server away never overlap one another; the others fall
 * where they fall, over them too.
 */
export function planFaults(random: Random, durationS: number, quietS: number, outageS: number): PlannedFault[] {
  const plan: PlannedFault[] = [];
  for (let t = quietS + random.int(2, 8); t < durationS - 5; t += random.int(10, 20)) {
    plan.push({ kind: 'kill', atS: t, durationS: 0, target: random.pick(KILLABLE) });
  }
  // The server faults one after another, with their order and the gaps between them drawn.
  const servers: PlannedFault[] = [
    { kind: 'redis-restart', atS: 0, durationS: 3 },
    { kind: 'postgres-restart', atS: 0, durationS: 0 },
    { kind: 'postgres-outage', atS: 0, durationS: outageS },
  ];
  for (let i = servers.length - 1; i > 0; i--) {
    const j = random.int(0, i);
    [servers[i], servers[j]] = [servers[j], servers[i]];
  }
  const busy = servers.reduce((s, f) => s + f.durationS + 6, 0);
  const room = Math.max(0, durationS - quietS - 15 - busy);
  let at = quietS + 2;
  for (const f of servers) {
    at += Math.floor((random.next() * room) / servers.length);
    f.atS = at;
    at += f.durationS + 6;
  }
  plan.push(...servers);
  const window = Math.max(1, durationS - quietS - 35);
  plan.push({ kind: 'acquirer-hang', atS: quietS + random.int(0, window), durationS: 30, target: random.pick(['cielo', 'erede']) });
  plan.push({ kind: 'redis-delay', atS: quietS + random.int(0, window), durationS: 15, delayMs: random.int(20, 80) });
  return plan.sort((a, b) => a.atS - b.atS);
}

/** Carries out one fault on the stack; resolves when it is over (the server back, the delay off). */
export async function inject(stack: ChaosStack, f: PlannedFault, record: FaultRecord, say: (line: string) => void): Promise<void> {
  const sec = (s: number) => new Promise((r) => setTimeout(r, s * 1000));
  switch (f.kind) {
    case 'kill': {
      const pid = stack.kill(f.target!);
      record.note = pid ? `SIGKILL pid ${pid}` : `${f.target} was not running (being restarted)`;
      if (!pid) record.recoveredAt = Date.now();
      break;
    }
    case 'redis-restart':
      // SIGTERM: Redis writes its append-only file and exits; started again on the same port and files.
      await stack.redis.stop('SIGTERM');
      await sec(f.durationS);
      await stack.redis.start();
      break;
    case 'postgres-restart': // durationS 0: started again at once
    case 'postgres-outage':
      await stack.pg.stop('immediate');
      await sec(f.durationS);
      await stack.pg.start();
      break;
    case 'acquirer-hang': {
      // Every request for 30 s is acted on and never answered (the gateway's timeout ends each).
      const sim = stack.simulators[f.target as 'cielo' | 'erede'];
      await simFault(sim.url, 'POST', { mode: 'hang', times: 100_000 });
      await sec(f.durationS);
      await simFault(sim.url, 'DELETE');
      break;
    }
    case 'redis-delay':
      stack.proxy.setDelay(f.delayMs!);
      await sec(f.durationS);
      stack.proxy.setDelay(0);
      break;
  }
  record.endedAt = Date.now();
  say(`  ${describe(f)} over${record.note ? ` (${record.note})` : ''}`);
}

async function simFault(url: string, method: 'POST' | 'DELETE', body?: unknown): Promise<void> {
  const res = await fetch(`${url}/__sim/faults`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`the simulator refused ${method} /__sim/faults: HTTP ${res.status}`);
}

export function describe(f: PlannedFault): string {
  switch (f.kind) {
    case 'kill':
      return `kill ${f.target}`;
    case 'acquirer-hang':
      return `${f.target} acts and does not answer for ${f.durationS} s`;
    case 'redis-delay':
      return `Redis ${f.delayMs} ms slower each way for ${f.durationS} s`;
    case 'postgres-outage':
      return `Postgres down for ${f.durationS} s`;
    case 'redis-restart':
      return `Redis restarted (${f.durationS} s down)`;
    case 'postgres-restart':
      return 'Postgres restarted (immediate stop)';
  }
}
