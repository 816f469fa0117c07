import { approvedCardSequence } from '../lib/cards';
import { BenchStack, createBenchMerchant, internalIdOf } from '../lib/stack';

/** A template rebill: created over HTTP and cancelled, the row the bench's bulk rebills copy. */
export interface Template {
  id: string;
  merchantId: string;
}

const envelope = (merchant: { merchantId: string; merchantKey: string }, op: Record<string, unknown>) =>
  JSON.stringify({ 'transaction-request': { version: '1.0.0', verification: merchant, ...op } });

async function post<T>(stack: BenchStack, path: string, body: string): Promise<T> {
  const res = await fetch(stack.baseUrl + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/**
 * The merchants (the stack's and more), a pool of vaulted cards spread over them, and one rebill
 * per card created over HTTP and cancelled: the rows the seeding copies.
 */
export async function prepareTemplates(stack: BenchStack, merchants: number, tokens: number): Promise<Template[]> {
  const shops = [{ ...stack.merchant, internalId: stack.merchantInternalId }];
  for (let i = 1; i < merchants; i++) {
    const m = await createBenchMerchant(stack.env, `bench rebills ${i}`);
    shops.push({ merchantId: m.merchantId, merchantKey: m.merchantKey, internalId: await internalIdOf(stack.env, m.merchantId) });
  }
  const nextCard = approvedCardSequence(700_000_000 + (Date.now() % 1_000) * 100_000);
  const year = new Date().getUTCFullYear();
  const out: Template[] = [];
  for (let i = 0; i < tokens; i += 25) {
    const batch = Array.from({ length: Math.min(25, tokens - i) }, async (_, k) => {
      const shop = shops[(i + k) % shops.length];
      const verification = { merchantId: shop.merchantId, merchantKey: shop.merchantKey };
      const { TokenCard } = await post<{ TokenCard: string }>(
        stack,
        '/v1/token/add',
        envelope(verification, { tokencard: { cardNumber: nextCard(), cardHolder: 'BENCH REBILL', cardExpirationDate: '203512' } }),
      );
      const rebill = await post<{ transactionId: string }>(
        stack,
        '/v1/receiver',
        envelope(verification, {
          rebill: {
            order: {
              reference: `RBT-${i + k}`,
              totalAmount: 1990,
              period: 3,
              frequency: 1,
              dateStart: `${year + 1}-01-15`,
              dateEnd: `${year + 2}-01-14`,
            },
            paymentCreditCard: { acquirer: 26, amount: 1990, currency: '986', country: 'BRA', numberOfPayments: 1, tokenCard: TokenCard },
          },
        }),
      );
      await post(stack, '/v1/receiver', envelope(verification, { cancel: { transactionId: rebill.transactionId } }));
      return { id: rebill.transactionId.toLowerCase(), merchantId: shop.internalId };
    });
    out.push(...(await Promise.all(batch)));
  }
  return out;
}
