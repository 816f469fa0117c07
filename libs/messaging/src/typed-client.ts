import type { ClientProxy } from '@nestjs/microservices';
import type { Observable } from 'rxjs';
import type { EventName, EventPayloadOf, ReplyOf, RequestOf, RequestPattern } from '@app/contracts';

/**
 * The queue client as callers use it: each pattern's request and reply types come from the
 * contracts catalogue, so a wrong payload or a wrong reply type does not compile.
 */
export class TypedClient {
  constructor(private readonly proxy: ClientProxy) {}

  /** Request/reply; the observable yields the worker's reply once. */
  send<P extends RequestPattern>(pattern: P, request: RequestOf<P>): Observable<ReplyOf<P>> {
    return this.proxy.send<ReplyOf<P>, RequestOf<P>>(pattern, request);
  }

  /** A durable event; the observable completes once the event is queued. */
  emit<E extends EventName>(event: E, payload: EventPayloadOf<E>): Observable<unknown> {
    return this.proxy.emit<unknown, EventPayloadOf<E>>(event, payload);
  }
}
