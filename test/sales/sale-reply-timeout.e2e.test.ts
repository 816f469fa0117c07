import { createMerchant, eventually, MerchantCredentials, Stack, startStack } from '../support/stack';
import { receiverOf, saleBody } from '../support/money';
import { SANDBOX_CARDS } from '../fixtures/cards';

jest.setTimeout(120_000);

/**
 * A sale whose worker answers after the API's reply wait (REPLY_TIMEOUT_MS shorter than
 * SALE_SYNC_WAIT_MS here) is recorded and still decided: its answer is 202 with status 0, the
 * outcome not known yet, never a 503 that would make the merchant send the sale again.
 */
describe('a sale answered after the reply wait', () => {
  let stack: Stack;
  let shop: MerchantCredentials;

  beforeAll(async () => {
    stack = await startStack({ REPLY_TIMEOUT_MS: '1000', SALE_SYNC_WAIT_MS: '5000', SANDBOX_SLOW_APPROVAL_MS: '2500' });
    shop = await createMerchant('reply timeout shop');
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('gets 202 with status 0, and the outcome is recorded', async () => {
    const receiver = receiverOf(stack.baseUrl, shop);
    const body = saleBody(4_200);
    body.payment.cardNumber = SANDBOX_CARDS[9];
    const res = await receiver('sale', body);
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ status: '0', message: 'WAITING FOR PAYMENT' });
    await eventually(async () => expect((await receiver('report', { transactionId: res.json.transactionId })).json.status).toBe('8'), {
      timeoutMs: 15_000,
    });
  });
});
