/** Distinct Luhn-valid visa numbers, so every token/add is a new card (no dedup shortcut). */
export function cardSequence(start = 0): () => string {
  let n = start;
  return () => luhnComplete(`4${String(n++).padStart(14, '0')}`);
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
