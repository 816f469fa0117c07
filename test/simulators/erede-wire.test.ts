/** The e.Rede simulator on the wire, with plain fetch: validation, auth, lookups and fault modes. */
import { ledger, RunningSimulator, startSimulator } from './simulator-process';

let open: RunningSimulator;
let locked: RunningSimulator;
let seq = 0;

beforeAll(async () => {
  [open, locked] = await Promise.all([startSimulator('erede'), startSimulator('erede', ['--pv', '50001', '--token', 'secret'])]);
});
afterAll(async () => {
  await Promise.all([open?.stop(), locked?.stop()]);
});
beforeEach(async () => {
  await fetch(`${open.url}/__sim/ledger`, { method: 'DELETE' });
});

const basic = (pv: string, token: string) => `Basic ${Buffer.from(`${pv}:${token}`).toString('base64')}`;

async function call(method: string, path: string, body?: unknown, opts: { url?: string; auth?: string; signal?: AbortSignal } = {}) {
  const res = await fetch(`${opts.url ?? open.url}/erede/v1/transactions${path}`, {
    method,
    headers: {
      authorization: opts.auth ?? basic('1001', 'tok'),
      'content-type': 'application/json',
      'transaction-response': 'brand-return-opened',
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: opts.signal,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
}

const sale = (over: Record<string, unknown> = {}) => ({
  capture: true,
  kind: 'credit',
  reference: `w${++seq}`,
  amount: 1000,
  cardNumber: '5448280000000007',
  expirationMonth: 12,
  expirationYear: new Date().getFullYear() + 1,
  securityCode: '123',
  cardHolderName: 'Ana Silva',
  ...over,
});

const fault = (f: Record<string, unknown>) =>
  fetch(`${open.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(f) });

test.each([
  ['amount missing', { amount: undefined }, '73'],
  ['amount malformed', { amount: 10.5 }, '71'],
  ['amount too large', { amount: 99_999_999_999 }, '70'],
  ['reference missing', { reference: undefined }, '41'],
  ['reference too long', { reference: 'x'.repeat(17) }, '39'],
  ['reference malformed', { reference: 'a b' }, '40'],
  ['cardNumber missing', { cardNumber: undefined }, '38'],
  ['cardNumber malformed', { cardNumber: '5448-2800' }, '37'],
  ['cardNumber size', { cardNumber: '544828' }, '36'],
  ['expirationMonth missing', { expirationMonth: undefined }, '35'],
  ['expirationMonth malformed', { expirationMonth: 13 }, '33'],
  ['expirationYear missing', { expirationYear: undefined }, '3'],
  ['expirationYear malformed', { expirationYear: 'yy' }, '2'],
  ['expirationYear size', { expirationYear: 203 }, '1'],
  ['securityCode malformed', { securityCode: '12a' }, '16'],
  ['securityCode size', { securityCode: '12' }, '15'],
  ['cardHolderName size', { cardHolderName: 'x'.repeat(31) }, '55'],
  ['installments malformed', { installments: 'two' }, '50'],
  ['installments above 12', { installments: 13 }, '151'],
  ['kind malformed', { kind: 'prepaid' }, '76'],
  ['capture malformed', { capture: 'yes' }, '3119'],
  ['debit without capture', { kind: 'debit', capture: false }, '158'],
  ['subscription malformed', { subscription: 'maybe' }, '61'],
])('%s → 400 with its returnCode', async (_name, over, code) => {
  const res = await call('POST', '', sale(over));
  expect(res.status).toBe(400);
  expect(res.body.returnCode).toBe(code);
  expect(typeof res.body.returnMessage).toBe('string');
  expect(await ledger(open.url)).toEqual([]);
});

test('malformed JSON → 167; capture accepts "true"/"false" strings as booleans', async () => {
  expect((await call('POST', '', '{nope')).body.returnCode).toBe('167');
  const a = await call('POST', '', sale({ capture: 'false' }));
  const b = await call('POST', '', sale({ capture: 'true' }));
  expect([a.status, b.status]).toEqual([201, 201]);
  expect((await ledger(open.url)).map((s) => s.status)).toEqual(['authorized', 'captured']);
});

test('answers never carry the card number or security code', async () => {
  const res = await call('POST', '', sale({ securityCode: '987' }));
  const text = JSON.stringify(res.body) + JSON.stringify(await ledger(open.url));
  expect(text).not.toContain('5448280000000007');
  expect(text).not.toContain('987');
  expect(res.body).toMatchObject({ cardBin: '544828', last4: '0007', brand: { name: 'Mastercard' } });
});

test('--pv/--token: only that pair passes (401 with e.Rede codes otherwise); books are per PV', async () => {
  const other = await call('GET', '?reference=x', undefined, { url: locked.url, auth: basic('50002', 'secret') });
  expect(other).toEqual({ status: 401, body: { returnCode: '57', returnMessage: 'affiliation: Invalid merchant' } });
  const badToken = await call('GET', '?reference=x', undefined, { url: locked.url, auth: basic('50001', 'nope') });
  expect(badToken).toEqual({ status: 401, body: { returnCode: '65', returnMessage: 'token: Invalid token' } });
  expect((await call('GET', '?reference=x', undefined, { url: locked.url, auth: 'Bearer x' })).status).toBe(401);
  expect((await call('GET', '?reference=x', undefined, { url: locked.url, auth: basic('50001', 'secret') })).status).toBe(404);

  const created = await call('POST', '', sale({ reference: 'mine' }), { auth: basic('2001', 't') });
  expect((await call('GET', '?reference=mine', undefined, { auth: basic('2002', 't') })).status).toBe(404);
  expect((await call('GET', `/${String(created.body.tid)}`, undefined, { auth: basic('2002', 't') })).status).toBe(404);
  expect((await call('POST', '', sale({ reference: 'mine' }), { auth: basic('2002', 't') })).status).toBe(201);
});

test('unknown tid → 404 (78 on reads and captures, 353 on refunds); query by reference', async () => {
  expect(await call('GET', '/10000000000000000000')).toEqual({
    status: 404,
    body: { returnCode: '78', returnMessage: 'Transaction does not exist' },
  });
  expect((await call('PUT', '/10000000000000000000', { amount: 1 })).body.returnCode).toBe('78');
  expect((await call('POST', '/10000000000000000000/refunds', { amount: 1 })).body.returnCode).toBe('353');
  expect((await call('GET', '?reference=none')).status).toBe(404);
  const created = await call('POST', '', sale({ reference: 'ref-q', capture: false }));
  const found = await call('GET', '?reference=ref-q');
  expect(found.status).toBe(200);
  expect(found.body.authorization).toMatchObject({ tid: created.body.tid, reference: 'ref-q', status: 'Approved', amount: 1000 });
  expect(found.body.capture).toBeUndefined();
});

test('capture and refund states: capture twice, refund above the amount, partial on an authorization', async () => {
  const { body } = await call('POST', '', sale({ capture: false }));
  const tid = String(body.tid);
  expect((await call('POST', `/${tid}/refunds`, { amount: 400 })).body.returnCode).toBe('365');
  expect((await call('PUT', `/${tid}`, { amount: 800 })).status).toBe(200);
  expect((await call('PUT', `/${tid}`, { amount: 800 })).body.returnCode).toBe('171');
  expect((await call('POST', `/${tid}/refunds`, { amount: 801 })).body.returnCode).toBe('357');
  expect((await call('POST', `/${tid}/refunds`, { amount: 300 })).body.returnCode).toBe('359');
  expect(await ledger(open.url)).toMatchObject([{ status: 'captured', capturedAmount: 800, refundedAmount: 300 }]);
});

test('a decline answers 402 with the issuer code and is recorded as declined', async () => {
  const res = await call('POST', '', sale({ cardNumber: '4000000000000002' }));
  expect(res.status).toBe(402);
  expect(res.body).toMatchObject({ returnCode: '105', returnMessage: 'Unauthorized. Restricted card.' });
  expect(await ledger(open.url)).toMatchObject([{ status: 'declined' }]);
});

describe('fault modes', () => {
  test('refuse-5xx: 503, nothing recorded', async () => {
    await fault({ mode: 'refuse-5xx', match: 'POST /erede/v1/transactions' });
    expect((await call('POST', '', sale())).status).toBe(503);
    expect(await ledger(open.url)).toEqual([]);
  });

  test('act-then-5xx: 500, yet the sale is recorded and found by reference', async () => {
    await fault({ mode: 'act-then-5xx' });
    expect((await call('POST', '', sale({ reference: 'acted' }))).status).toBe(500);
    expect(await ledger(open.url)).toMatchObject([{ reference: 'acted', status: 'captured' }]);
    expect((await call('GET', '?reference=acted')).status).toBe(200);
  });

  test('hang: no answer, but the refund is applied', async () => {
    const { body } = await call('POST', '', sale());
    await fault({ mode: 'hang', match: `POST /erede/v1/transactions/${String(body.tid)}/refunds` });
    await expect(call('POST', `/${String(body.tid)}/refunds`, { amount: 100 }, { signal: AbortSignal.timeout(300) })).rejects.toThrow();
    expect(await ledger(open.url)).toMatchObject([{ refundedAmount: 100 }]);
  });

  test('slow: answers after the delay, acted once', async () => {
    await fault({ mode: 'slow', delayMs: 250 });
    const started = Date.now();
    expect((await call('POST', '', sale())).status).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    expect(await ledger(open.url)).toHaveLength(1);
  });
});
