import { Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { serveSimulator } from '../../../../scripts/simulators/faults';
import { eredeSimulator } from '../../../../scripts/simulators/erede';
import { AcquirerUnavailableError, AcquirerUnreachableError, AuthorizeCommand } from '../acquirer.connector';
import { EredeConnector } from './erede.connector';
import { eredeReference } from './erede.wire';
import { differencesOf } from '../reconcile';

interface Sale {
  tid: string;
  reference: string;
  status: string;
  capturedAmount: number;
  refundedAmount: number;
  operations: { kind: string }[];
}

let server: Server;
let url: string;
let erede: EredeConnector;
const account = { account: '30000001', secret: 'token-xyz' };

beforeAll(async () => {
  const started = await serveSimulator(eredeSimulator(new Map()), 0);
  server = started.server;
  url = `http://127.0.0.1:${started.port}`;
  erede = new EredeConnector({ apiUrl: `${url}/erede`, connectTimeoutMs: 500, responseTimeoutMs: 400 });
});
afterAll(async () => {
  await erede.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(async () => {
  await fetch(`${url}/__sim/ledger`, { method: 'DELETE' });
});

/** Until the simulator shows a sale (a create sent late lands). */
const landed = async () => {
  for (let i = 0; i < 100 && !(await ledger()).length; i++) await new Promise((r) => setTimeout(r, 50));
};
const ledger = async () => ((await (await fetch(`${url}/__sim/ledger`)).json()) as { sales: Sale[] }).sales;
const fault = (f: object) => fetch(`${url}/__sim/faults`, { method: 'POST', body: JSON.stringify(f) });
const cmd = (over: Partial<AuthorizeCommand> = {}): AuthorizeCommand => ({
  transactionId: randomUUID(),
  operationKey: 'k',
  acquirer: 27,
  account,
  pan: '5448280000000007',
  expYear: new Date().getFullYear() + 1,
  expMonth: 12,
  holder: 'Ana Silva',
  securityCode: '123',
  amount: 5000,
  currency: 'BRL',
  instalments: 1,
  capture: true,
  ...over,
});

test('reference: 16 deterministic hex digits (the id without its fixed version digit)', () => {
  const id = randomUUID();
  expect(eredeReference(id)).toMatch(/^[0-9a-f]{16}$/);
  expect(eredeReference(id)).toBe(eredeReference(id));
});

test('authorize approves, declines, and never puts the card in an error', async () => {
  const ok = await erede.authorize(cmd());
  expect(ok).toMatchObject({ outcome: 'approved', returnCode: '00' });
  expect(ok.tid).toMatch(/^\d{20}$/);
  const no = await erede.authorize(cmd({ pan: '4000000000009995' }));
  expect(no).toMatchObject({ outcome: 'declined', returnCode: '111' });
  const bad = await erede.authorize(cmd({ pan: '12' }));
  expect(bad).toMatchObject({ outcome: 'declined', returnCode: '36' });
  expect(JSON.stringify(bad)).not.toContain('token-xyz');
  expect((await ledger()).map((s) => s.status)).toEqual(['captured', 'declined']);
});

test('a merchant-initiated charge goes without security code, flagged recurring', async () => {
  expect(await erede.authorize(cmd({ initiator: 'merchant', securityCode: undefined }))).toMatchObject({ outcome: 'approved' });
});

test('"acts, then never answers": exactly one charge, the one reported', async () => {
  await fault({ mode: 'hang', match: 'POST /erede/v1/transactions' });
  const r = await erede.authorize(cmd());
  const sales = await ledger();
  expect(sales).toHaveLength(1);
  expect(r).toMatchObject({ outcome: 'approved', tid: sales[0].tid });
});

test('act-then-5xx is resolved by reference; resumed adopts without resending', async () => {
  const c = cmd();
  await fault({ mode: 'act-then-5xx' });
  const r = await erede.authorize(c);
  expect(r.outcome).toBe('approved');
  const again = await erede.authorize({ ...c, resumed: true });
  expect(again.tid).toBe(r.tid);
  expect(await ledger()).toHaveLength(1);
});

test('refuse-5xx → outcome unknown (a 5xx is no proof) and an empty ledger; a closed port → AcquirerUnavailableError', async () => {
  await fault({ mode: 'refuse-5xx', match: 'POST /erede/v1/transactions' });
  await expect(erede.authorize(cmd())).rejects.toBeInstanceOf(AcquirerUnreachableError);
  expect(await ledger()).toEqual([]);
  const closed = new EredeConnector({ apiUrl: 'http://127.0.0.1:9/erede', connectTimeoutMs: 300, responseTimeoutMs: 400 });
  await expect(closed.authorize(cmd())).rejects.toBeInstanceOf(AcquirerUnavailableError);
  await closed.close();
});

test('capture (also after a lost answer), partial and total refunds (one lost), inquire/settle, books', async () => {
  const c = cmd({ capture: false });
  const { tid } = await erede.authorize(c);
  // A lost partial capture is never resent: the caller settles it from the transaction's amounts.
  await fault({ mode: 'hang', match: `PUT /erede/v1/transactions/${tid}` });
  await expect(erede.capture({ operationKey: 'c', tid, account, amount: 5000 })).rejects.toBeInstanceOf(AcquirerUnreachableError);
  const captured = { operationKey: 'c', kind: 'capture' as const, transactionId: c.transactionId, account, tid, amount: 5000 };
  expect(await erede.settle({ ...captured, before: { captured: 0, cancelled: 0 } })).toMatchObject({ outcome: 'approved' });
  expect((await ledger())[0]).toMatchObject({ status: 'captured', capturedAmount: 5000 });

  expect(await erede.cancel({ operationKey: 'p', tid, account, amount: 1000 })).toMatchObject({ outcome: 'approved', returnCode: '359' });
  await fault({ mode: 'hang', match: `POST /erede/v1/transactions/${tid}/refunds` });
  await expect(erede.cancel({ operationKey: 'p2', tid, account, amount: 1500 })).rejects.toBeInstanceOf(AcquirerUnreachableError);
  const sale = (await ledger())[0];
  expect(sale.refundedAmount).toBe(2500);
  expect(sale.operations.filter((o) => o.kind === 'refund')).toHaveLength(2);

  const ref = { operationKey: 'p2', kind: 'cancel' as const, transactionId: c.transactionId, account, tid, amount: 1500 };
  expect(await erede.inquire({ ...ref, before: { captured: 5000, cancelled: 1000 } })).toMatchObject({ outcome: 'approved' });
  expect(await erede.inquire({ ...ref, before: { captured: 5000, cancelled: 2500 } })).toBeUndefined();
  expect(await erede.settle({ ...ref, before: { captured: 5000, cancelled: 2500 } })).toMatchObject({ returnCode: 'NR', voided: true });
  expect(await erede.inquire({ operationKey: 'a', kind: 'authorize', transactionId: c.transactionId, account })).toMatchObject({ tid });
  expect(await erede.inquire({ operationKey: 'a', kind: 'authorize', transactionId: randomUUID(), account })).toBeUndefined();

  expect(await erede.reverse({ operationKey: 'r', tid: '', transactionId: c.transactionId, account })).toMatchObject({
    outcome: 'approved',
  });
  expect((await ledger())[0]).toMatchObject({ status: 'cancelled', refundedAmount: 5000 });

  const books = await erede.books([
    { tid, transactionId: c.transactionId, account },
    { tid: '1', transactionId: 'x', account },
  ]);
  expect([...books.entries()]).toEqual([
    [c.transactionId, { sale: { tid, approved: true, captured: 5000, cancelled: 5000, amount: 5000 }, others: [] }],
  ]);
  expect(erede.booksSince()).toBeUndefined();
});

describe('reconciliation of a sale recorded without a tid', () => {
  it('a create that landed after its sale was declined (101, no tid) is found by its reference and reported as an orphan', async () => {
    const c = cmd();
    // The create lands after the connector gave up waiting, and after its lookup found nothing.
    await fault({ mode: 'slow', match: 'POST /erede/v1/transactions', delayMs: 2_500 });
    await expect(erede.authorize(c)).rejects.toBeInstanceOf(AcquirerUnreachableError);
    // The pending-sales reconciler asks, finds nothing yet, and declines the sale with 101, without a tid.
    expect(await erede.inquire({ operationKey: 'a', kind: 'authorize', transactionId: c.transactionId, account })).toBeUndefined();
    const recorded = { id: c.transactionId, merchantId: 'm', status: 4, captured: 0, cancelled: 0 };
    await landed();
    const [late] = await ledger();
    expect(late).toMatchObject({ reference: eredeReference(c.transactionId), status: 'captured' });

    const books = await erede.books([{ transactionId: c.transactionId, account }]);
    expect(differencesOf(recorded, books.get(c.transactionId), new Date(), 0)).toEqual([
      {
        transactionId: c.transactionId.toUpperCase(),
        merchantId: 'm',
        check: 'orphan',
        gateway: 'not recorded',
        acquirer: 5000,
        tid: late.tid,
      },
    ]);
    // Voided whole, it holds nothing: no difference.
    await erede.reverse({ operationKey: 'r', tid: '', transactionId: c.transactionId, account });
    const after = await erede.books([{ transactionId: c.transactionId, account }]);
    expect(after.get(c.transactionId)?.others).toHaveLength(1);
    expect(differencesOf(recorded, after.get(c.transactionId), new Date(), 0)).toEqual([]);
    // Never found: nothing to compare.
    expect((await erede.books([{ transactionId: randomUUID(), account }])).size).toBe(0);
  });

  it('e.Rede refuses a second create with one reference (42): the second try adopts the first, one charge', async () => {
    const c = cmd();
    const first = await erede.authorize(c);
    const again = await erede.authorize(c);
    expect(again).toMatchObject({ outcome: 'approved', tid: first.tid });
    expect(await ledger()).toHaveLength(1);
  });
});
