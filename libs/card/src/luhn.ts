/**
 * Luhn (mod 10) check. It catches every single-digit typo and most adjacent swaps, which is why
 * a number failing it is rejected before it costs a round trip to the acquirer.
 */
export function isLuhnValid(digits: string): boolean {
  // A lone digit has no check digit to verify.
  if (!/^\d{2,}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}
