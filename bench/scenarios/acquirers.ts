import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { BenchStack, createBenchMerchant, runCli } from '../lib/stack';
import { LoadShape } from '../lib/load';
import { Scenario } from '../lib/scenario';
import { saleRequest } from './sales';

/** The simulator the production merchant's sales reach: its address and process (for its CPU time). */
export interface BenchSimulator {
  url: string;
  pid: number;
}

/** CPU seconds a process has used (user + system), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of stat (12 and 13 after the command name).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function ledgerSize(sim: BenchSimulator): Promise<number> {
  return ((await (await fetch(`${sim.url}/__sim/ledger`)).json()) as { sales: unknown[] }).sales.length;
}

/** What the bare baseline answers: an approved sale's answer. */
const SAMPLE_RESPONSE = JSON.stringify({
  transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A',
  operationId: '3',
  status: '8',
  message: 'APPROVED',
  errorCode: '',
  statusVersion: '2',
  order: { reference: 'B-1', currency: '986', totalAmount: '150000', dateTime: '2026-11-22T12:12:14.794Z' },
  processor: {
    acquirer: '26',
    tid: '1006993069' + '0'.repeat(10),
    nsu: '123456',
    authorizationCode: '123456',
    returnCode: '4',
    returnMessage: 'Operation Successful',
    numberOfPayments: '1',
    amount: '150000',
    capturedAmount: '150000',
    cancelledAmount: '0',
  },
  tokenCard: '',
  split: [],
});

/**
 * Issue 33's figure: a production merchant's closed-loop sales through the Cielo connector and the
 * Cielo simulator (answering at once, on this machine), beside the same run's sandbox sales by a
 * test merchant. The simulator's own cost is measured apart: its CPU time per sale.
 */
export function acquirerScenarios(closed: LoadShape, sim: BenchSimulator): Scenario[] {
  let production: { merchantId: string; merchantKey: string };
  let cpuBefore = 0;
  let salesBefore = 0;
  return [
    {
      name: 'acq: sandbox sale',
      path: '/v1/receiver',
      baselineBody: SAMPLE_RESPONSE,
      shapes: [closed],
      body: (stack: BenchStack) => {
        let n = 0;
        return () => saleRequest(stack.merchant, `AS-${n++}`);
      },
    },
    {
      name: 'acq: Cielo sale',
      path: '/v1/receiver',
      baselineBody: SAMPLE_RESPONSE,
      shapes: [closed],
      prepare: async (stack: BenchStack) => {
        production = await createBenchMerchant(stack.env, 'bench-cielo', ['--environment', 'production']);
        await runCli(stack.env, [
          'merchant:set-acquirer',
          '--merchant',
          production.merchantId,
          '--acquirer',
          '26',
          '--account',
          randomUUID(),
          '--secret',
          'B'.repeat(40),
        ]);
        cpuBefore = cpuSeconds(sim.pid);
        salesBefore = await ledgerSize(sim);
      },
      body: () => {
        let n = 0;
        return () => saleRequest(production, `AC-${n++}`);
      },
      afterLoad: async () => {
        const sales = (await ledgerSize(sim)) - salesBefore;
        const cpuMs = (cpuSeconds(sim.pid) - cpuBefore) * 1000;
        const line = `acquirers: the Cielo simulator used ${(cpuMs / Math.max(1, sales)).toFixed(3)} ms of CPU per sale (${sales} sales, warm-up included), the gateway's share of the machine is the rest`;
        return { note: line, failures: 0 };
      },
    },
  ];
}
