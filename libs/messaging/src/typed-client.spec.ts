import type { ClientProxy } from '@nestjs/microservices';
import { lastValueFrom, Observable, of } from 'rxjs';
import { CaptureRequest, Events, Patterns, TokenRetrieveRequest, TokenView, TransactionEvent, TransactionView } from '@app/contracts';
import { TypedClient } from './typed-client';

// The `@ts-expect-error` lines are checked by `npm run typecheck` (tsc includes the specs; jest
// only transpiles): each must be a compile error, or that run fails.

const capture: CaptureRequest = { transactionId: 'T1', merchantId: 'M1', operationId: 'op-1', notAfter: 0 };
const view = { id: 'T1', status: 8 } as TransactionView;
const event: TransactionEvent = { transactionId: 'T1', merchantId: 'M1', statusVersion: 2, capturedAmount: 100, cancelledAmount: 0 };

function fakeProxy(reply: unknown) {
  const calls: { kind: 'send' | 'emit'; pattern: unknown; data: unknown }[] = [];
  const proxy = {
    send: (pattern: unknown, data: unknown): Observable<unknown> => (calls.push({ kind: 'send', pattern, data }), of(reply)),
    emit: (pattern: unknown, data: unknown): Observable<unknown> => (calls.push({ kind: 'emit', pattern, data }), of(undefined)),
  };
  return { client: new TypedClient(proxy as unknown as ClientProxy), calls };
}

describe('TypedClient', () => {
  it('sends the request on its pattern and yields the reply', async () => {
    const { client, calls } = fakeProxy(view);
    const reply: TransactionView = await lastValueFrom(client.send(Patterns.CardCapture, capture));
    expect(reply).toBe(view);
    expect(calls).toEqual([{ kind: 'send', pattern: 'card.capture', data: capture }]);
  });

  it('emits the event payload on its event name', async () => {
    const { client, calls } = fakeProxy(undefined);
    await lastValueFrom(client.emit(Events.TransactionCaptured, event), { defaultValue: undefined });
    expect(calls).toEqual([{ kind: 'emit', pattern: 'transaction.captured', data: event }]);
  });

  it('refuses, at compile time, a payload or a reply type that is not the pattern’s', async () => {
    const { client } = fakeProxy(view);
    // A token lookup is not a capture request (no transactionId, operationId, notAfter).
    const lookup: TokenRetrieveRequest = { merchantId: 'M1', token: 'tok' };
    // @ts-expect-error wrong payload for the pattern
    client.send(Patterns.CardCapture, lookup);
    // A capture answers a TransactionView, never a TokenView.
    // @ts-expect-error wrong reply type for the pattern
    const token: TokenView = await lastValueFrom(client.send(Patterns.CardCapture, capture));
    // An event carries a TransactionEvent, not a request.
    // @ts-expect-error wrong event payload
    client.emit(Events.TransactionCancelled, capture);
    // Only catalogued names are accepted.
    // @ts-expect-error unknown pattern
    client.send('card.refund', capture);
    expect(token).toBe(view);
  });
});
