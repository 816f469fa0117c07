import { Client } from 'pg';
import { waitUntil } from '../../scripts/lib/processes';
import { LoadShape } from '../lib/load';
import { Scenario } from '../lib/scenario';
import { BenchStack, createBenchMerchant, internalIdOf, runCli } from '../lib/stack';
import { BENCH_CARD, saleRequest } from './sales';

/**
 * Approved sales carrying a 3-entry split, then the wait for settlement to write their payables
 * (asynchronous: the sale is answered before). A merchant of its own, so the wait and the payables
 * count are this scenario's alone, not the backlog of the plain sales before it.
 */
export function splitSaleScenarios(closed: LoadShape): Scenario[] {
  const sampleResponse = JSON.stringify({
    transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A',
    operationId: '3',
    status: '8',
    message: 'APPROVED',
    errorCode: '',
    statusVersion: '2',
    order: { reference: 'S-1', currency: '986', totalAmount: '150000', dateTime: '2026-11-22T12:12:14.794Z' },
    processor: {
      acquirer: '26',
      tid: 'a'.repeat(20),
      nsu: '123456789',
      authorizationCode: '123456',
      returnCode: '00',
      returnMessage: 'Approved',
      numberOfPayments: '1',
      amount: '150000',
      capturedAmount: '150000',
      cancelledAmount: '0',
    },
    tokenCard: '',
    split: [
      { recipient: 'a'.repeat(36), gross: '30000', fee: '900', net: '29100', mode: 'PRORATA', liable: 'true' },
      { recipient: 'b'.repeat(36), gross: '10000', fee: '0', net: '10000', mode: 'FREE', liable: 'true' },
      { recipient: 'c'.repeat(36), gross: '8250', fee: '0', net: '8250', mode: 'FREE', liable: 'true' },
    ],
    splitResidual: { gross: '101750', fee: '3600', net: '98150' },
    processingFee: '4500',
  });
  let merchant: { merchantId: string; merchantKey: string };
  let recipients: string[] = [];
  return [
    {
      name: 'sale + 3-way split',
      path: '/v1/receiver',
      baselineBody: sampleResponse,
      shapes: [closed],
      prepare: async (stack) => {
        merchant = await createBenchMerchant(stack.env, 'bench-split');
        recipients = await approvedRecipients(stack, merchant.merchantId, 'bench');
      },
      body: () => {
        let n = 0;
        return () => saleRequest(merchant, `S-${n++}`, { ...BENCH_CARD, split: threeWaySplit(recipients) });
      },
      afterLoad: async (stack, loadEndedAt) => waitForPayables(stack, await internalIdOf(stack.env, merchant.merchantId), loadEndedAt),
    },
  ];
}

/** Polls until every captured sale of the merchant (by internal id) has its settlement (hence its payables). */
async function waitForPayables(stack: BenchStack, merchantId: string, loadEndedAt: number): Promise<{ note: string; failures: number }> {
  const pg = new Client({ connectionString: stack.env.DATABASE_URL });
  await pg.connect();
  try {
    const count = async (sql: string) => Number((await pg.query<{ n: string }>(sql, [merchantId])).rows[0].n);
    let pending = -1;
    const done = await waitUntil(
      'the split sales to have their payables',
      async () => {
        pending = await count(
          `SELECT count(*) AS n FROM transactions t WHERE t.merchant_id = $1 AND t.captured_amount > 0
           AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.transaction_id = t.id)`,
        );
        return pending === 0;
      },
      120_000,
      100,
    ).catch(() => false);
    const afterS = (Date.now() - loadEndedAt) / 1000;
    const sales = await count('SELECT count(*) AS n FROM transactions WHERE merchant_id = $1 AND captured_amount > 0');
    const payables = await count('SELECT count(*) AS n FROM payables WHERE merchant_id = $1');
    if (!done)
      return {
        note: `sale + 3-way split: **${pending} of ${sales} approved sales still without payables ${afterS.toFixed(0)} s after the load**; ${payables} payables.`,
        failures: pending,
      };
    return {
      note: `sale + 3-way split: payables of all ${sales} approved sales (warm-up included) written ${afterS.toFixed(1)} s after the load ended; ${payables} payables.`,
      failures: 0,
    };
  } finally {
    await pg.end();
  }
}

/**
 * Three recipients of the merchant (by public id), created and approved: only approved ones may be
 * split to. One CLI process at a time: each boots Nest, and on a busy machine three at once can
 * outlast the CLI's time limit.
 */
export async function approvedRecipients(stack: BenchStack, merchantId: string, prefix: string): Promise<string[]> {
  const recipients: string[] = [];
  for (const i of [1, 2, 3]) {
    const { recipientId } = await runCli<{ recipientId: string }>(stack.env, [
      'recipient:create',
      '--merchant',
      merchantId,
      '--name',
      `${prefix}-r${i}`,
    ]);
    await runCli(stack.env, ['recipient:approve', '--recipient', recipientId]);
    recipients.push(recipientId);
  }
  return recipients;
}

/** A 3-entry split of the 1 500.00 sale: 20 % with the processing fee, 100.00, 5.5 %. */
export const threeWaySplit = (recipients: string[]) => [
  { recipient: recipients[0], percentage: '20', charge_processing_fee: true },
  { recipient: recipients[1], amount: 10000 },
  { recipient: recipients[2], percentage: '5.5' },
];
