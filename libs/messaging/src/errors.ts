import type { RemoteErrorPayload } from './job-envelope';

/** The worker did not answer within the reply timeout: the outcome is unknown, not failed. */
export class ReplyTimeoutError extends Error {
  override name = 'ReplyTimeoutError';
  constructor(
    readonly pattern: string,
    readonly timeoutMs: number,
  ) {
    super(`no reply to ${pattern} within ${timeoutMs} ms`);
  }
}

/** The message could not be queued (Redis unreachable): nothing was sent. */
export class TransportUnavailableError extends Error {
  override name = 'TransportUnavailableError';
  constructor(
    readonly pattern: string,
    cause: unknown,
  ) {
    super(`cannot queue ${pattern}: ${(cause as Error)?.message ?? cause}`);
  }
}

/** The worker answered with a structured failure (validation, not found, …). */
export class RemoteError extends Error {
  override name = 'RemoteError';
  constructor(readonly payload: RemoteErrorPayload) {
    super(payload.message);
  }
}
