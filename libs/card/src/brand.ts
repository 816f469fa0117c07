export const BRANDS = ['visa', 'mastercard', 'amex', 'elo', 'diners', 'discover', 'jcb', 'aura', 'hipercard'] as const;
export type Brand = (typeof BRANDS)[number];

interface PrefixRange {
  length: number;
  from: number;
  to: number;
}

/** `'650031-650033 655000'` → ranges over prefixes of the written length. */
function ranges(spec: string): PrefixRange[] {
  return spec.split(' ').map((part) => {
    const [from, to = from] = part.split('-');
    return { length: from.length, from: Number(from), to: Number(to) };
  });
}

/**
 * First match wins, so order is the whole point: the Brazilian schemes (elo, hipercard, aura)
 * were issued inside prefixes that visa, mastercard, discover and diners also claim, and must be
 * tried before them. Lengths are deliberately loose (issuers add lengths over time); what they
 * rule out are numbers no scheme issues, such as a 16-digit amex.
 */
const RULES: { brand: Brand; prefixes: PrefixRange[]; lengths: [number, number] }[] = [
  {
    brand: 'elo',
    prefixes: ranges(
      '401178-401179 431274 438935 451416 457393 457631-457632 504175 506699-506778 509000-509999 627780 636297 636368 ' +
        '650031-650033 650035-650051 650405-650439 650485-650538 650541-650598 650700-650718 650720-650727 650901-650920 ' +
        '651652-651679 655000-655019 655021-655058',
    ),
    lengths: [16, 16],
  },
  { brand: 'hipercard', prefixes: ranges('384100 384140 384160 606282 637095 637568 637599 637609 637612'), lengths: [13, 19] },
  { brand: 'aura', prefixes: ranges('50'), lengths: [16, 19] },
  { brand: 'amex', prefixes: ranges('34 37'), lengths: [15, 15] },
  { brand: 'diners', prefixes: ranges('300-305 36 38-39'), lengths: [14, 19] },
  { brand: 'discover', prefixes: ranges('6011 622126-622925 644-649 65'), lengths: [16, 19] },
  { brand: 'jcb', prefixes: ranges('3528-3589'), lengths: [16, 19] },
  { brand: 'mastercard', prefixes: ranges('51-55 2221-2720'), lengths: [16, 16] },
  { brand: 'visa', prefixes: ranges('4'), lengths: [13, 19] },
];

function ruleFor(pan: string) {
  if (!/^\d+$/.test(pan)) return undefined;
  return RULES.find((r) => r.prefixes.some((p) => pan.length >= p.length && isWithin(Number(pan.slice(0, p.length)), p)));
}

function isWithin(n: number, p: PrefixRange): boolean {
  return n >= p.from && n <= p.to;
}

/** The brand the number's prefix belongs to, whatever its length. */
export function brandByPrefix(pan: string): Brand | null {
  return ruleFor(pan)?.brand ?? null;
}

/** The brand of a card number, or null when no supported scheme issues a number like it. */
export function detectBrand(pan: string): Brand | null {
  const rule = ruleFor(pan);
  if (!rule || pan.length < rule.lengths[0] || pan.length > rule.lengths[1]) return null;
  return rule.brand;
}

// Spellings that merchant plugins send in the wild (docs/merchants/tokens.md), after dropping case and separators.
const FLAG_ALIASES: Record<string, Brand> = {
  ...Object.fromEntries(BRANDS.map((b) => [b, b])),
  master: 'mastercard',
  americanexpress: 'amex',
  dinersclub: 'diners',
  hypercard: 'hipercard',
};

/** A merchant-supplied `flag` as a brand, or null when it names no brand we know. */
export function normalizeFlag(flag: string): Brand | null {
  const key = flag.toLowerCase().replace(/[\s_-]+/g, '');
  return Object.prototype.hasOwnProperty.call(FLAG_ALIASES, key) ? FLAG_ALIASES[key] : null;
}
