import type { EventName, Events, Pattern, Patterns } from './patterns';
import type { TokenAddRequest, TokenRetrieveRequest, TokenView } from './tokens';
import type { AuthorizeRequest, CancelRequest, CaptureRequest, TransactionEvent, TransactionView } from './transactions';

/** Fails to compile when a catalogue leaves out one of the names it must cover. */
type Covering<Names extends string, T extends Record<Names, unknown>> = T;

/** What each request pattern carries and what its worker answers. */
export type RequestCatalogue = Covering<
  Pattern,
  {
    [Patterns.TokenAdd]: { request: TokenAddRequest; reply: TokenView };
    [Patterns.TokenRetrieve]: { request: TokenRetrieveRequest; reply: TokenView };
    [Patterns.CardAuthorize]: { request: AuthorizeRequest; reply: TransactionView };
    [Patterns.CardCapture]: { request: CaptureRequest; reply: TransactionView };
    [Patterns.CardCancel]: { request: CancelRequest; reply: TransactionView };
  }
>;

/** What each durable event carries. */
export type EventCatalogue = Covering<
  EventName,
  {
    [Events.TransactionStatusChanged]: TransactionEvent;
    [Events.TransactionCaptured]: TransactionEvent;
    [Events.TransactionCancelled]: TransactionEvent;
  }
>;

export type RequestPattern = keyof RequestCatalogue;
export type RequestOf<P extends RequestPattern> = RequestCatalogue[P]['request'];
export type ReplyOf<P extends RequestPattern> = RequestCatalogue[P]['reply'];
export type EventPayloadOf<E extends EventName> = EventCatalogue[E];
