import { AppHandle, createMerchant, MerchantCredentials, post, startApp } from '../support/stack';
import { bulkCards } from '../fixtures/cards';

jest.setTimeout(180_000);

const JOB_LINE_ONE = /"msg":"job token\.add /;
const JOB_LINE = /"msg":"job token\.add ([0-9a-f-]{36}) attempt (\d+)"/g;

/** Job ids a tokenizer process logged as handled (the transport logs each job at debug level). */
function handledJobs(app: AppHandle): string[] {
  return [...app.log().matchAll(JOB_LINE)].map((m) => m[1]);
}

/**
 * The transport with real processes: competing tokenizers share one queue, a tokenizer that gets
 * SIGTERM finishes what it holds, and a caller with no worker gets a 503, not a hang.
 */
describe('transport across processes', () => {
  let merchant: MerchantCredentials;
  const cards = bulkCards(200);
  const add = (baseUrl: string, cardNumber: string) =>
    post(baseUrl, '/v1/token/add', {
      'transaction-request': {
        version: '1.0.0',
        verification: merchant,
        tokencard: { cardNumber, cardHolder: 'TRANSPORT', cardExpirationDate: '203107' },
      },
    });

  beforeAll(async () => {
    merchant = await createMerchant('transport shop');
  });

  it('two tokenizers on one queue handle each request exactly once, and SIGTERM drains in-flight work', async () => {
    const env = { LOG_LEVEL: 'debug', TOKENIZER_CONCURRENCY: '8' };
    const [a, b, api] = await Promise.all([
      startApp('tokenizer', env, { label: 'tokenizer-a' }),
      startApp('tokenizer', env, { label: 'tokenizer-b' }),
      startApp('api'),
    ]);
    try {
      const responses = cards.slice(0, 120).map((card) => add(api.url, card));
      // Stop tokenizer A while work is flowing through it: what it holds must still complete.
      await a.waitForLog(JOB_LINE_ONE, 30_000);
      a.proc.kill('SIGTERM');
      responses.push(...cards.slice(120).map((card) => add(api.url, card)));
      const statuses = (await Promise.all(responses)).map((r) => r.status);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      expect((await a.exited).code).toBe(0);
      expect(a.log()).toContain('stopped cleanly');

      const byA = handledJobs(a);
      const byB = handledJobs(b);
      expect(byA.length).toBeGreaterThan(0);
      expect(byB.length).toBeGreaterThan(0);
      const all = [...byA, ...byB];
      // Exactly once: 200 requests, 200 distinct jobs, none handled twice or by both.
      expect(all).toHaveLength(200);
      expect(new Set(all).size).toBe(200);
    } finally {
      await Promise.all([a.stop(), b.stop(), api.stop()]);
    }
  });

  it('answers 503 when no tokenizer replies within the reply timeout', async () => {
    const api = await startApp('api', { REPLY_TIMEOUT_MS: '1000' });
    try {
      const started = Date.now();
      const res = await add(api.url, cards[0]);
      expect(res.status).toBe(503);
      expect(res.json.result.error.code).toBe('503');
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await api.stop();
    }
  });
});
