import DataLoader from 'dataloader';

export interface StatementBatcherOptions {
  /** Items per statement at most. */
  maxBatchSize?: number;
  /** Statements of this batcher in flight at once; items arriving meanwhile join the next one. */
  maxInFlight?: number;
}

/**
 * Many concurrent one-row statements as one (group commit): items queued while up to
 * `maxInFlight` statements are out go together in the next, so under load a handful of round
 * trips (and WAL flushes) serve hundreds of items, and alone an item waits only for the current
 * turn of the event loop. `run` answers per item, in order (a value or an Error). If a batch
 * fails as a whole, each of its items is run on its own, so one bad item (a broken reference,
 * say) fails alone instead of failing every caller it was batched with.
 */
export function statementBatcher<K, V>(run: (items: readonly K[]) => Promise<readonly (V | Error)[]>, opts: StatementBatcherOptions = {}): (item: K) => Promise<V> {
  const maxInFlight = opts.maxInFlight ?? 2;
  let inFlight = 0;
  const held: (() => void)[] = [];
  const loader = new DataLoader<K, V, K>(
    async (items) => {
      inFlight++;
      try {
        return await run(items);
      } catch (e) {
        if (items.length === 1) throw e;
        return Promise.all(items.map((item) => run([item]).then((r) => r[0], (err: Error) => err)));
      } finally {
        inFlight--;
        const next = held.shift();
        if (next) setImmediate(next);
      }
    },
    {
      cache: false,
      maxBatchSize: opts.maxBatchSize ?? 500,
      // A batch goes out once the loop has taken in what arrived with it (setImmediate), or,
      // while maxInFlight statements are out, when one of them is back.
      batchScheduleFn: (dispatch) => (inFlight < maxInFlight ? setImmediate(dispatch) : held.push(dispatch)),
    },
  );
  return (item) => loader.load(item);
}
