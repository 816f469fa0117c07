import { isMerchantPublicId, newMerchantPublicId } from '@app/persistence';
import { createMerchant, MerchantCredentials, post, runCli, runCliRaw, Stack, startStack } from '../support/stack';
import { CANARY_CARDS, CANARY_CODES } from '../fixtures/cards';

jest.setTimeout(120_000);

/**
 * Merchant ids the SDKs of this API family accept: merchant:create prints a public id of at most
 * 10 characters and a key of at most 51, the public id authenticates (and so does the UUID, for
 * merchants integrated before), and every operator surface takes and shows the public id.
 */
describe('merchant ids', () => {
  let stack: Stack;
  let shop: MerchantCredentials;
  const admin = { authorization: `Bearer ${process.env.GATEWAY_OPERATOR_TOKEN}` };

  const envelope = (m: { merchantId: string; merchantKey: string }, op: string, body: unknown) => ({
    'transaction-request': { version: '1.0.0', verification: { merchantId: m.merchantId, merchantKey: m.merchantKey }, [op]: body },
  });
  const card = () => ({
    cardNumber: CANARY_CARDS.visa,
    cardHolder: 'MARIA SILVA',
    cardExpirationDate: '203012',
    cardSecurityCode: CANARY_CODES[0],
    flag: 'visa',
  });
  const add = (m: { merchantId: string; merchantKey: string }) => post(stack.baseUrl, '/v1/token/add', envelope(m, 'tokencard', card()));
  const retrieve = (m: { merchantId: string; merchantKey: string }, token: string) =>
    post(stack.baseUrl, '/v1/token/retrieve', envelope(m, 'retrieve-token', { token }));

  beforeAll(async () => {
    stack = await startStack({ MERCHANT_CACHE_MS: '200' }, { withConsole: true });
    shop = await createMerchant('public id shop');
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('merchant:create prints credentials the SDKs accept: a 10-digit Luhn id, a key of at most 51 characters', () => {
    expect(Object.keys(shop).sort()).toEqual(['environment', 'internalId', 'merchantId', 'merchantKey', 'webhookSecret']);
    expect(shop).toMatchObject({ environment: 'test' });
    expect(shop.merchantId.length).toBeLessThanOrEqual(10);
    expect(shop.merchantId).toMatch(/^[1-9]\d{9}$/);
    expect(isMerchantPublicId(shop.merchantId)).toBe(true);
    expect(shop.merchantKey.length).toBeLessThanOrEqual(51);
    expect(shop.merchantKey).toMatch(/^mk_[A-Za-z0-9_-]{43}$/);
    expect(shop.internalId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('the public id authenticates, and so does the UUID (either case): the same merchant', async () => {
    const byPublic = await add(shop);
    expect(byPublic.status).toBe(200);
    const token = byPublic.json.TokenCard as string;
    for (const merchantId of [shop.internalId, shop.internalId.toUpperCase()]) {
      const res = await retrieve({ merchantId, merchantKey: shop.merchantKey }, token);
      expect(res.status).toBe(200);
      expect(res.json.TokenCard).toBe(token);
    }
    // Another merchant's public id with this key is not this merchant.
    const other = await createMerchant('public id other shop');
    expect((await retrieve({ merchantId: other.merchantId, merchantKey: shop.merchantKey }, token)).status).toBe(401);
  });

  it('an unknown 10-digit id answers the same 401 as a wrong key; so does an id whose check digit fails', async () => {
    let unknownId = newMerchantPublicId();
    while (unknownId === shop.merchantId) unknownId = newMerchantPublicId();
    const typo = shop.merchantId.slice(0, 9) + ((Number(shop.merchantId[9]) + 1) % 10);
    const wrongKey = await add({ merchantId: shop.merchantId, merchantKey: 'mk_wrong' });
    const unknown = await add({ merchantId: unknownId, merchantKey: shop.merchantKey });
    const mistyped = await add({ merchantId: typo, merchantKey: shop.merchantKey });
    for (const res of [wrongKey, unknown, mistyped]) {
      expect(res.status).toBe(401);
      expect(res.json.result.error.code).toBe('010');
    }
    expect(unknown.json).toEqual(wrongKey.json);
    expect(mistyped.json).toEqual(wrongKey.json);
  });

  it('merchant:rotate-key takes the public id or the UUID and prints the public id', async () => {
    const m = await createMerchant('public id rotating shop');
    const byUuid = await runCli<{ merchantId: string; merchantKey: string }>([
      'merchant:rotate-key',
      '--merchant',
      m.internalId.toUpperCase(),
    ]);
    expect(byUuid).toEqual({ merchantId: m.merchantId, merchantKey: expect.stringMatching(/^mk_[A-Za-z0-9_-]{43}$/) });
    const byPublic = await runCli<{ merchantId: string; merchantKey: string }>(['merchant:rotate-key', '--merchant', m.merchantId]);
    expect(byPublic.merchantId).toBe(m.merchantId);
    await new Promise((r) => setTimeout(r, 400)); // the credential cache lives 200 ms here
    expect((await add({ merchantId: m.merchantId, merchantKey: byPublic.merchantKey })).status).toBe(200);
    expect((await add({ merchantId: m.merchantId, merchantKey: byUuid.merchantKey })).status).toBe(401);
  });

  it('CLI --merchant options take the public id, show it, and refuse an unknown id with a clear error', async () => {
    const created = await runCli<{ recipientId: string }>([
      'recipient:create',
      '--merchant',
      shop.merchantId,
      '--name',
      'public id seller',
    ]);
    const approved = await runCli<{ merchantId: string }>(['recipient:approve', '--recipient', created.recipientId]);
    expect(approved.merchantId).toBe(shop.merchantId);
    const listed = await runCli<{ recipientId: string; merchantId: string }[]>(['recipient:list', '--merchant', shop.internalId]);
    expect(listed).toEqual([expect.objectContaining({ recipientId: created.recipientId, merchantId: shop.merchantId })]);
    const fees = await runCli<{ merchantId: string }>([
      'fees:set',
      '--merchant',
      shop.merchantId,
      '--kind',
      'credit',
      '--brand',
      'visa',
      '--instalments',
      '1',
      '--rate',
      '2.5',
      '--fixed',
      '0',
    ]);
    expect(fees.merchantId).toBe(shop.merchantId);
    expect((await runCli<{ merchantId: string }>(['fees:show', '--merchant', shop.internalId])).merchantId).toBe(shop.merchantId);
    const secret = await runCli<{ merchantId: string }>([
      'merchant:rotate-webhook-secret',
      '--merchant',
      shop.merchantId,
      '--grace-hours',
      '0',
    ]);
    expect(secret.merchantId).toBe(shop.merchantId);
    expect(await runCli(['payables:list', '--merchant', shop.merchantId])).toEqual([]);
    expect(await runCli(['webhooks:list', '--merchant', shop.merchantId])).toEqual([]);

    let unknownId = newMerchantPublicId();
    while (unknownId === shop.merchantId) unknownId = newMerchantPublicId();
    const commands = [
      ['recipient:create', '--name', 'x'],
      ['recipient:list'],
      ['fees:show'],
      ['payables:list'],
      ['ledger:verify'],
      ['acquirer:reconcile'],
      ['webhooks:list'],
      ['webhooks:replay', '--since', '2026-01-01T00:00:00Z'],
      ['merchant:rotate-key'],
      ['merchant:rotate-webhook-secret'],
    ];
    const tries = [
      ...commands.map((c) => [unknownId, ...c]),
      ['not-a-merchant', 'fees:show'],
      ['00000000-0000-4000-8000-000000000000', 'fees:show'],
      [shop.merchantId.slice(0, 9) + ((Number(shop.merchantId[9]) + 1) % 10), 'fees:show'],
    ];
    const runs = await Promise.all(
      tries.map(async ([id, command, ...rest]) => ({ id, command, run: await runCliRaw([command, '--merchant', id, ...rest]) })),
    );
    for (const { id, command, run } of runs) {
      expect({ command, id, code: run.code }).toEqual({ command, id, code: 1 });
      expect(run.stderr).toContain(`--merchant: no merchant ${JSON.stringify(id).replace(/"/g, '\\"')}`);
    }
  });

  it('/admin/deliveries?merchant= takes the public id or the UUID; an unknown one is a 400 naming the parameter', async () => {
    const get = async (query: string) => {
      const res = await fetch(`${stack.consoleUrl}/admin/deliveries?${query}`, { headers: admin });
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      return { status: res.status, json: (await res.json()) as any };
    };
    expect(await get(`merchant=${shop.merchantId}`)).toEqual({ status: 200, json: { deliveries: [] } });
    expect(await get(`merchant=${shop.internalId.toUpperCase()}`)).toEqual({ status: 200, json: { deliveries: [] } });
    for (const id of ['1234567890', newMerchantPublicId(), 'not-a-merchant']) {
      const res = await get(`merchant=${id}`);
      expect(res.status).toBe(400);
      expect(res.json.result.error).toMatchObject({ parameter: 'merchant' });
    }
  });
});
