import { planFaults, PlannedFault } from './faults';
import { Random } from './random';

const ONCE = ['redis-restart', 'postgres-restart', 'postgres-outage', 'acquirer-hang', 'redis-delay'];
const SERVER = ['redis-restart', 'postgres-restart', 'postgres-outage'];

describe('the chaos schedule', () => {
  const plans: { seed: number; durationS: number; quietS: number; plan: PlannedFault[] }[] = [];
  for (const [durationS, quietS, outageS] of [
    [60, 15, 12],
    [90, 15, 18],
    [120, 15, 18],
    [900, 60, 600],
  ]) {
    for (let seed = 1; seed <= 200; seed++)
      plans.push({ seed, durationS, quietS, plan: planFaults(new Random(seed), durationS, quietS, outageS) });
  }

  it('holds each fault once, and SIGKILLs 10 to 20 s apart after the quiet head', () => {
    for (const { plan, quietS, durationS } of plans) {
      for (const kind of ONCE) expect(plan.filter((f) => f.kind === kind)).toHaveLength(1);
      const kills = plan.filter((f) => f.kind === 'kill').map((f) => f.atS);
      expect(kills.length).toBeGreaterThanOrEqual(Math.floor((durationS - quietS - 13) / 20));
      expect(kills[0]).toBeGreaterThanOrEqual(quietS + 2);
      for (let i = 1; i < kills.length; i++) expect(kills[i] - kills[i - 1]).toBeGreaterThanOrEqual(10);
      for (let i = 1; i < kills.length; i++) expect(kills[i] - kills[i - 1]).toBeLessThanOrEqual(20);
    }
  });

  it('starts nothing in the quiet head and ends every fault before the load does', () => {
    for (const { plan, quietS, durationS } of plans) {
      for (const f of plan) {
        expect(f.atS).toBeGreaterThanOrEqual(quietS);
        expect(f.atS + f.durationS).toBeLessThanOrEqual(durationS);
      }
    }
  });

  it('never takes two servers away at once', () => {
    for (const { plan } of plans) {
      const servers = plan.filter((f) => SERVER.includes(f.kind)).sort((a, b) => a.atS - b.atS);
      for (let i = 1; i < servers.length; i++)
        expect(servers[i].atS).toBeGreaterThanOrEqual(servers[i - 1].atS + servers[i - 1].durationS + 6);
    }
  });

  it('is the same schedule for the same seed, and another for another', () => {
    expect(planFaults(new Random(7), 900, 60, 600)).toEqual(planFaults(new Random(7), 900, 60, 600));
    expect(planFaults(new Random(7), 900, 60, 600)).not.toEqual(planFaults(new Random(8), 900, 60, 600));
  });
});
