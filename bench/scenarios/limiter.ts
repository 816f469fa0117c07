import { cpuSecondsBetween, cpuSnapshot } from '../lib/cpu';
import { LoadShape, runLoad } from '../lib/load';
import { Figure } from '../lib/scenario';
import { BenchStack, waitUntilIdle } from '../lib/stack';
import { saleScenarios } from './sales';

/**
 * The rate limiter's cost on sale throughput (issue 14: under 3 %): the stack's api (limiter on,
 * the default budgets, which the bench merchant stays under) against a second api on the same
 * stack with RATE_LIMIT_ENABLED=false, measured in turns (ABBA, `rounds` pairs) so a drift of the
 * machine's load during the run falls on both alike. Closed loop, the sale scenario's body.
 */
export async function benchLimiterCost(stack: BenchStack, shape: LoadShape, warmupS: number, rounds: number): Promise<Figure> {
  const unlimited = await stack.startApi('api-no-limiter', { RATE_LIMIT_ENABLED: 'false' });
  const sale = saleScenarios(shape, shape)[0];
  const urls = { on: stack.baseUrl + sale.path, off: `http://127.0.0.1:${unlimited.port}${sale.path}` };
  const measured: Record<'on' | 'off', number[]> = { on: [], off: [] };
  // CPU per sale across the apps, Redis and Postgres, from the run's start until the gateway is
  // idle again (its settlement tail included): steadier than throughput on a machine whose speed
  // drifts, since a slower minute stretches both the time and the work alike.
  const cpuMs: Record<'on' | 'off', number[]> = { on: [], off: [] };
  const procs = () => stack.apps.map((a) => ({ label: a.name, pid: a.proc.pid! }));
  let failed = 0;
  for (const which of ['on', 'off'] as const) await runLoad(urls[which], { ...shape, durationS: warmupS }, sale.body(stack));
  for (let i = 0; i < rounds; i++) {
    for (const which of i % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      await waitUntilIdle(stack);
      const before = cpuSnapshot(procs());
      const r = await runLoad(urls[which], shape, sale.body(stack));
      await waitUntilIdle(stack);
      const spent = cpuSecondsBetween(before, cpuSnapshot(procs()));
      const perSale = (spent.total * 1000) / Math.max(1, r.requests);
      const breakdown = Object.entries(spent.byLabel)
        .filter(([, s]) => s > 0)
        .map(([label, s]) => `${label} ${((s * 1000) / Math.max(1, r.requests)).toFixed(2)}`)
        .join(', ');
      measured[which].push(r.rps);
      cpuMs[which].push(perSale);
      failed += r.non2xx + r.errors;
      process.stdout.write(
        `sale, limiter ${which.padEnd(3)} round ${i + 1}: ${r.rps.toFixed(0)} req/s p50 ${r.p50} ms p99 ${r.p99} ms, ${perSale.toFixed(2)} ms CPU per sale (${breakdown})${r.non2xx + r.errors ? `  !! ${r.non2xx + r.errors} failed` : ''}\n`,
      );
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const on = median(measured.on);
  const off = median(measured.off);
  const cost = (1 - on / off) * 100;
  const cpuOn = median(cpuMs.on);
  const cpuOff = median(cpuMs.off);
  const cpuCost = (cpuOn / cpuOff - 1) * 100;
  return {
    name: 'sale throughput, rate limiter on (baseline: off)',
    unit: 'req/s',
    value: on,
    baseline: off,
    note:
      `limiter cost ${cost.toFixed(1)} % of sale throughput (target < 3 %): ${cost < 3 ? 'met' : 'MISSED'}; ` +
      `CPU per sale ${cpuOn.toFixed(2)} ms on, ${cpuOff.toFixed(2)} ms off (${cpuCost >= 0 ? '+' : ''}${cpuCost.toFixed(1)} %)`,
    detail: `medians of ${rounds} closed-loop runs each (${shape.connections} connections, ${shape.durationS} s), taken in turns; on ${measured.on.map((x) => x.toFixed(0)).join(', ')}; off ${measured.off.map((x) => x.toFixed(0)).join(', ')} req/s; CPU per sale (apps, Redis, Postgres) on ${cpuMs.on.map((x) => x.toFixed(2)).join(', ')}; off ${cpuMs.off.map((x) => x.toFixed(2)).join(', ')} ms`,
    failures: failed,
  };
}
