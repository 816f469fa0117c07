/**
 * Acceptance of the Cielo simulator by Cielo's own official PHP SDK, unchanged: its files are the
 * copy in test/simulators/sdk/cielo (or CIELO_SDK_MIRROR's HEAD), loaded through our PSR-0 autoloader
 * with a PSR-3 interface shim, and pointed at the simulator by an Environment of our own
 * (test/simulators/php/). Each scenario asserts on what the SDK returns and on `/__sim/ledger`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { MERCHANT_ID, MERCHANT_KEY, RunningSimulator, startCieloSimulator } from './cielo-process';
import { sdkSource } from './sdk-source';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const PHP_DIR = join(__dirname, 'php');

let sdk: ReturnType<typeof sdkSource> | undefined;
let sdkDir: string;
let sim: RunningSimulator;

beforeAll(async () => {
  const php = spawnSync('php', ['-v']);
  if (php.status !== 0) throw new Error('php-cli is required (with the curl extension): apt-get install php-cli php-curl');
  sdk = sdkSource('cielo', 'CIELO_SDK_MIRROR');
  sdkDir = sdk.dir;
  sim = await startCieloSimulator(['--void-spacing-ms', '0']);
});

afterAll(async () => {
  await sim?.stop();
  sdk?.cleanup();
});

function php(script: string, ...args: (string | number)[]): Json {
  const out = execFileSync('php', [join(PHP_DIR, script), ...args.map(String)], {
    env: {
      ...process.env,
      CIELO_SDK_SRC: join(sdkDir, 'src'),
      CIELO_URL: `${sim.url}/`,
      CIELO_MERCHANT_ID: MERCHANT_ID,
      CIELO_MERCHANT_KEY: MERCHANT_KEY,
    },
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').pop()!);
}

async function ledgerSale(paymentId: string): Promise<Json> {
  const ledger: Json = await (await fetch(`${sim.url}/__sim/ledger`)).json();
  return ledger.sales.find((s: Json) => s.paymentId === paymentId);
}

const orderId = () => `sdk${Date.now()}${Math.floor(Math.random() * 1e6)}`;

describe('Cielo simulator through the official PHP SDK', () => {
  it('creates a sale with capture: status 2, return code 6, masked card, links to this simulator', async () => {
    const order = orderId();
    const { ok } = php('create-sale.php', order, 15700, '4551870000000181', 1);
    expect(ok.merchantOrderId).toBe(order);
    expect(ok.payment).toMatchObject({ status: 2, returnCode: '6', amount: 15700, capturedAmount: 15700, cardNumber: '455187******0181' });
    expect(ok.payment.paymentId).toMatch(/^[0-9a-f-]{36}$/);
    expect(ok.payment.tid).toHaveLength(20);
    expect(ok.payment.authorizationCode).toMatch(/^\d{6}$/);
    expect(ok.payment.links.map((l: Json) => l.Rel)).toEqual(['self', 'void']);
    expect(ok.payment.links[0].Href).toBe(`${sim.url}/1/sales/${ok.payment.paymentId}`);
    const sale = await ledgerSale(ok.payment.paymentId);
    expect(sale).toMatchObject({ merchantOrderId: order, status: 2, amount: 15700, capturedAmount: 15700, maskedCard: '455187******0181' });
    expect(sale.operations.map((o: Json) => o.kind)).toEqual(['authorize', 'capture']);
  });

  it('authorizes only, queries by PaymentId, captures in part, then voids in part and in full', async () => {
    const order = orderId();
    const created = php('create-sale.php', order, 10000, '4024007153763191', 0).ok.payment;
    expect(created).toMatchObject({ status: 1, returnCode: '4', capturedAmount: null });

    const queried = php('get-sale.php', created.paymentId).ok;
    expect(queried.merchantOrderId).toBe(order);
    expect(queried.payment).toMatchObject({ paymentId: created.paymentId, status: 1, tid: created.tid, amount: 10000 });

    const captured = php('update-sale.php', 'capture', created.paymentId, 6000).ok;
    expect(captured).toMatchObject({ status: 2, returnCode: '6', tid: created.tid, proofOfSale: created.proofOfSale });
    const again = php('update-sale.php', 'capture', created.paymentId).exception;
    expect(again).toMatchObject({ httpStatus: 400, code: 308, message: 'Transaction not available to capture' });

    const partVoid = php('update-sale.php', 'cancel', created.paymentId, 2500).ok;
    expect(partVoid).toMatchObject({ status: 2, returnCode: '0' });
    const rest = php('update-sale.php', 'cancel', created.paymentId).ok;
    expect(rest).toMatchObject({ status: 10, returnCode: '9' });

    const after = php('get-sale.php', created.paymentId).ok.payment;
    expect(after).toMatchObject({ status: 10, capturedAmount: 6000, voidedAmount: 6000 });
    expect(after.capturedDate).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(after.voidedDate).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const sale = await ledgerSale(created.paymentId);
    expect(sale).toMatchObject({ status: 10, capturedAmount: 6000, voidedAmount: 6000 });
    expect(sale.operations.map((o: Json) => [o.kind, o.amount])).toEqual([
      ['authorize', 10000],
      ['capture', 6000],
      ['void', 2500],
      ['void', 3500],
    ]);
  });

  it('voids a whole authorization: status 10', async () => {
    const created = php('create-sale.php', orderId(), 5000, '5551870000000181', 0).ok.payment;
    const voided = php('update-sale.php', 'cancel', created.paymentId).ok;
    expect(voided).toMatchObject({ status: 10, returnCode: '9' });
    expect(await ledgerSale(created.paymentId)).toMatchObject({ status: 10, capturedAmount: 0, voidedAmount: 5000 });
  });

  it('declines a card ending in 2: status 3, return code 05, no authorization code', async () => {
    const { payment } = php('create-sale.php', orderId(), 100, '4551870000000182', 1).ok;
    expect(payment).toMatchObject({ status: 3, returnCode: '05', returnMessage: 'Not Authorized', authorizationCode: null });
    expect(await ledgerSale(payment.paymentId)).toMatchObject({ status: 3, capturedAmount: 0 });
  });

  it("carries Cielo's error code in CieloRequestException and acts on nothing", async () => {
    const before: Json = await (await fetch(`${sim.url}/__sim/ledger`)).json();
    const { exception } = php('create-sale.php', orderId(), 100, '4551870000000181', 1, '13/2030');
    expect(exception).toEqual({
      class: 'Cielo\\API30\\Ecommerce\\Request\\CieloRequestException',
      httpStatus: 400,
      code: 126,
      message: 'Credit Card Expiration Date is invalid',
    });
    const after: Json = await (await fetch(`${sim.url}/__sim/ledger`)).json();
    expect(after.sales).toHaveLength(before.sales.length);
  });

  it('answers an unknown PaymentId with 404 (the SDK: Resource not found)', () => {
    const { exception } = php('get-sale.php', '00000000-0000-4000-8000-000000000000');
    expect(exception).toMatchObject({ httpStatus: 404 });
  });

  it('never keeps the clear card number in its ledger', async () => {
    const text = await (await fetch(`${sim.url}/__sim/ledger`)).text();
    for (const pan of ['4551870000000181', '4024007153763191', '5551870000000181', '4551870000000182']) expect(text).not.toContain(pan);
    expect(text).toContain('402400******3191');
  });
});
