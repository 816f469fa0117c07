/**
 * The Cielo connector against the Cielo simulator, in process: every operation and every fault
 * mode, with the simulator's ledger checked after each (one charge, never two).
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { serveSimulator } from '../../../../scripts/simulators/faults';
import { cieloSimulator } from '../../../../scripts/simulators/cielo';
import { AcquirerUnavailableError, AcquirerUnreachableError, AuthorizeCommand } from '../acquirer.connector';
import { CieloConnector } from './cielo.connector';
import { BreakerConnector } from '../breaker';
import { differencesOf } from '../reconcile';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const SPACING_MS = 200;
const account = { account: '8f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b', secret: 'TESTKEY0123456789ABCDEFGHIJKLMNOPQRSTUVW' };
let server: Server;
let base: string;
let cielo: CieloConnector;

beforeAll(async () => {
  const started = await serveSimulator(cieloSimulator(new Map([['void-spacing-ms', String(SPACING_MS)]])), 0);
  server = started.server;
  base = `http://127.0.0.1:${started.port}/`;
  cielo = connector();
});
afterAll(async () => {
  await cielo.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => fetch(`${base}__sim/ledger`, { method: 'DELETE' }));

function connector(extra: Partial<ConstructorParameters<typeof CieloConnector>[0]> = {}) {
  return new CieloConnector({
    apiUrl: base,
    queryUrl: base,
    connectTimeoutMs: 300,
    responseTimeoutMs: 400,
    voidSpacingMs: SPACING_MS,
    ...extra,
  });
}

function command(over: Partial<AuthorizeCommand> = {}): AuthorizeCommand {
  const transactionId = randomUUID();
  return {
    transactionId,
    operationKey: `${transactionId}-authorize`,
    acquirer: 26,
    account,
    pan: '4551870000000181',
    expYear: 2030,
    expMonth: 7,
    holder: 'Maria Silva',
    brand: 'visa',
    securityCode: '123',
    amount: 10000,
    currency: 'BRL',
    instalments: 1,
    capture: false,
    ...over,
  };
}

/** Until the simulator shows a sale (a create sent late lands). */
const landed = async () => {
  for (let i = 0; i < 100 && !(await ledger()).length; i++) await new Promise((r) => setTimeout(r, 50));
};
const ledger = async (): Promise<Json[]> => ((await (await fetch(`${base}__sim/ledger`)).json()) as Json).sales;
const fault = (f: Json) => fetch(`${base}__sim/faults`, { method: 'POST', body: JSON.stringify(f) });
const sale = async (paymentId: string): Promise<Json> =>
  (await fetch(`${base}1/sales/${paymentId}`, { headers: { MerchantId: account.account, MerchantKey: account.secret } })).json();
const follow = (saleRef: string, amount?: number) => ({ operationKey: randomUUID(), tid: '', saleRef, account, amount });

describe('authorize', () => {
  it('sends a sale Cielo accepts: order id = transaction id without dashes, brand, expiry, soft descriptor', async () => {
    const cmd = command({ brand: 'mastercard', pan: '5551870000000181', softDescriptor: 'Loja-da-Maria Online' });
    const r = await cielo.authorize(cmd);
    expect(r).toMatchObject({ outcome: 'approved', returnCode: '4', authorizationCode: expect.stringMatching(/^\d{6}$/) });
    const [s] = await ledger();
    expect(s).toMatchObject({ merchantOrderId: cmd.transactionId.replace(/-/g, ''), tid: r.tid, proofOfSale: r.nsu, paymentId: r.saleRef });
    expect(s).toMatchObject({ status: 1, amount: 10000, maskedCard: '555187******0181', merchantId: account.account });
    const { Payment } = await sale(r.saleRef!);
    expect(Payment.CreditCard).toMatchObject({ Brand: 'Master', ExpirationDate: '07/2030', Holder: 'Maria Silva' });
    expect(Payment.SoftDescriptor).toBe('LojadaMariaOn');
  });

  it('captures at once when asked: Status 2', async () => {
    const r = await cielo.authorize(command({ capture: true }));
    expect(r).toMatchObject({ outcome: 'approved', returnCode: '6' });
    expect((await ledger())[0]).toMatchObject({ status: 2, capturedAmount: 10000 });
  });

  it('a merchant-initiated charge goes as a recurring card on file, without security code', async () => {
    const r = await cielo.authorize(command({ initiator: 'merchant' }));
    const { Payment } = await sale(r.saleRef!);
    expect(Payment.CreditCard.CardOnFile).toEqual({ Usage: 'Used', Reason: 'Recurring' });
    expect(Payment.Recurrent).toBe(true);
  });

  it('declines by the card (ending 2 → 05) and on a validation error (126, with its message)', async () => {
    expect(await cielo.authorize(command({ pan: '4551870000000182' }))).toMatchObject({
      outcome: 'declined',
      returnCode: '05',
      returnMessage: 'Not Authorized',
    });
    const expired = await cielo.authorize(command({ expYear: 2020 }));
    expect(expired).toEqual({
      outcome: 'declined',
      returnCode: '126',
      returnMessage: 'Credit Card Expiration Date is invalid',
      tid: '',
      nsu: '',
    });
    expect((await ledger()).map((s) => s.status)).toEqual([3]);
  });

  it('wrong credentials (401) decline with a clear code, never the key', async () => {
    const r = await cielo.authorize(command({ account: { account: 'not-a-guid', secret: account.secret } }));
    expect(r).toMatchObject({ outcome: 'declined', returnCode: '401' });
    expect(JSON.stringify(r)).not.toContain(account.secret);
  });

  it('without an account it refuses before sending anything', async () => {
    await expect(cielo.authorize(command({ account: undefined }))).rejects.toBeInstanceOf(AcquirerUnavailableError);
  });

  it('resumed: finds the sale made before by its order id and adopts it (no second charge)', async () => {
    const cmd = command();
    const first = await cielo.authorize(cmd);
    const again = await cielo.authorize({ ...cmd, resumed: true });
    expect(again).toMatchObject({ outcome: 'approved', saleRef: first.saleRef, tid: first.tid });
    expect(await ledger()).toHaveLength(1);
    const fresh = await cielo.authorize(command({ resumed: true }));
    expect(fresh.outcome).toBe('approved');
    expect(await ledger()).toHaveLength(2);
  });
});

describe('authorize under faults', () => {
  it('hang (acts, never answers): exactly one charge, adopted by its order id', async () => {
    await fault({ mode: 'hang', match: 'POST /1/sales' });
    const cmd = command({ capture: true });
    const r = await cielo.authorize(cmd);
    expect(r).toMatchObject({ outcome: 'approved', returnCode: '6' });
    const sales = await ledger();
    expect(sales).toHaveLength(1);
    expect(sales[0]).toMatchObject({
      paymentId: r.saleRef,
      tid: r.tid,
      status: 2,
      operations: [{ kind: 'authorize' }, { kind: 'capture' }],
    });
  });

  it('act-then-5xx: the charge made is adopted, never a second', async () => {
    await fault({ mode: 'act-then-5xx', match: 'POST /1/sales' });
    const r = await cielo.authorize(command());
    expect(r.outcome).toBe('approved');
    expect(await ledger()).toEqual([expect.objectContaining({ paymentId: r.saleRef, status: 1 })]);
  });

  it('refuse-5xx: the outcome stays unknown (AcquirerUnreachableError: a 5xx is no proof), nothing charged', async () => {
    await fault({ mode: 'refuse-5xx', match: 'POST /1/sales' });
    const cmd = command();
    const err = await cielo.authorize(cmd).catch((e: Error) => e);
    expect(err).toBeInstanceOf(AcquirerUnreachableError);
    for (const secret of [cmd.pan, account.secret, cmd.securityCode!]) expect((err as Error).message).not.toContain(secret);
    expect(await ledger()).toEqual([]);
  });

  it('slow (within the response timeout): answered as usual', async () => {
    await fault({ mode: 'slow', delayMs: 150 });
    expect((await cielo.authorize(command())).outcome).toBe('approved');
    expect(await ledger()).toHaveLength(1);
  });

  it('the answer lost and the query failing too: AcquirerUnreachableError', async () => {
    await fault([
      { mode: 'hang', match: 'POST /1/sales' },
      { mode: 'refuse-5xx', match: 'GET /1/sales' },
    ]);
    await expect(cielo.authorize(command())).rejects.toBeInstanceOf(AcquirerUnreachableError);
    expect(await ledger()).toHaveLength(1);
  });

  it('connection refused: AcquirerUnavailableError', async () => {
    const closed = connector({ apiUrl: 'http://127.0.0.1:1/', queryUrl: 'http://127.0.0.1:1/' });
    await expect(closed.authorize(command())).rejects.toBeInstanceOf(AcquirerUnavailableError);
    await closed.close();
  });

  it.each([['status-0'], ['status-12']])('%s: outcome timeout; the reversal the caller makes voids it', async (mode) => {
    await fault({ mode, match: 'POST /1/sales' });
    const cmd = command();
    const r = await cielo.authorize(cmd);
    expect(r.outcome).toBe('timeout');
    const rev = await cielo.reverse({ operationKey: 'r', tid: r.tid, transactionId: cmd.transactionId, account });
    expect(rev.outcome).toBe('approved');
    expect(await ledger()).toEqual([expect.objectContaining({ status: 10, voidedAmount: 10000 })]);
  });

  it('an open breaker refuses without calling Cielo', async () => {
    const inner = connector();
    const guarded = new BreakerConnector(inner, { minCalls: 1, errorPercent: 1, resetMs: 60_000, windowMs: 10_000 });
    await fault({ mode: 'refuse-5xx', match: 'POST /1/sales' });
    await expect(guarded.authorize(command())).rejects.toBeInstanceOf(AcquirerUnreachableError);
    const err = await guarded.authorize(command()).catch((e: Error) => e);
    expect(err).toBeInstanceOf(AcquirerUnavailableError);
    expect((err as Error).message).toMatch(/breaker/);
    expect(await ledger()).toEqual([]);
    await inner.close();
  });
});

describe('capture', () => {
  it('in part once; a second capture is refused with 308', async () => {
    const a = await cielo.authorize(command());
    expect(await cielo.capture(follow(a.saleRef!, 6000))).toMatchObject({ outcome: 'approved', returnCode: '6', tid: a.tid, nsu: a.nsu });
    expect(await cielo.capture(follow(a.saleRef!))).toMatchObject({ outcome: 'declined', returnCode: '308' });
    expect((await ledger())[0]).toMatchObject({ status: 2, capturedAmount: 6000 });
  });

  it('a lost partial capture is not resent: read from the sale', async () => {
    const a = await cielo.authorize(command());
    await fault({ mode: 'hang', match: 'PUT /1/sales' });
    await expect(cielo.capture(follow(a.saleRef!, 4000))).rejects.toBeInstanceOf(AcquirerUnreachableError);
    const ref = { operationKey: 'c', kind: 'capture' as const, transactionId: randomUUID(), account, saleRef: a.saleRef, amount: 4000 };
    expect(await cielo.settle({ ...ref, before: { captured: 0, cancelled: 0 } })).toMatchObject({
      outcome: 'approved',
      saleRef: a.saleRef,
    });
    expect((await ledger())[0].operations.filter((o: Json) => o.kind === 'capture')).toHaveLength(1);
  });

  it('a partial capture refused by a 5xx is not resent: not received', async () => {
    const a = await cielo.authorize(command());
    await fault({ mode: 'refuse-5xx', match: 'PUT /1/sales' });
    await expect(cielo.capture(follow(a.saleRef!, 4000))).rejects.toBeInstanceOf(AcquirerUnreachableError);
    const ref = { operationKey: 'c', kind: 'capture' as const, transactionId: randomUUID(), account, saleRef: a.saleRef, amount: 4000 };
    expect(await cielo.settle({ ...ref, before: { captured: 0, cancelled: 0 } })).toMatchObject({
      outcome: 'declined',
      returnCode: 'NR',
      voided: true,
    });
    expect((await ledger())[0]).toMatchObject({ status: 1, capturedAmount: 0 });
  });

  it('a lost total capture is resent once; its refusal (308) reads the sale: captured once', async () => {
    const a = await cielo.authorize(command());
    await fault({ mode: 'act-then-5xx', match: 'PUT /1/sales' });
    expect(await cielo.capture(follow(a.saleRef!))).toMatchObject({ outcome: 'approved' });
    expect((await ledger())[0]).toMatchObject({ status: 2, capturedAmount: 10000 });
    expect((await ledger())[0].operations.filter((o: Json) => o.kind === 'capture')).toHaveLength(1);
  });

  it('a total capture refused by a 5xx is resent once and applied', async () => {
    const a = await cielo.authorize(command());
    await fault({ mode: 'refuse-5xx', match: 'PUT /1/sales' });
    expect(await cielo.capture(follow(a.saleRef!))).toMatchObject({ outcome: 'approved', returnCode: '6' });
    expect((await ledger())[0]).toMatchObject({ status: 2, capturedAmount: 10000 });
  });
});

describe('cancel and reverse', () => {
  it('partial voids at least the spacing apart, then the rest: status 10', async () => {
    const a = await cielo.authorize(command({ capture: true }));
    const t0 = Date.now();
    // One at a time, as the gateway sends a transaction's operations.
    const v1 = await cielo.cancel(follow(a.saleRef!, 1000));
    const v2 = await cielo.cancel(follow(a.saleRef!, 2000));
    expect([v1.outcome, v2.outcome]).toEqual(['approved', 'approved']);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(SPACING_MS);
    expect(await cielo.cancel(follow(a.saleRef!))).toMatchObject({ outcome: 'approved', returnCode: '9' });
    const [s] = await ledger();
    expect(s).toMatchObject({ status: 10, voidedAmount: 10000 });
    const voids = s.operations.filter((o: Json) => o.kind === 'void');
    expect(voids.map((o: Json) => o.amount)).toEqual([1000, 2000, 7000]);
    for (let i = 1; i < voids.length; i++)
      expect(Date.parse(voids[i].at) - Date.parse(voids[i - 1].at)).toBeGreaterThanOrEqual(SPACING_MS - 5);
  });

  it('a lost partial void is read from the sale, never resent', async () => {
    const a = await cielo.authorize(command({ capture: true }));
    await fault({ mode: 'act-then-5xx', match: 'PUT /1/sales' });
    await expect(cielo.cancel(follow(a.saleRef!, 2500))).rejects.toBeInstanceOf(AcquirerUnreachableError);
    const ref = { operationKey: 'v', kind: 'cancel' as const, transactionId: randomUUID(), account, saleRef: a.saleRef, amount: 2500 };
    expect(await cielo.settle({ ...ref, before: { captured: 10000, cancelled: 0 } })).toMatchObject({ outcome: 'approved' });
    const [s] = await ledger();
    expect(s).toMatchObject({ status: 2, voidedAmount: 2500 });
    expect(s.operations.filter((o: Json) => o.kind === 'void')).toHaveLength(1);
  });

  it('a lost total void is resent once: voided once', async () => {
    const a = await cielo.authorize(command());
    await fault({ mode: 'hang', match: 'PUT /1/sales' });
    expect(await cielo.cancel(follow(a.saleRef!))).toMatchObject({ outcome: 'approved' });
    expect((await ledger())[0]).toMatchObject({ status: 10, voidedAmount: 10000 });
  });

  it('reverse finds the sale by the transaction id when there is no saleRef; nothing to reverse is a success', async () => {
    const cmd = command();
    const a = await cielo.authorize(cmd);
    const r = await cielo.reverse({ operationKey: 'r', tid: a.tid, transactionId: cmd.transactionId, account });
    expect(r).toMatchObject({ outcome: 'approved', returnCode: '9', saleRef: a.saleRef });
    const none = await cielo.reverse({ operationKey: 'r', tid: '', transactionId: randomUUID(), account });
    expect(none.outcome).toBe('approved');
    const declined = await cielo.authorize(command({ pan: '4551870000000182' }));
    expect((await cielo.reverse({ operationKey: 'r', tid: declined.tid, saleRef: declined.saleRef, account })).outcome).toBe('approved');
    expect((await ledger()).map((s) => s.status)).toEqual([10, 3]);
  });
});

describe('inquire, settle and books', () => {
  it('inquire: an authorization by its order id; a capture or cancel by the amounts moved', async () => {
    const cmd = command();
    const a = await cielo.authorize(cmd);
    const ref = { operationKey: 'k', transactionId: cmd.transactionId, account };
    expect(await cielo.inquire({ ...ref, kind: 'authorize' })).toMatchObject({ outcome: 'approved', saleRef: a.saleRef });
    expect(await cielo.inquire({ ...ref, transactionId: randomUUID(), kind: 'authorize' })).toBeUndefined();
    const capture = { ...ref, kind: 'capture' as const, saleRef: a.saleRef, amount: 7000, before: { captured: 0, cancelled: 0 } };
    expect(await cielo.inquire(capture)).toBeUndefined();
    await cielo.capture(follow(a.saleRef!, 7000));
    expect(await cielo.inquire(capture)).toMatchObject({ outcome: 'approved', tid: a.tid });
    const cancel = { ...ref, kind: 'cancel' as const, saleRef: a.saleRef, amount: 3000, before: { captured: 7000, cancelled: 0 } };
    expect(await cielo.inquire(cancel)).toBeUndefined();
    expect(await cielo.settle(cancel)).toEqual({
      outcome: 'declined',
      returnCode: 'NR',
      returnMessage: 'Not received by the acquirer',
      voided: true,
      tid: '',
      nsu: '',
    });
    await cielo.cancel(follow(a.saleRef!, 3000));
    expect(await cielo.settle(cancel)).toMatchObject({ outcome: 'approved' });
    expect((await ledger())[0]).toMatchObject({ capturedAmount: 7000, voidedAmount: 3000 });
  });

  it("books: each sale's status and amounts; a reversal shows approved, wholly voided, with its amount", async () => {
    const captured = await cielo.authorize(command({ capture: true }));
    const reversedCmd = command({ amount: 4200 });
    const reversed = await cielo.authorize(reversedCmd);
    await cielo.reverse({ operationKey: 'r', tid: reversed.tid, saleRef: reversed.saleRef, account });
    const declinedCmd = command({ pan: '4551870000000185' });
    const declined = await cielo.authorize(declinedCmd);
    const capturedId = randomUUID();
    const unknownId = randomUUID();
    const books = await cielo.books([
      { tid: captured.tid, saleRef: captured.saleRef, transactionId: capturedId, account },
      { tid: reversed.tid, transactionId: reversedCmd.transactionId, account },
      { tid: declined.tid, saleRef: declined.saleRef, transactionId: declinedCmd.transactionId, account },
      { tid: 'unknown', transactionId: unknownId, account },
    ]);
    expect(books.get(capturedId)).toEqual({
      sale: { tid: captured.tid, saleRef: captured.saleRef, approved: true, captured: 10000, cancelled: 0, amount: 10000 },
      others: [],
    });
    expect(books.get(reversedCmd.transactionId)).toEqual({
      sale: { tid: reversed.tid, saleRef: reversed.saleRef, approved: true, captured: 0, cancelled: 4200, amount: 4200 },
      others: [],
    });
    expect(books.get(declinedCmd.transactionId)?.sale).toMatchObject({ approved: false, captured: 0, cancelled: 0 });
    expect(books.has(unknownId)).toBe(false);
    expect(cielo.booksSince(new Date('2026-06-30T00:00:00Z'))).toEqual(new Date('2026-04-01T00:00:00Z'));
  });
});

describe('one order id, several charges', () => {
  const recordedOf = (transactionId: string, status: number, captured = 0) => ({
    id: transactionId,
    merchantId: 'm',
    status,
    captured,
    cancelled: 0,
  });
  const orphan = (transactionId: string, saleRef: string, tid: string, acquirer: number) => ({
    transactionId: transactionId.toUpperCase(),
    merchantId: 'm',
    check: 'orphan',
    gateway: 'not recorded',
    acquirer,
    tid,
    saleRef,
  });

  it('a create that landed after its sale was declined (101, no tid): found by its order id, reported; voided whole, no difference', async () => {
    const cmd = command({ capture: true });
    // The create lands after the connector gave up waiting, and after its lookup found nothing.
    await fault({ mode: 'slow', match: 'POST /1/sales', delayMs: 2_500 });
    await expect(cielo.authorize(cmd)).rejects.toBeInstanceOf(AcquirerUnreachableError);
    // The pending-sales reconciler asks, finds nothing yet, and declines the sale with 101, without a tid.
    expect(await cielo.inquire({ operationKey: 'a', kind: 'authorize', transactionId: cmd.transactionId, account })).toBeUndefined();
    const recorded = recordedOf(cmd.transactionId, 4);
    await landed();
    const [late] = await ledger();
    expect(late).toMatchObject({ merchantOrderId: cmd.transactionId.replace(/-/g, ''), status: 2 });

    const books = await cielo.books([{ transactionId: cmd.transactionId, account }]);
    expect(differencesOf(recorded, books.get(cmd.transactionId), new Date(), 0)).toEqual([
      orphan(cmd.transactionId, late.paymentId, late.tid, 10000),
    ]);
    await cielo.reverse({ operationKey: 'r', tid: '', transactionId: cmd.transactionId, account });
    const after = await cielo.books([{ transactionId: cmd.transactionId, account }]);
    expect(after.get(cmd.transactionId)?.others).toEqual([expect.objectContaining({ saleRef: late.paymentId, cancelled: 10000 })]);
    expect(differencesOf(recorded, after.get(cmd.transactionId), new Date(), 0)).toEqual([]);
  });

  it('two PaymentIds for one MerchantOrderId: reconciliation reports the one not recorded; a resumed create adopts the first and voids the other', async () => {
    const cmd = command();
    // Two workers' creates of one sale (the first's claim lapsed while its create was in flight).
    const first = await cielo.authorize(cmd);
    const second = await cielo.authorize(cmd);
    expect(second.saleRef).not.toBe(first.saleRef);
    const recorded = recordedOf(cmd.transactionId, 3);
    const ref = { tid: first.tid, saleRef: first.saleRef, transactionId: cmd.transactionId, account };
    const books = await cielo.books([ref]);
    expect(books.get(cmd.transactionId)?.sale).toMatchObject({ saleRef: first.saleRef, approved: true });
    expect(differencesOf(recorded, books.get(cmd.transactionId), new Date(), 0)).toEqual([
      orphan(cmd.transactionId, second.saleRef!, second.tid, 10000),
    ]);
    // Inquiring never acts.
    expect(await cielo.inquire({ operationKey: 'a', kind: 'authorize', transactionId: cmd.transactionId, account })).toMatchObject({
      saleRef: first.saleRef,
    });
    expect((await ledger()).map((s) => s.status)).toEqual([1, 1]);

    // A resumed create finds both: it adopts the first (never creates a third) and voids the second.
    const resumed = await cielo.authorize({ ...cmd, resumed: true });
    expect(resumed).toMatchObject({ outcome: 'approved', saleRef: first.saleRef, tid: first.tid });
    const sales = await ledger();
    expect(sales.map((s) => [s.paymentId, s.status])).toEqual([
      [first.saleRef, 1],
      [second.saleRef, 10],
    ]);
    // The voided one holds nothing: no difference left.
    expect(differencesOf(recorded, (await cielo.books([ref])).get(cmd.transactionId), new Date(), 0)).toEqual([]);
  });

  it('a resumed create adopts the one holding money when the first was declined; a reversal voids every one', async () => {
    const cmd = command();
    const declined = await cielo.authorize({ ...cmd, pan: '4551870000000182' });
    expect(declined.outcome).toBe('declined');
    const approved = await cielo.authorize(cmd);
    const third = await cielo.authorize(cmd);
    const resumed = await cielo.authorize({ ...cmd, resumed: true });
    expect(resumed).toMatchObject({ outcome: 'approved', saleRef: approved.saleRef });
    expect((await ledger()).map((s) => s.status)).toEqual([3, 1, 10]);
    expect(third.saleRef).toBe((await ledger())[2].paymentId);
    // The sale declined after all (101): every charge under its order id is voided.
    expect(
      await cielo.reverse({ operationKey: 'r', tid: '', saleRef: approved.saleRef, transactionId: cmd.transactionId, account }),
    ).toMatchObject({
      outcome: 'approved',
      saleRef: approved.saleRef,
    });
    expect((await ledger()).map((s) => s.status)).toEqual([3, 10, 10]);
  });
});
