/** Distinct Luhn-valid visa numbers, so every token/add is a new card (no dedup shortcut). */
export function cardSequence(start = 0): () => string {
  let n = start;
  return () => luhnComplete(`4${String(n++).padStart(14, '0')}`);
}

/**
 * Distinct Luhn-valid visa numbers the sandbox acquirer approves at once: those ending in 0, 1, 4
 * or 6 (docs/merchants/sandbox.md; 9 approves too, but only after SANDBOX_SLOW_APPROVAL_MS).
 */
export function approvedCardSequence(start = 0): () => string {
  const next = cardSequence(start);
  return () => {
    for (;;) {
      const n = next();
      if ('0146'.includes(n.slice(-1))) return n;
    }
  };
}

function luhnComplete(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) d *= 2;
    if (d > 9) d -= 9;
    sum += d;
  }
  return body + String((10 - (sum % 10)) % 10);
}
