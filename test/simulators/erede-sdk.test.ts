/**
 * The official e.Rede PHP SDK, unchanged, against the e.Rede simulator: what the SDK returns and
 * what the simulator's ledger records must agree. The SDK's files are the copy in
 * test/simulators/sdk/erede (or EREDE_SDK_MIRROR's HEAD).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { sdkSource } from './sdk-source';
import { ledger, RunningSimulator, startSimulator } from './simulator-process';

const RUNNER = join(__dirname, 'php', 'erede.php');
const CARD = '5448280000000007';

interface SdkTransaction {
  tid: string | null;
  nsu: string | null;
  reference: string | null;
  authorizationCode: string | null;
  returnCode: string | null;
  returnMessage: string | null;
  amount: number | null;
  brand: string | null;
  refundId: string | null;
  authorization: { tid: string; reference: string; status: string; amount: number; returnCode: string } | null;
  capture: { amount: number } | null;
  refunds: { refundId: string; amount: number; status: string }[];
}
interface SdkOut {
  ok?: SdkTransaction;
  error?: { class: string; code: number; message: string };
  log: string;
}

let source: ReturnType<typeof sdkSource> | undefined;
let sdk: string;
let sim: RunningSimulator;
let seq = 0;

beforeAll(async () => {
  const found = sdkSource('erede', 'EREDE_SDK_MIRROR');
  source = found;
  sdk = found.dir;
  sim = await startSimulator('erede');
});

afterAll(async () => {
  await sim?.stop();
  source?.cleanup();
});

function php(command: Record<string, unknown>): SdkOut {
  const json = JSON.stringify({ base: `${sim.url}/erede`, pv: '10000001', token: 'sdk-token', ...command });
  const out = execFileSync('php', ['-d', 'display_errors=stderr', RUNNER, sdk, json], { encoding: 'utf8' });
  const parsed = JSON.parse(out) as SdkOut;
  expect(parsed.log).not.toContain(CARD);
  return parsed;
}

const reference = () => `sdk${Date.now() % 1e9}${++seq}`;
const create = (capture: boolean, ref = reference(), card = CARD, amount = 20.99) =>
  php({
    op: 'create',
    amount,
    reference: ref,
    cardNumber: card,
    securityCode: '235',
    month: '12',
    year: new Date().getFullYear() + 1,
    holder: 'John Snow',
    capture,
  });

async function sale(tid: string) {
  const found = (await ledger(sim.url)).find((s) => s.tid === tid);
  expect(found).toBeDefined();
  return found!;
}

test('a sale with capture: approved (00), brand opened, captured in the ledger', async () => {
  const { ok } = create(true);
  expect(ok).toMatchObject({ returnCode: '00', amount: 2099, brand: 'Mastercard' });
  expect(ok!.tid).toMatch(/^\d{20}$/);
  expect(ok!.authorizationCode).toMatch(/^\d{6}$/);
  expect(await sale(ok!.tid!)).toMatchObject({
    pv: '10000001',
    status: 'captured',
    capture: true,
    capturedAmount: 2099,
    maskedCard: '544828******0007',
  });
});

test('authorize only, read by tid and by reference, then captured', async () => {
  const ref = reference();
  const auth = create(false, ref).ok!;
  expect(auth.returnCode).toBe('00');
  expect(await sale(auth.tid!)).toMatchObject({ status: 'authorized', capturedAmount: 0 });

  const byTid = php({ op: 'get', tid: auth.tid }).ok!;
  expect(byTid.authorization).toMatchObject({ tid: auth.tid, reference: ref, status: 'Approved', amount: 2099, returnCode: '00' });
  expect(byTid.capture).toBeNull();
  const byRef = php({ op: 'getByReference', reference: ref }).ok!;
  expect(byRef.authorization).toMatchObject({ tid: auth.tid, reference: ref });

  const captured = php({ op: 'capture', tid: auth.tid, amount: 20.99 }).ok!;
  expect(captured).toMatchObject({ returnCode: '00', tid: auth.tid });
  expect(php({ op: 'get', tid: auth.tid }).ok!.capture).toEqual({ amount: 2099, nsu: expect.any(String) });
  expect(await sale(auth.tid!)).toMatchObject({ status: 'captured', capturedAmount: 2099 });
});

test('a partial refund, then the rest: 359 each, refunds listed, cancelled in the ledger', async () => {
  const { tid } = create(true).ok!;
  const part = php({ op: 'cancel', tid, amount: 5 }).ok!;
  expect(part).toMatchObject({ returnCode: '359', tid });
  expect(part.refundId).toBeTruthy();
  expect(await sale(tid!)).toMatchObject({ status: 'captured', refundedAmount: 500 });

  const rest = php({ op: 'cancel', tid, amount: 15.99 }).ok!;
  expect(rest.returnCode).toBe('359');
  const refunds = php({ op: 'getRefunds', tid }).ok!.refunds;
  expect(refunds.map((r) => [r.refundId, r.amount, r.status])).toEqual([
    [part.refundId, 500, 'Done'],
    [rest.refundId, 1599, 'Done'],
  ]);
  const s = await sale(tid!);
  expect(s).toMatchObject({ status: 'cancelled', refundedAmount: 2099 });
  expect(s.operations.map((o) => o.kind)).toEqual(['authorize', 'capture', 'refund', 'refund']);

  const again = php({ op: 'cancel', tid, amount: 1 });
  expect(again.error).toEqual({ class: 'RedeException', code: 355, message: 'Transaction already canceled.' });
});

test('a total cancel of an authorization only', async () => {
  const { tid } = create(false).ok!;
  expect(php({ op: 'cancel', tid, amount: 20.99 }).ok!.returnCode).toBe('359');
  expect(await sale(tid!)).toMatchObject({ status: 'cancelled', capturedAmount: 0, refundedAmount: 2099 });
  expect(php({ op: 'get', tid }).ok!.authorization!.status).toBe('Canceled');
});

test('a decline: RedeException with the issuer code, declined in the ledger', async () => {
  const ref = reference();
  const out = create(true, ref, '4000000000009995');
  expect(out.error).toEqual({ class: 'RedeException', code: 111, message: 'Unauthorized. Insufficient funds.' });
  const declined = (await ledger(sim.url)).find((s) => s.reference === ref);
  expect(declined).toMatchObject({ status: 'declined', capturedAmount: 0 });
  expect(php({ op: 'getByReference', reference: ref }).ok!.authorization).toMatchObject({ status: 'Denied', returnCode: '111' });
});

test('an invalid card (Luhn) is declined with 109', async () => {
  expect(create(true, reference(), '5448280000000008').error).toMatchObject({ class: 'RedeException', code: 109 });
});

test('validation errors carry e.Rede codes and record nothing', async () => {
  const before = (await ledger(sim.url)).length;
  expect(create(true, 'this-reference-is-too-long').error).toEqual({
    class: 'RedeException',
    code: 39,
    message: 'reference: Invalid parameter size',
  });
  expect(create(true, reference(), '12ab').error).toMatchObject({ code: 37 });
  const ref = reference();
  create(true, ref);
  expect(create(true, ref).error).toEqual({ class: 'RedeException', code: 42, message: 'reference: Order number already exists' });
  expect(php({ op: 'get', tid: '99999999999999999999' }).error).toMatchObject({ code: 78 });
  const { tid } = create(false).ok!;
  expect(php({ op: 'capture', tid, amount: 30 }).error).toMatchObject({ code: 49 });
  expect((await ledger(sim.url)).length).toBe(before + 2);
});
