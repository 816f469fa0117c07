import { BenchStack } from '../lib/stack';
import { cardSequence } from '../lib/cards';
import { LoadShape } from '../lib/load';
import { Scenario } from '../lib/scenario';

function envelope(stack: BenchStack, op: Record<string, unknown>): string {
  return JSON.stringify({ 'transaction-request': { version: '1.0.0', verification: stack.merchant, ...op } });
}

/** Vaults `n` cards up front, so retrieve has real tokens to read. */
export async function seedTokens(stack: BenchStack, n: number): Promise<string[]> {
  const next = cardSequence(900_000_000);
  const tokens: string[] = [];
  for (let i = 0; i < n; i += 50) {
    const batch = Array.from({ length: Math.min(50, n - i) }, () =>
      fetch(`${stack.baseUrl}/v1/token/add`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: envelope(stack, { tokencard: { cardNumber: next(), cardHolder: 'BENCH', cardExpirationDate: '203012' } }),
      }).then((r) => r.json() as Promise<{ TokenCard: string }>),
    );
    for (const r of await Promise.all(batch)) tokens.push(r.TokenCard);
  }
  return tokens;
}

export function tokenScenarios(closed: LoadShape, fixed: LoadShape): Scenario[] {
  const sampleResponse = JSON.stringify({
    TokenCard: 'a'.repeat(64),
    BIN: '411111******1111',
    CardHolder: 'BENCH',
    Month: '12',
    Year: '2030',
    Flag: 'visa',
    Created_at: '1795000000',
    Client: {},
  });
  let tokens: string[] = [];
  return [
    {
      name: 'token/add',
      path: '/v1/token/add',
      baselineBody: sampleResponse,
      shapes: [closed, fixed],
      target: { shape: 'closed', rps: 1200 },
      body: (stack) => {
        const next = cardSequence(Math.floor(Date.now() % 1e8) * 10);
        return () =>
          envelope(stack, {
            tokencard: { cardNumber: next(), cardHolder: 'BENCH', cardExpirationDate: '203012', cardSecurityCode: '123' },
          });
      },
    },
    {
      name: 'token/retrieve',
      path: '/v1/token/retrieve',
      baselineBody: sampleResponse,
      shapes: [closed, fixed],
      target: { shape: 'fixed', p99Ms: 10 },
      prepare: async (stack) => {
        tokens = await seedTokens(stack, 500);
      },
      body: (stack) => {
        let i = 0;
        return () => envelope(stack, { 'retrieve-token': { token: tokens[i++ % tokens.length] } });
      },
    },
  ];
}
