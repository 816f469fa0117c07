import { errorCodeOf } from '@app/platform/safe-error';
import DataLoader from 'dataloader';

export interface StatementBatcherOptions {
  /** Items per statement at most. */
  maxBatchSize?: number;
  /** Statements of this batcher in flight at once; items arriving meanwhile join the next one. */
  maxInFlight?: number;
  /**
   * How long a batch stays open for more items (default 0: until the loop has taken in what
   * arrived with the first). Only for writes nobody waits on: each item waits this long.
   */
  delayMs?: number;
}

/**
 * Errors of the data (class 22: bad value, 23: constraint violated) or of contention (deadlock,
 * serialization): the batch failed as a whole, nothing of it committed, and each item may fare
 * differently on its own. Any other failure (the connection, the server, or 40003, where the
 * statement may have committed) would fail each item the same way, or must not be run again.
 */
const ITEM_SPECIFIC = /^(22|23|40001$|40P01$)/;

/**
 * Many concurrent one-row statements as one (group commit): items queued while up to
 * `maxInFlight` statements are out (or scheduled) go together in the next, so under load a
 * handful of round trips (and WAL flushes) serve hundreds of items, and alone an item waits only
 * for the current turn of the event loop. `run` answers per item, in order (a value or an Error);
 * it may throw only while nothing of the batch has committed (the items may be run again).
 * If a batch fails for a reason that may be one item's (a constraint, a deadlock), its items are
 * run again one at a time, so one bad item fails alone instead of failing every caller it was
 * batched with; any other failure fails the batch's callers, who retry as they would have.
 */
export function statementBatcher<K, V>(
  run: (items: readonly K[]) => Promise<readonly (V | Error)[]>,
  opts: StatementBatcherOptions = {},
): (item: K) => Promise<V> {
  const maxInFlight = opts.maxInFlight ?? 2;
  const delayMs = opts.delayMs ?? 0;
  let busy = 0; // batches scheduled or in flight
  const held: (() => void)[] = [];
  const loader = new DataLoader<K, V, K>(
    async (items) => {
      try {
        return await run(items);
      } catch (e) {
        if (items.length === 1 || !ITEM_SPECIFIC.test(errorCodeOf(e, ''))) throw e;
        const out: (V | Error)[] = [];
        for (const item of items)
          out.push(
            await run([item]).then(
              (r) => r[0],
              (err: Error) => err,
            ),
          );
        return out;
      } finally {
        // The slot passes to the next held batch, if any.
        const next = held.shift();
        if (next) setImmediate(next);
        else busy--;
      }
    },
    {
      cache: false,
      maxBatchSize: opts.maxBatchSize ?? 500,
      // A batch goes out once the loop has taken in what arrived with it (setImmediate), or,
      // while maxInFlight batches are out, when one of them is back.
      batchScheduleFn: (dispatch) => {
        if (busy < maxInFlight) {
          busy++;
          if (delayMs > 0) setTimeout(dispatch, delayMs);
          else setImmediate(dispatch);
        } else {
          held.push(dispatch);
        }
      },
    },
  );
  return (item) => loader.load(item);
}

/** The parameters of a statement over `unnest($1::type[], …)`: one array per picked column. */
export function columns<T>(items: readonly T[], ...pick: ((item: T) => unknown)[]): unknown[][] {
  return pick.map((p) => items.map(p));
}

/**
 * Splits a batch so no group holds two items with one key: the first of each key together, then
 * every repeat on its own, in arrival order (one UPDATE must never see a row twice: Postgres
 * would apply an arbitrary one of the two).
 */
export function distinctGroups<T>(items: readonly T[], key: (item: T) => string): T[][] {
  const seen = new Set<string>();
  const first: T[] = [];
  const repeats: T[][] = [];
  for (const item of items) {
    if (seen.has(key(item))) repeats.push([item]);
    else {
      seen.add(key(item));
      first.push(item);
    }
  }
  return [first, ...repeats];
}

/**
 * The items in the order of their keys: a batch that locks rows (an UPDATE, a unique insert) in
 * key order never deadlocks with another batch doing the same.
 */
export function inKeyOrder<T>(items: readonly T[], key: (item: T) => string): T[] {
  return [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/**
 * Runs each group of `distinctGroups` as its own statement and answers per item. Only a failure
 * of the first group is thrown (nothing committed: the batcher may run the items again); past
 * it, earlier groups have committed, so a failure is returned to that group's items alone.
 */
export async function runDistinctGroups<T, V>(
  items: readonly T[],
  key: (item: T) => string,
  write: (group: T[]) => Promise<(item: T) => V>,
): Promise<(V | Error)[]> {
  const outcome = new Map<T, V | Error>();
  for (const [i, group] of distinctGroups(items, key).entries()) {
    try {
      const answer = await write(group);
      for (const item of group) outcome.set(item, answer(item));
    } catch (e) {
      if (i === 0) throw e;
      for (const item of group) outcome.set(item, e as Error);
    }
  }
  return items.map((item) => outcome.get(item)!);
}
