import type { MerchantsRepository } from '@app/persistence';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A list page's filters: each of `keys` given as a non-empty string, trimmed, at most 256 characters. */
export function filtersOf(raw: Record<string, unknown>, keys: readonly string[]): Record<string, string> {
  const query: Record<string, string> = {};
  for (const k of keys) {
    const v = raw[k];
    if (typeof v === 'string' && v.trim() !== '') query[k] = v.trim().slice(0, 256);
  }
  return query;
}

/**
 * What every list page checks alike: the merchant (its public id, resolved to the internal one),
 * the state (one of `states`) and the page link's cursor (`after`, read by `cursorOf`). A problem
 * to show with a 400 when one is wrong.
 */
export async function sharedFilters<C>(
  merchants: MerchantsRepository,
  query: Record<string, string>,
  states: readonly string[],
  after: unknown,
  cursorOf: (v: string) => C | null,
): Promise<{ problem: string } | { merchantId?: string; after?: C }> {
  const merchantId = query.merchant === undefined ? undefined : await merchants.resolve(query.merchant);
  if (query.merchant !== undefined && !merchantId)
    return { problem: 'No merchant has that id (10 digits, as merchant:create printed it).' };
  if (query.state !== undefined && !states.includes(query.state)) return { problem: `State must be one of ${states.join(', ')}.` };
  const cursor = typeof after === 'string' ? cursorOf(after) : undefined;
  if (cursor === null) return { problem: 'That page link is not valid; start from the first page.' };
  return { merchantId, after: cursor };
}

/** A keyset page link's cursor: the sort key of the last row shown, as base64url JSON. */
export function cursorText(key: readonly unknown[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** The sort key in a page link (`length` values, each checked by the caller), or null when it is not one. */
export function cursorKey(v: string, length: number): unknown[] | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(v, 'base64url').toString('utf8'));
    return Array.isArray(parsed) && parsed.length === length ? (parsed as unknown[]) : null;
  } catch {
    return null;
  }
}
