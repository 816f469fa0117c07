import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/**
 * The correlation id of the work in progress: set from the HTTP request (x-request-id or a new
 * one), carried in every job the request causes, and restored around the job's handler, so one
 * id ties the API log line to the worker's.
 */
const storage = new AsyncLocalStorage<string>();

export function currentCorrelationId(): string | undefined {
  return storage.getStore();
}

export function runWithCorrelationId<T>(id: string | undefined, fn: () => T): T {
  return storage.run(id ?? randomUUID(), fn);
}
