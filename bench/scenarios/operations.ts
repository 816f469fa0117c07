import { randomInt } from 'node:crypto';
import { LoadShape } from '../lib/load';
import { Scenario } from '../lib/scenario';
import { BenchStack, createBenchMerchant } from '../lib/stack';

const TRANSACTIONS = 1_000;
const AMOUNT = 1_000_000;
const CAPTURED = 900_000;

/**
 * Captures and partial cancels, the operations that claim their transaction before the acquirer
 * hears of them: 1 000 authorizations of a merchant of its own, each captured in part first, then
 * cancelled a cent at a time, on transactions picked at random (so now and then two operations
 * meet on one transaction and the second waits its turn).
 */
export function operationScenarios(closed: LoadShape): Scenario[] {
  const sampleResponse = JSON.stringify({
    transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A',
    operationId: '5',
    status: '12',
    message: 'PARTIAL CANCELLED',
    errorCode: '',
    statusVersion: '9',
    order: { reference: 'O-1', currency: '986', totalAmount: String(AMOUNT), dateTime: '2026-11-22T12:12:14.794Z' },
    processor: {
      acquirer: '26',
      tid: 'a'.repeat(20),
      nsu: '123456789',
      authorizationCode: '123456',
      returnCode: '00',
      returnMessage: 'Cancelled',
      numberOfPayments: '1',
      amount: String(AMOUNT),
      capturedAmount: String(CAPTURED),
      cancelledAmount: '7',
    },
    tokenCard: '',
    split: [],
  });
  let merchant: { merchantId: string; merchantKey: string };
  const ids: string[] = [];
  return [
    {
      name: 'capture / partial cancel',
      path: '/v1/receiver',
      baselineBody: sampleResponse,
      shapes: [closed],
      prepare: async (stack: BenchStack) => {
        merchant = await createBenchMerchant(stack.env, 'bench-operations');
        for (let i = 0; i < TRANSACTIONS; i += 50) {
          const batch = await Promise.all(Array.from({ length: 50 }, (_, j) => authorize(stack.baseUrl, merchant, `OP-${i + j}`)));
          ids.push(...batch);
        }
      },
      body: () => {
        let n = 0;
        return () => {
          // First every transaction is captured (in order), then cancels land on random ones.
          const i = n++;
          const operation =
            i < TRANSACTIONS
              ? { capture: { transactionId: ids[i], amount: CAPTURED } }
              : { cancel: { transactionId: ids[randomInt(TRANSACTIONS)], amount: 1 } };
          return JSON.stringify({ 'transaction-request': { version: '1.0.0', verification: merchant, ...operation } });
        };
      },
    },
  ];
}

async function authorize(baseUrl: string, merchant: { merchantId: string; merchantKey: string }, reference: string): Promise<string> {
  const res = await fetch(`${baseUrl}/v1/receiver`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      'transaction-request': {
        version: '1.0.0',
        verification: merchant,
        authorize: {
          order: { reference, totalAmount: AMOUNT },
          payment: {
            acquirer: 26,
            method: 1,
            amount: AMOUNT,
            currency: '986',
            country: 'BRA',
            numberOfPayments: 1,
            cardHolder: 'BENCH',
            cardNumber: '4111111111111111',
            cardSecurityCode: '123',
            cardExpirationDate: '203012',
          },
        },
      },
    }),
  });
  const body = (await res.json()) as { transactionId?: string; status?: string };
  if (res.status !== 200 || body.status !== '3' || !body.transactionId)
    throw new Error(`authorize for the operations bench answered ${res.status} ${JSON.stringify(body)}`);
  return body.transactionId;
}
