/**
 * What a job carries on the queue. Short keys: this is serialized for every message.
 * - p: the payload (for card-bearing patterns, already sealed by the caller)
 * - r: the caller's reply channel (request/reply only)
 * - c: the correlation id of the request that caused the job
 * - t: its W3C traceparent, when it is traced
 */
export interface JobEnvelope<T = unknown> {
  p: T;
  r?: string;
  c?: string;
  t?: string;
}

/** What the worker publishes on the reply channel. */
export interface ReplyMessage {
  id: string;
  ok?: unknown;
  err?: RemoteErrorPayload;
}

export interface RemoteErrorPayload {
  kind: string;
  code: string;
  message: string;
  parameter?: string;
}

const JOB_ID = Symbol('jobId');

/**
 * Gives a message a deterministic job id, so publishing the same logical message twice (an
 * outbox relay retrying, a caller retrying with its idempotency key) creates one job.
 * BullMQ rejects ':' and all-digit ids, so those are rewritten, not passed through.
 */
export function withJobId<T extends object>(payload: T, id: string): T {
  return Object.assign(payload, { [JOB_ID]: safeJobId(id) });
}

export function jobIdOf(payload: unknown): string | undefined {
  return payload && typeof payload === 'object' ? (payload as { [JOB_ID]?: string })[JOB_ID] : undefined;
}

export function safeJobId(id: string): string {
  const cleaned = id.replace(/:/g, '_');
  return /^\d+$/.test(cleaned) ? `id-${cleaned}` : cleaned;
}
