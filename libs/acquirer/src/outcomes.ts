import { AcquirerBook, AcquirerResult, SaleBooks, SaleRef } from './acquirer.connector';

/** An operation the acquirer never acted on: the gateway records it as not done (the merchant may retry it). */
export function notReceived(tid = '', returnMessage = 'Not received by the acquirer'): AcquirerResult {
  return { outcome: 'declined', returnCode: 'NR', returnMessage, tid, nsu: '', voided: true };
}

/** Runs `work` over `items`, at most `limit` at a time (reconciliation's queries to one acquirer). */
export async function forEachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Reconciliation's books of a real acquirer, by transaction id: `look` reads every charge the
 * acquirer holds for one sale (by its tid, or by its order id); the one `isSale` names is the
 * recorded sale, every other one a charge the gateway never recorded. Sales it has nothing of are
 * left out.
 */
export async function booksByOrder(
  sales: readonly SaleRef[],
  look: (sale: SaleRef) => Promise<{ found: AcquirerBook[]; isSale: (book: AcquirerBook) => boolean }>,
): Promise<Map<string, SaleBooks>> {
  const out = new Map<string, SaleBooks>();
  await forEachLimited(sales, 8, async (s) => {
    const { found, isSale } = await look(s);
    const sale = found.find(isSale);
    if (found.length) out.set(s.transactionId, { ...(sale ? { sale } : {}), others: found.filter((b) => b !== sale) });
  });
  return out;
}
