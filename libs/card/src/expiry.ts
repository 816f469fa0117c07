export interface Expiry {
  year: number;
  month: number;
}

/** `YYYYMM` as sent on the wire; anything else is not an expiry date. */
export function parseExpiry(yyyymm: string): Expiry | null {
  const m = /^(20\d\d)(0[1-9]|1[0-2])$/.exec(yyyymm);
  return m ? { year: Number(m[1]), month: Number(m[2]) } : null;
}

/**
 * A card is good through the last day of its expiry month. UTC, so the answer does not depend on
 * the server's time zone; the acquirer has the final word at the edges anyway.
 */
export function isExpired(expiry: Expiry, now: Date = new Date()): boolean {
  // Date.UTC rolls month 12 over into January of the next year.
  return now.getTime() >= Date.UTC(expiry.year, expiry.month, 1);
}
