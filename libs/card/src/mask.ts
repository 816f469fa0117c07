const MAX_FIRST = 6;
const MAX_LAST = 4;
const MIN_HIDDEN = 6;

/**
 * First 6 + last 4 at most (DESIGN.md 3.5). For short numbers that would leave too few digits
 * hidden to protect the card, so the leading part shrinks first (the last 4 are what a person
 * uses to recognise their card), keeping at least 6 digits hidden.
 */
export function maskPan(pan: string): string {
  const shown = Math.max(0, pan.length - MIN_HIDDEN);
  const last = Math.min(MAX_LAST, shown);
  const first = Math.min(MAX_FIRST, shown - last);
  return pan.slice(0, first) + '*'.repeat(pan.length - first - last) + pan.slice(pan.length - last);
}

export function bin6(pan: string): string {
  return pan.slice(0, 6);
}

export function last4(pan: string): string {
  return pan.slice(-4);
}
