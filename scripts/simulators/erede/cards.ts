/**
 * What the simulator reads off a card number, then forgets the number: its BIN, last four digits,
 * brand and the issuer's answer (sandbox cards below; any other Luhn-valid number is approved).
 */
import { Code } from './codes';

export interface CardFacts {
  bin: string;
  last4: string;
  brand: string;
  /** The issuer's answer: '00' approves. */
  outcome: Code;
}

/** Cards with a fixed issuer answer (see docs/simulators/erede.md). */
const OUTCOMES: Record<string, Code> = {
  '4000000000000002': '105', // restricted card: a plain decline
  '5448280000000015': '105',
  '4000000000009995': '111', // insufficient funds
  '5448280000000023': '111',
  '4000000000000127': '119', // invalid security code
  '4000000000000069': '112', // expired
};

export function luhn(pan: string): boolean {
  let sum = 0;
  for (let i = 0; i < pan.length; i++) {
    let d = pan.charCodeAt(pan.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

export function brandOf(pan: string): string {
  if (/^(4011|4312|4389|4514|4576|5041|5066|5067|509|6277|6362|6363|650|6516|6550)/.test(pan)) return 'Elo';
  if (/^(606282|3841)/.test(pan)) return 'Hipercard';
  if (/^3[47]/.test(pan)) return 'Amex';
  if (/^3(0[0-5]|[68])/.test(pan)) return 'Diners';
  if (/^35(2[89]|[3-8])/.test(pan)) return 'JCB';
  if (/^4/.test(pan)) return 'Visa';
  if (/^(5[1-5]|2[2-7])/.test(pan)) return 'Mastercard';
  return 'Mastercard';
}

/** Card facts from an already well-formed number (digits, 13 to 19 of them). */
export function cardFacts(pan: string): CardFacts {
  const outcome: Code = !luhn(pan) ? '109' : (OUTCOMES[pan] ?? '00');
  return { bin: pan.slice(0, 6), last4: pan.slice(-4), brand: brandOf(pan), outcome };
}

export function masked(f: Pick<CardFacts, 'bin' | 'last4'>): string {
  return `${f.bin}******${f.last4}`;
}
