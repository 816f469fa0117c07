import { sleep } from '../lib/processes';
import { CheckResult, outstanding } from './checks';
import type { Arrival } from './listener';
import type { ChaosStack, Merchant } from './stack';

const say = (line = '') => process.stdout.write(line + '\n');

/** acquirer:reconcile or ledger:verify: clean, or each difference named. */
export async function cliCheck(stack: ChaosStack, check: string, args: string[]): Promise<CheckResult> {
  const r = await stack.cliRaw<{ transactions?: number; differences?: unknown[] }>(args);
  if (!r.json || !Array.isArray(r.json.differences)) {
    return {
      check,
      ok: false,
      detail: `${args[0]} did not answer`,
      failures: [`exit ${r.code}: ${(r.stderr || r.stdout).trim().split('\n').pop()}`],
    };
  }
  const { differences, ...summary } = r.json;
  const failures = differences.map((d) => JSON.stringify(d));
  // Exit 1 without a difference listed: the summary says why (transactions it could not route, say).
  if (r.code !== 0 && failures.length === 0) failures.push(`exit ${r.code}: ${JSON.stringify(summary)}`);
  return { check, ok: failures.length === 0 && r.code === 0, detail: `${r.json.transactions ?? '?'} transactions compared`, failures };
}

/** Waits until nothing is undecided and every announced change was acknowledged (or the time is up); how long that took. */
export async function drain(
  stack: ChaosStack,
  listener: { arrivals: Arrival[] },
  merchants: Merchant[],
  maxS: number,
): Promise<number | undefined> {
  const started = Date.now();
  let last = '';
  let clean = 0;
  while (Date.now() - started < maxS * 1000) {
    try {
      const o = await outstanding(stack, listener.arrivals, merchants);
      // Settlement's sweep may still be repairing what ran out of retries: payables last.
      const ledger =
        o.undecided === 0 && o.unacknowledged === 0 ? (await cliCheck(stack, 'ledger', ['ledger:verify'])).failures.length : undefined;
      const line = `${o.undecided} undecided, ${o.unacknowledged} status changes not acknowledged yet${ledger ? `, ${ledger} payables differences` : ''}`;
      // Twice in a row, 2 s apart: a claim settled just now may still publish its change.
      clean = ledger === 0 ? clean + 1 : 0;
      if (clean === 2) {
        say(`drained after ${((Date.now() - started) / 1000).toFixed(0)} s`);
        return (Date.now() - started) / 1000;
      }
      if (line !== last) say(`  draining: ${line}`);
      last = line;
    } catch (e) {
      say(`  draining: ${(e as Error).message}`);
    }
    await sleep(2_000);
  }
  say(`not drained within ${maxS} s: the checks below name what is left`);
  return undefined;
}
