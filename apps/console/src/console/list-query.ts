import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
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

/**
 * Page links whose sort key must not be readable in the page (a listener's origin could hold a
 * card-like digit run the page shows masked): the key sealed with AES-256-GCM under a key derived
 * from `secret` (HKDF, its own label), so the link carries nothing in clear and cannot be forged.
 */
export function cursorSealer(secret: string) {
  const key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'gateway console page cursor v1', 32));
  return {
    seal(sortKey: readonly unknown[]): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(JSON.stringify(sortKey), 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    /** The sort key (`length` values, each checked by the caller), or null when the link was not sealed here. */
    open(v: string, length: number): unknown[] | null {
      try {
        const raw = Buffer.from(v, 'base64url');
        if (raw.length < 29) return null;
        const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
        decipher.setAuthTag(raw.subarray(12, 28));
        const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
        const parsed: unknown = JSON.parse(text);
        return Array.isArray(parsed) && parsed.length === length ? (parsed as unknown[]) : null;
      } catch {
        return null;
      }
    },
  };
}
