import { BenchStack } from '../lib/stack';
import { LoadShape } from '../lib/load';
import { Scenario } from '../lib/scenario';

/** Approved sales with an inline card (last digit 1: approved at once by the sandbox). */
export function saleScenarios(closed: LoadShape, fixed: LoadShape): Scenario[] {
  const sampleResponse = JSON.stringify({
    transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A',
    operationId: '3',
    status: '8',
    message: 'APPROVED',
    errorCode: '',
    statusVersion: '2',
    order: { reference: 'B-1', currency: '986', totalAmount: '150000', dateTime: '2026-11-22T12:12:14.794Z' },
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
    split: [],
  });
  return [
    {
      name: 'sale (approved)',
      path: '/v1/receiver',
      baselineBody: sampleResponse,
      shapes: [closed, fixed],
      barePipeline: true,
      target: { shape: 'closed', rps: 700 },
      extraTarget: { shape: 'fixed', p99Ms: 50 },
      body: (stack: BenchStack) => {
        let n = 0;
        return () => saleRequest(stack.merchant, `B-${n++}`);
      },
    },
  ];
}

/** The bench's card: approved at once by the sandbox (last digit 1). */
export const BENCH_CARD = {
  cardHolder: 'BENCH',
  cardNumber: '4111111111111111',
  cardSecurityCode: '123',
  cardExpirationDate: '203012',
};

/**
 * A sale envelope of 1 500.00 BRL in one instalment. `payment`: the card's fields or a token, and
 * a split if any; `sale`: more fields of the sale (urlReturn).
 */
export function saleRequest(
  verification: { merchantId: string; merchantKey: string },
  reference: string,
  payment: Record<string, unknown> = BENCH_CARD,
  sale: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    'transaction-request': {
      version: '1.0.0',
      verification,
      sale: {
        order: { reference, totalAmount: 150000 },
        payment: { acquirer: 26, method: 1, amount: 150000, currency: '986', country: 'BRA', numberOfPayments: 1, ...payment },
        ...sale,
      },
    },
  });
}
