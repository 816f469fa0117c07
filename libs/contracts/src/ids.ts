import { createHash } from 'node:crypto';

/** A UUID (version 8, RFC 9562) made of a hash of `parts`: the same parts, the same id. */
export function uuidFromParts(...parts: readonly (string | number)[]): string {
  const b = createHash('sha256').update(parts.join('\0')).digest().subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x80;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * The transaction of a rebill's charge: one id per (rebill, cycle, attempt), so a charge opened
 * twice is the same row, and its acquirer operation key (`<id>-authorize`) the same operation.
 */
export function rebillChargeId(rebillId: string, cycle: number, attempt: number): string {
  return uuidFromParts('rebill-charge', rebillId.toLowerCase(), cycle, attempt);
}
