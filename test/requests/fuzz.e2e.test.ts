import { appendFileSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { Client } from 'pg';
import { TEST_CARDS } from '@app/card';
import { createMerchant, jsonOf, logDir, MerchantCredentials, post, runCli, Stack, startStack } from '../support/stack';
import { FUZZ_CODES, SANDBOX_CARDS } from '../fixtures/cards';

/**
 * Issue 13, part 4: hostile bodies against every merchant endpoint of the running stack.
 *
 * fast-check samples FUZZ_BODIES cases (10 000 by default; FUZZ_SEED replays a run's bodies).
 * Most cases start from a VALID body of their operation (real credentials, real card numbers,
 * the transactions and token made in beforeAll) and apply 1-3 mutations, so they get past the
 * envelope into the field rules, the split engine, the vault and the acquirer. About one in four
 * also gets a transport mutation (Content-Type, size, bytes, syntax), and receiver cases may
 * carry an Idempotency-Key (valid, invalid, or reused). The body is built as a small JSON model
 * with raw pieces (number literals no JS number can hold, duplicate keys, invalid UTF-8 bytes,
 * 10 000-deep nesting), serialized to bytes by hand, and sent with a few requests in flight.
 *
 * What must hold (each is one test below, with a readable list of what broke):
 *  1. no 5xx and no dropped connection;
 *  2. every 4xx is the wire error body (a 400 names the field it refuses);
 *  3. what the contract refuses is refused (413, 415, malformed JSON, invalid UTF-8, numbers the
 *     server cannot hold, decimal amounts, invalid splits, bad or reused Idempotency-Keys), and
 *     an unmutated body is accepted;
 *  4. no row for a refused body (the fuzz merchant's rows against its 2xx answers);
 *  5. no card number or security code the fuzz sent in any answer or in the run's logs.
 */
jest.setTimeout(600_000);

const BODIES = Number(process.env.FUZZ_BODIES ?? 10_000);
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 8);
// The run's fast-check seed (FC_SEED, chosen by jest.config.js) unless FUZZ_SEED replays another.
const SEED = Number(process.env.FUZZ_SEED ?? process.env.FC_SEED);
const BODY_LIMIT = 64 * 1024;
const REQUEST_TIMEOUT_MS = 30_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

// ---------------------------------------------------------------------------------------------
// Cards and security codes the fuzz sends.

/**
 * The libs/card test number of every brand, and the sandbox numbers by outcome (docs/merchants/sandbox.md). No
 * number ends in 8 or 9: an acquirer timeout and a slow approval would only make the run longer.
 */
const CARD_POOL: { pan: string; flag: string }[] = [
  ...Object.entries(TEST_CARDS).map(([flag, pan]) => ({ pan, flag })),
  ...[0, 1, 2, 3, 4, 5, 6, 7].map((d) => ({ pan: SANDBOX_CARDS[d], flag: 'visa' })),
];
const POOL_PANS = CARD_POOL.map((c) => c.pan);

/**
 * Security codes are short, so a plain substring search would hit timestamps, ids and amounts.
 * These are 4 digits starting with 0 (no counter, port, amount or epoch value prints a leading
 * zero), different from the other suites' codes (so a hit is the fuzz's own; the canary scan knows them too), and
 * searched only as a standalone token: not inside a longer run of digits, hex, base64 or a UUID
 * (the canary scan's rule). The fuzz never puts them anywhere but in cardSecurityCode, and its
 * random strings are far too short to produce one by chance, so a hit is a leak, not noise.
 */

const codePattern = (c: string) => new RegExp(`(?<![0-9A-Za-z+/=_-])${c}(?![0-9A-Za-z+/=_-])`);
const CODE_PATTERNS = FUZZ_CODES.map((c) => ({ code: c, re: codePattern(c) }));

// ---------------------------------------------------------------------------------------------
// A JSON model that can say what JSON.stringify can't.

/** Emitted verbatim: number literals beyond a double, deep nesting. */
class Raw {
  constructor(
    readonly text: string,
    readonly label: string,
  ) {}
}
/** A string holding bytes that are not UTF-8. */
class BadUtf8 {
  constructor(
    readonly before: string,
    readonly bytes: Buffer,
    readonly after: string,
  ) {}
}
/** Ordered entries, so a key can appear twice. */
class Obj {
  constructor(public entries: [string, Node][] = []) {}
}
type Node = null | boolean | number | string | Raw | BadUtf8 | Obj | Node[];
type Key = string | number;

function toNode(v: unknown): Node {
  if (v instanceof Raw || v instanceof BadUtf8 || v instanceof Obj) return v;
  if (Array.isArray(v)) return v.map(toNode);
  if (v !== null && typeof v === 'object')
    return new Obj(
      Object.entries(v)
        .filter(([, x]) => x !== undefined)
        .map(([k, x]) => [k, toNode(x)]),
    );
  return v as Node;
}

function clone(n: Node): Node {
  if (n instanceof Obj) return new Obj(n.entries.map(([k, v]) => [k, clone(v)]));
  if (Array.isArray(n)) return n.map(clone);
  return n;
}

function emit(n: Node, out: (string | Buffer)[]): void {
  if (n instanceof Raw) out.push(n.text);
  else if (n instanceof BadUtf8) out.push(JSON.stringify(n.before).slice(0, -1), n.bytes, JSON.stringify(n.after).slice(1));
  else if (n instanceof Obj) {
    out.push('{');
    n.entries.forEach(([k, v], i) => {
      out.push(`${i ? ',' : ''}${JSON.stringify(k)}:`);
      emit(v, out);
    });
    out.push('}');
  } else if (Array.isArray(n)) {
    out.push('[');
    n.forEach((v, i) => {
      if (i) out.push(',');
      emit(v, out);
    });
    out.push(']');
  } else out.push(JSON.stringify(n));
}

function bytesOf(n: Node): Buffer {
  const out: (string | Buffer)[] = [];
  emit(n, out);
  return Buffer.concat(out.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
}

interface Loc {
  holder: Obj | Node[];
  index: number;
  keyPath: Key[];
}

function locations(n: Node, keyPath: Key[] = [], out: Loc[] = []): Loc[] {
  if (n instanceof Obj) {
    n.entries.forEach(([k, v], index) => {
      const p = [...keyPath, k];
      out.push({ holder: n, index, keyPath: p });
      locations(v, p, out);
    });
  } else if (Array.isArray(n)) {
    n.forEach((v, index) => {
      const p = [...keyPath, index];
      out.push({ holder: n, index, keyPath: p });
      locations(v, p, out);
    });
  }
  return out;
}

function objectsIn(n: Node, keyPath: Key[] = [], out: { obj: Obj; keyPath: Key[] }[] = []) {
  if (n instanceof Obj) {
    out.push({ obj: n, keyPath });
    for (const [k, v] of n.entries) objectsIn(v, [...keyPath, k], out);
  } else if (Array.isArray(n)) n.forEach((v, i) => objectsIn(v, [...keyPath, i], out));
  return out;
}

const valueAt = (l: Loc): Node => (l.holder instanceof Obj ? l.holder.entries[l.index][1] : l.holder[l.index]);
const keyAt = (l: Loc): Key => (l.holder instanceof Obj ? l.holder.entries[l.index][0] : l.index);
function setAt(l: Loc, v: Node): void {
  if (l.holder instanceof Obj) l.holder.entries[l.index][1] = v;
  else l.holder[l.index] = v;
}

/** The value the server reads at keyPath: JSON.parse keeps the last of duplicated keys. */
function effectiveAt(root: Node, keyPath: Key[]): Node | undefined {
  let cur: Node = root;
  for (const k of keyPath) {
    if (typeof k === 'number') {
      if (!Array.isArray(cur) || k >= cur.length) return undefined;
      cur = cur[k];
    } else {
      if (!(cur instanceof Obj)) return undefined;
      const hit: [string, Node] | undefined = [...cur.entries].reverse().find(([key]) => key === k);
      if (!hit) return undefined;
      cur = hit[1];
    }
  }
  return cur;
}

// ---------------------------------------------------------------------------------------------
// Showing what a case did, without card data.

const maskPans = (s: string) => s.replace(/\d{12,19}/g, (d) => `${d.slice(0, 6)}…${d.slice(-4)}`);

function show(v: Node | undefined): string {
  if (v === undefined) return 'nothing';
  if (v instanceof Raw) return v.label;
  if (v instanceof BadUtf8) return `"${maskPans(v.before)}<bytes ${v.bytes.toString('hex')}>${maskPans(v.after)}"`;
  if (v instanceof Obj) return `{${v.entries.length} key${v.entries.length === 1 ? '' : 's'}}`;
  if (Array.isArray(v)) return `[${v.length} item${v.length === 1 ? '' : 's'}]`;
  const text = JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return maskPans(text.length > 48 ? `${text.slice(0, 40)}…(${String(v).length} chars)` : text);
}

function showKey(k: Key): string {
  if (typeof k === 'number') return `[${k}]`;
  if (k === '(root)') return k;
  return /^[A-Za-z_][\w-]{0,40}$/.test(k) ? k : `[${show(k)}]`;
}

/** A field path, relative to the operation when it is inside it. */
function showPath(keyPath: Key[], op: string): string {
  const inOp = keyPath[0] === 'transaction-request' && keyPath[1] === op;
  const rel = inOp ? keyPath.slice(2) : keyPath[0] === 'transaction-request' ? keyPath : ['(root)', ...keyPath];
  if (!rel.length) return op;
  return rel.map((k, i) => (typeof k === 'number' || i === 0 || showKey(k).startsWith('[') ? showKey(k) : `.${showKey(k)}`)).join('');
}

// ---------------------------------------------------------------------------------------------
// Hostile pieces.

type SpecialCategory = 'nul' | 'c0' | 'lone-surrogate' | 'other';
const SPECIAL: Record<SpecialCategory, string[]> = {
  nul: ['\u0000'],
  c0: Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)),
  'lone-surrogate': ['\ud800', '\udfff', '\udbff', '\udfff\ud800', '\ud83d'],
  other: ['\u007f', '\ufeff', '\u2028', '\u2029', '\u202e', '\uffff', '\ufffd', '\u0085'],
};
const specialArb = fc
  .constantFrom<SpecialCategory>('nul', 'c0', 'lone-surrogate', 'other')
  .chain((cat) => fc.constantFrom(...SPECIAL[cat]).map((ch) => ({ cat, ch })));

/** Integer literals a double can't hold, and literals of every other awkward shape. */
const NUMBER_LITERALS = [
  '9007199254740993',
  '-9007199254740993',
  '9007199254740992',
  '18446744073709551617',
  '99999999999999999999999999999',
  '12345678901234567890',
  '1e400',
  '-1e400',
  '1e-400',
  '4.9e-324',
  '1.7976931348623157e308',
  '-0',
  '0',
  '-1',
  '0.1',
  '1.5',
  '1.0',
  '150000.0',
  '100.00',
  '1.5e5',
  '1e2',
  '1E+2',
  '2147483648',
  '-2147483649',
  '10.50',
];

/** True when the server's JSON.parse can't give back the literal's value exactly. */
function alteredLiteral(t: string): boolean {
  const v = Number(t);
  if (!Number.isFinite(v)) return true;
  if (v === 0 && /[1-9]/.test(t.split(/e/i)[0])) return true; // underflow to 0
  if (/^-?\d+$/.test(t) && t !== '-0') return BigInt(t) !== BigInt(v);
  return false;
}

const TRICKY_STRINGS = [
  '',
  ' ',
  'true',
  'false',
  'null',
  'undefined',
  '0',
  '-1',
  '1.5',
  '1e3',
  '9007199254740993',
  'NaN',
  'Infinity',
  '0x1F',
  '١٢٣',
  '\u00a0123',
  "' OR 1=1 --",
  '${jndi:ldap://x/a}',
  '<script>alert(1)</script>',
  '%00',
  '../../etc/passwd',
  '{}',
  '[]',
  '\\u0000',
  'ＡＢＣ',
  '𝕏',
  'é',
  'e\u0301',
];

const stringArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...TRICKY_STRINGS),
  fc.string({ maxLength: 16 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.tuple(fc.string({ maxLength: 6 }), specialArb, fc.string({ maxLength: 6 })).map(([a, s, b]) => a + s.ch + b),
  fc.integer({ min: 65, max: 3_000 }).map((n) => 'A'.repeat(n)),
);

const keyArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    'toString',
    'hasOwnProperty',
    'valueOf',
    'cardNumber',
    'cardSecurityCode',
    'transaction-request',
    'version',
    'verification',
    'sale',
    'tokencard',
    'amount',
    '0',
    'a.b',
    'payment.amount',
    '$where',
    'x'.repeat(300),
  ),
  fc.string({ maxLength: 10 }),
  fc.tuple(fc.string({ maxLength: 4 }), specialArb, fc.string({ maxLength: 4 })).map(([a, s, b]) => a + s.ch + b),
);

const scalarArb: fc.Arbitrary<Node> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(...NUMBER_LITERALS).map((t) => new Raw(t, `literal ${t}`)),
  stringArb,
);

const valueArb: fc.Arbitrary<Node> = fc.letrec<{ value: Node }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 2 },
    { arbitrary: scalarArb, weight: 4 },
    { arbitrary: fc.array(tie('value'), { maxLength: 3 }), weight: 1 },
    { arbitrary: fc.array(fc.tuple(keyArb, tie('value')), { maxLength: 3 }).map((es) => new Obj(es)), weight: 1 },
  ),
})).value;

function typeLabel(v: Node): string {
  if (v === null) return 'null';
  if (v instanceof Raw) return 'raw-number';
  if (v instanceof Obj) return 'object';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/**
 * Near misses by field name: values a merchant could plausibly send that the field rules must
 * refuse (or, for a few, accept), so the fuzz exercises each rule and not only the type checks.
 * `{other}` names are filled from the setup.
 */
const NEAR_MISS: Record<string, unknown[]> = {
  reference: ['x'.repeat(65), '', ' '],
  totalAmount: [0, -1, '10.50', '1,00', 1, 'abc', 2147483648, '00150000', ' 150000', '+150000'],
  amount: [0, -1, '10.50', 1, 'abc', '-0', 99_999_999_999, '1e3', ''],
  acquirer: [0, 10000, '26a', -26, 999, 1000],
  method: [0, 5, '1.0', 'credit', 2, 4],
  numberOfPayments: [0, 13, 2, -1, '12'],
  currency: ['BRL', '98', '9860', 986, '０９８'],
  country: ['BR', 'BRAZ', '123', 'bra'],
  groupNumber: ['a1', 'x'.repeat(17), '-1'],
  flag: ['mastercard', 'nosuchbrand', 'VISA', 'hypercard', '', 'amex'],
  cardHolder: ['', ' ', 'x'.repeat(65), 'A\tB'],
  cardNumber: [
    '4111111111111112',
    '41111111111',
    '41111111111111111111',
    '4111 1111 1111 1111',
    '4111-1111-1111-1111',
    '0000000000000000',
    '411111111111111a',
    4111111111111111,
    '9999999999999995',
  ],
  cardExpirationDate: ['202001', '203013', '203000', '2030-12', '12/30', '122030', 203012, '20301', '999912'],
  cardSecurityCode: ['12', '12345', 'abc', 12, '', '1 2 3'],
  saveCreditCard: ['yes', 1, 0, 'TRUE', 'True', true],
  generateToken: ['yes', 1, 'TRUE', true, 'false'],
  fraud: ['yes', 1, 'TRUE', true],
  departureTax: [-1, '1.5', 'x'],
  softDescriptor: ['x'.repeat(23), 'Ação', 'TAB\tX'],
  tokenCard: ['f'.repeat(63), 'g'.repeat(64), 'a'.repeat(64), '{otherToken}', 'A'.repeat(64)],
  cardToken: ['f'.repeat(63), 'a'.repeat(64), '{otherToken}'],
  token: ['f'.repeat(63), 'g'.repeat(64), 'a'.repeat(64), '{otherToken}', ''],
  transactionId: [
    '00000000-0000-4000-8000-000000000000',
    '{otherTransaction}',
    '{lowercase}',
    '{braced}',
    '{nodashes}',
    'x'.repeat(37),
    '',
  ],
  email: ['x', 'a@b', 'a b@c.d', '@example.com', 'x'.repeat(250) + '@e.com'],
  state: ['São', 'S', '12', 'SPX'],
  postalCode: ['01310-100', 'x', '0'.repeat(17)],
  phone: ['+55 11 99999', '(11)9999', '1'.repeat(21)],
  customerIdentity: ['x'.repeat(33), ''],
  urlReturn: [
    'javascript:alert(1)',
    'ftp://merchant.example/',
    'http://user:pass@merchant.example/',
    'not a url',
    '//merchant.example',
    `http://${'a'.repeat(2050)}.example/`,
    'file:///etc/passwd',
  ],
  version: ['1.0', '1.0.0 ', 1, '2.0.0', '1.0.0\u0000'],
  merchantId: ['{otherMerchant}', 'x', 'not-a-uuid', 'x'.repeat(65), '00000000-0000-4000-8000-000000000000'],
  merchantKey: ['mk_wrong', '', 'x'.repeat(257), '{otherKey}'],
  recipient: ['00000000-0000-4000-8000-000000000000', '{merchant}', '{pending}', '{foreign}'],
  percentage: [0, -1, 101, '100.01', '12.345', 'x', '1e2'],
};

/** docs/merchants/split.md 3: every one of these is a 400, whatever else the body says. */
const SPLIT_VARIANTS = [
  'both-values',
  'no-value',
  'percentage-zero',
  'percentage-negative',
  'percentage-over-100',
  'percentage-3-decimals',
  'percentage-junk',
  'amount-negative',
  'amount-zero',
  'amount-over-gross',
  'amount-decimal-literal',
  'amount-unsafe-literal',
  'sum-over-100',
  'gross-exceeded',
  'unknown-recipient',
  'recipient-is-merchant',
  'recipient-missing',
  'recipient-of-other-merchant',
  'recipient-not-approved',
  'recipient-wrong-type',
  'duplicate-recipient',
  'too-many-entries',
  'over-100-entries',
  'empty',
  'non-array',
  'entry-not-object',
  'two-full-fee-payers',
  'full-and-prorata',
  'full-below-fee',
  'flag-wrong-type',
] as const;
type SplitVariant = (typeof SPLIT_VARIANTS)[number];

const INVALID_UTF8 = [
  [0xff],
  [0xfe, 0xff],
  [0xc3, 0x28],
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80],
  [0x80],
  [0xe2, 0x82],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
];

const NON_JSON_TYPES = [
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/jsonx',
  'application/json-patch+json',
  'text/json',
  '*/*',
  '',
  null,
];
const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json;charset=UTF-8'];
const isJsonType = (t: string | null) => t !== null && /^application\/json\s*(;|$)/i.test(t);

// ---------------------------------------------------------------------------------------------
// Case recipes: what fast-check generates. Picks are resolved against the body when it is built.

const OPS = ['sale', 'authorize', 'capture', 'cancel', 'report', 'tokencard', 'tokenCard', 'retrieve-token'] as const;
type Op = (typeof OPS)[number];
const PATH_OF: Record<Op, string> = {
  sale: '/v1/receiver',
  authorize: '/v1/receiver',
  capture: '/v1/receiver',
  cancel: '/v1/receiver',
  report: '/v1/receiver',
  tokencard: '/v1/token/add',
  tokenCard: '/v1/token/add',
  'retrieve-token': '/v1/token/retrieve',
};
const isReceiver = (op: Op) => PATH_OF[op] === '/v1/receiver';
const isSale = (op: Op) => op === 'sale' || op === 'authorize';

type Mutation =
  | { kind: 'wrong-type'; pick: number; value: Node }
  | { kind: 'missing'; pick: number }
  | { kind: 'extra-field'; pick: number; key: string; value: Node }
  | { kind: 'duplicate-key'; pick: number; value: Node; last: boolean }
  | { kind: 'special-char'; pick: number; at: number; cat: SpecialCategory; ch: string; inKey: boolean }
  | { kind: 'proto-key'; pick: number; key: '__proto__' | 'constructor' | 'prototype'; shape: number }
  | { kind: 'number'; pick: number; literal: string; asString: boolean }
  | { kind: 'near-miss'; pick: number; choice: number }
  | { kind: 'deep-nesting'; pick: number; depth: number; arrays: boolean; replace: boolean }
  | { kind: 'card-number-elsewhere'; pick: number; card: number; inKey: boolean }
  | { kind: 'split'; variant: SplitVariant; n: number }
  | { kind: 'decimal-amount'; form: number };

type Transport =
  | { kind: 'content-type'; value: string | null }
  | { kind: 'oversize'; size: number }
  | { kind: 'at-limit' }
  | { kind: 'invalid-utf8'; pick: number; bytes: number[] }
  | { kind: 'truncated'; fraction: number }
  | { kind: 'empty-body' }
  | { kind: 'whitespace-only' }
  | { kind: 'non-object-root'; variant: number }
  | { kind: 'trailing-garbage'; text: string }
  | { kind: 'bom' };

type Idempotency = 'none' | 'valid' | 'invalid' | 'reused-other-body' | 'repeated-same-body';

interface Recipe {
  op: Op;
  control: boolean;
  base: { card: number; code: number; amount: number; variant: number; target: number; stringly: boolean; contentType: string };
  mutations: Mutation[];
  transport?: Transport;
  idempotency: Idempotency;
  invalidKey: string;
  prefer: boolean;
}

// Picks are resolved modulo the body's locations: unbiased, or the envelope's first keys would win.
const pick = fc.noBias(fc.nat());
function mutationArb(op: Op): fc.Arbitrary<Mutation> {
  const arbs: { arbitrary: fc.Arbitrary<Mutation>; weight: number }[] = [
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('wrong-type' as const), pick, value: valueArb }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('missing' as const), pick }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('extra-field' as const), pick, key: keyArb, value: valueArb }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('duplicate-key' as const), pick, value: valueArb, last: fc.boolean() }) },
    {
      weight: 5,
      arbitrary: fc
        .record({ kind: fc.constant('special-char' as const), pick, at: fc.noBias(fc.nat()), inKey: fc.boolean() })
        .chain((m) => specialArb.map((s) => ({ ...m, ...s }))),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('proto-key' as const),
        pick,
        key: fc.constantFrom('__proto__' as const, 'constructor' as const, 'prototype' as const),
        shape: fc.nat(3),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('number' as const),
        pick,
        literal: fc.constantFrom(...NUMBER_LITERALS),
        asString: fc.boolean(),
      }),
    },
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('near-miss' as const), pick, choice: fc.noBias(fc.nat()) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('deep-nesting' as const),
        pick,
        depth: fc.constantFrom(64, 1_000, 10_000),
        arrays: fc.boolean(),
        replace: fc.boolean(),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('card-number-elsewhere' as const), pick, card: fc.noBias(fc.nat()), inKey: fc.boolean() }),
    },
  ];
  if (isSale(op))
    arbs.push({
      weight: 5,
      arbitrary: fc.record({ kind: fc.constant('split' as const), variant: fc.constantFrom(...SPLIT_VARIANTS), n: fc.noBias(fc.nat()) }),
    });
  if (isSale(op) || op === 'capture' || op === 'cancel')
    arbs.push({ weight: 1, arbitrary: fc.record({ kind: fc.constant('decimal-amount' as const), form: fc.nat(2) }) });
  return fc.oneof(...arbs);
}

const transportArb: fc.Arbitrary<Transport> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('content-type' as const), value: fc.constantFrom(...NON_JSON_TYPES) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('oversize' as const), size: fc.integer({ min: BODY_LIMIT + 1, max: 3 * BODY_LIMIT }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'at-limit' as const }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('invalid-utf8' as const), pick, bytes: fc.constantFrom(...INVALID_UTF8) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('truncated' as const), fraction: fc.double({ min: 0, max: 0.999, noNaN: true }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty-body' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'whitespace-only' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('non-object-root' as const), variant: fc.noBias(fc.nat()) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('trailing-garbage' as const),
      text: fc.constantFrom('x', '}', ',', '\u0000', '{}', '[]', '"', 'null'),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'bom' as const }) },
);

/** Header values a client can send (a ByteString) that the Idempotency-Key rule refuses. */
const INVALID_KEYS = ['', 'has space', 'caf\u00e9', 'x'.repeat(256), 'tab\there'];

const recipeArb: fc.Arbitrary<Recipe> = fc
  .record({ op: fc.constantFrom(...OPS, 'sale', 'authorize'), roll: fc.integer({ min: 0, max: 99 }) })
  .chain(({ op, roll }) => {
    const control = roll < 2;
    return fc.record({
      op: fc.constant(op),
      control: fc.constant(control),
      base: fc.record({
        card: fc.noBias(fc.nat()),
        code: fc.noBias(fc.nat()),
        amount: fc.noBias(fc.integer({ min: 1_000, max: 900_000 })),
        variant: fc.noBias(fc.nat()),
        target: fc.noBias(fc.nat()),
        stringly: fc.boolean(),
        contentType: fc.constantFrom(...JSON_TYPES),
      }),
      mutations: control ? fc.constant([]) : fc.array(mutationArb(op), { minLength: 1, maxLength: 3 }),
      transport: control
        ? fc.constant(undefined)
        : fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: transportArb }),
      idempotency: !isReceiver(op)
        ? fc.constant<Idempotency>('none')
        : control
          ? fc.constantFrom<Idempotency>('none', 'valid')
          : fc.oneof(
              { weight: 14, arbitrary: fc.constant<Idempotency>('none') },
              { weight: 3, arbitrary: fc.constant<Idempotency>('valid') },
              { weight: 1, arbitrary: fc.constant<Idempotency>('invalid') },
              { weight: 1, arbitrary: fc.constant<Idempotency>('reused-other-body') },
              { weight: 1, arbitrary: fc.constant<Idempotency>('repeated-same-body') },
            ),
      invalidKey: fc.constantFrom(...INVALID_KEYS),
      prefer: isSale(op) ? fc.integer({ min: 0, max: 19 }).map((n) => n === 0) : fc.constant(false),
    });
  });

// ---------------------------------------------------------------------------------------------
// Building a request from a recipe.

interface Setup {
  shop: MerchantCredentials;
  shopId: string;
  other: MerchantCredentials;
  authorized: string[];
  captured: string[];
  references: string[];
  otherTransaction: string;
  token: string;
  otherToken: string;
  recipients: string[];
  pendingRecipient: string;
  foreignRecipient: string;
}

interface Expectation {
  rule: string;
  label: string;
  ok: (a: Answer) => boolean;
  /** Holds only if this node is still what the server reads at keyPath, unchanged. */
  anchor?: { keyPath: Key[]; node: Node; snapshot: string };
}

interface Built {
  index: number;
  op: Op;
  path: string;
  body: Buffer;
  contentType: string | null;
  headers: Record<string, string>;
  labels: string[];
  descs: string[];
  expectations: Expectation[];
  /** Card-number-like strings this request carries (beyond the pool, which is always searched). */
  pans: Set<string>;
  idempotency: Idempotency;
  key?: string;
  second?: Buffer;
  control: boolean;
  mayVault: boolean;
}

const AMOUNT_KEYS = new Set(['totalAmount', 'amount', 'departureTax']);

function num(v: number, stringly: boolean): number | string {
  return stringly ? String(v) : v;
}

function baseBody(r: Recipe, s: Setup): Json {
  const b = r.base;
  const card = CARD_POOL[b.card % CARD_POOL.length];
  const code = FUZZ_CODES[b.code % FUZZ_CODES.length];
  const v = b.variant;
  const billing = {
    customerIdentity: '12345678909',
    name: 'Fuzz Buyer',
    address: 'Rua Augusta, 1500',
    address2: 'ap 2',
    city: 'São Paulo',
    state: 'SP',
    postalCode: '01310100',
    country: 'BRA',
    phone: '11999990000',
    email: 'fuzz@example.com',
  };
  switch (r.op) {
    case 'sale':
    case 'authorize': {
      const byToken = v % 7 === 0;
      const method = [1, 1, 1, 1, 2, 3, 4][(v >> 3) % 7];
      const payments = method === 2 || method === 3 ? 2 + ((v >> 6) % 11) : 1;
      const payment: Json = {
        acquirer: num(26, b.stringly),
        method: num(method, b.stringly),
        amount: num(b.amount, b.stringly),
        currency: '986',
        country: 'BRA',
        numberOfPayments: num(payments, b.stringly),
        ...(byToken
          ? { tokenCard: s.token, cardSecurityCode: code }
          : {
              flag: (v >> 9) % 3 === 0 ? undefined : card.flag,
              cardHolder: 'FUZZ HOLDER',
              cardNumber: card.pan,
              cardSecurityCode: code,
              cardExpirationDate: '203012',
            }),
        ...((v >> 11) % 4 === 0 ? { groupNumber: '0', departureTax: num(0, b.stringly), softDescriptor: 'FUZZSHOP' } : {}),
        ...((v >> 13) % 8 === 0 ? { generateToken: 'true', saveCreditCard: 'true' } : { generateToken: 'false' }),
        ...((v >> 16) % 6 === 0
          ? {
              split: [
                { recipient: s.recipients[v % 2], percentage: '10' },
                { recipient: s.recipients[2], amount: 100, charge_processing_fee: 'true' },
              ],
            }
          : {}),
      };
      return {
        order: { reference: `FZ-${v % 100_000}`, totalAmount: num(b.amount, b.stringly) },
        payment,
        ...((v >> 19) % 3 === 0 ? {} : { billing }),
        ...((v >> 21) % 10 === 0 ? { urlReturn: 'http://127.0.0.1:9/fuzz-listener' } : {}),
        fraud: 'false',
      };
    }
    case 'capture':
      return {
        transactionId: s.authorized[b.target % s.authorized.length],
        ...(v % 2 ? { amount: num(1 + (b.amount % 1000), b.stringly) } : {}),
      };
    case 'cancel':
      return {
        transactionId: s.captured[b.target % s.captured.length],
        ...(v % 40 ? { amount: num(1 + (b.amount % 500), b.stringly) } : {}),
      };
    case 'report': {
      const all = [...s.authorized, ...s.captured];
      return v % 3 === 0 ? { reference: s.references[b.target % s.references.length] } : { transactionId: all[b.target % all.length] };
    }
    case 'tokencard':
    case 'tokenCard':
      return {
        cardNumber: card.pan,
        cardHolder: 'FUZZ HOLDER',
        cardExpirationDate: `20${30 + (v % 10)}${String(1 + ((v >> 4) % 12)).padStart(2, '0')}`,
        ...(v % 3 ? { cardSecurityCode: code } : {}),
        ...((v >> 2) % 2 ? { flag: card.flag } : {}),
        ...((v >> 5) % 2 ? { billing } : {}),
      };
    case 'retrieve-token':
      return v % 2 ? { token: s.token } : { tokenCard: s.token.toUpperCase() };
  }
}

function splitFor(variant: SplitVariant, n: number, gross: number, s: Setup): unknown {
  const r = s.recipients;
  const e = (i: number, over: Json = {}) => ({ recipient: r[i % r.length], percentage: '10', ...over });
  switch (variant) {
    case 'both-values':
      return [e(0, { amount: 100 })];
    case 'no-value':
      return [{ recipient: r[0] }];
    case 'percentage-zero':
      return [e(0, { percentage: n % 2 ? 0 : '0' })];
    case 'percentage-negative':
      return [e(0, { percentage: n % 2 ? -5 : '-5' })];
    case 'percentage-over-100':
      return [e(0, { percentage: n % 2 ? 100.01 : '101' })];
    case 'percentage-3-decimals':
      return [e(0, { percentage: n % 2 ? new Raw('12.345', 'literal 12.345') : '12.345' })];
    case 'percentage-junk':
      return [e(0, { percentage: ['1e400', 'NaN', '10%', '', ' '][n % 5] || 'x' })];
    case 'amount-negative':
      return [{ recipient: r[0], amount: n % 2 ? -100 : '-100' }];
    case 'amount-zero':
      return [{ recipient: r[0], amount: n % 2 ? 0 : '0' }];
    case 'amount-over-gross':
      return [{ recipient: r[0], amount: gross + 1 + (n % 1000) }];
    case 'amount-decimal-literal':
      return [{ recipient: r[0], amount: new Raw('100.0', 'literal 100.0') }];
    case 'amount-unsafe-literal':
      return [{ recipient: r[0], amount: new Raw('9007199254740993', 'literal 9007199254740993') }];
    case 'sum-over-100':
      return [e(0, { percentage: '60' }), e(1, { percentage: '50.5' })];
    case 'gross-exceeded':
      return [
        { recipient: r[0], amount: Math.ceil(gross / 2) + 1 },
        { recipient: r[1], amount: Math.ceil(gross / 2) },
      ];
    case 'unknown-recipient':
      return [e(0), { recipient: '00000000-0000-4000-8000-00000000000' + (n % 10), percentage: 5 }];
    case 'recipient-is-merchant':
      return [{ recipient: n % 2 ? s.shop.merchantId : s.shopId.toUpperCase(), percentage: 5 }];
    case 'recipient-missing':
      return [{ percentage: 5 }];
    case 'recipient-of-other-merchant':
      return [{ recipient: s.foreignRecipient, percentage: 5 }];
    case 'recipient-not-approved':
      return [{ recipient: s.pendingRecipient, percentage: 5 }];
    case 'recipient-wrong-type':
      return [{ recipient: [123, true, { id: r[0] }, [r[0]]][n % 4], percentage: 5 }];
    case 'duplicate-recipient':
      return [e(0, { percentage: '5' }), e(0, { percentage: '6' })];
    case 'too-many-entries':
      return Array.from({ length: 11 + (n % 5) }, (_, i) => ({ recipient: r[i % r.length], amount: 1 }));
    case 'over-100-entries':
      return Array.from({ length: 101 + (n % 20) }, (_, i) => ({ recipient: r[i % r.length], amount: 1 }));
    case 'empty':
      return [];
    case 'non-array':
      return [{ recipient: r[0], percentage: 10 }, 'split', 10, true][n % 4];
    case 'entry-not-object':
      return [e(0), [null, 'x', 5, [e(1)]][n % 4]];
    case 'two-full-fee-payers':
      return [e(0, { charge_recipient_processing_fee: true }), e(1, { charge_recipient_processing_fee: 'true' })];
    case 'full-and-prorata':
      return [e(0, { charge_recipient_processing_fee: true }), e(1, { charge_processing_fee: true })];
    case 'full-below-fee':
      return [{ recipient: r[0], amount: 1, charge_recipient_processing_fee: true }];
    case 'flag-wrong-type':
      return [
        e(0, {
          [['liable', 'charge_processing_fee', 'charge_recipient_processing_fee', 'is_gross_amount'][n % 4]]: ['yes', 2, [], {}][
            (n >> 2) % 4
          ],
        }),
      ];
  }
}

function nearMissValue(key: string, raw: unknown, current: Node, s: Setup): unknown {
  if (typeof raw !== 'string' || !raw.startsWith('{')) return raw;
  const id = typeof current === 'string' ? current : s.captured[0];
  switch (raw) {
    case '{otherToken}':
      return s.otherToken;
    case '{otherTransaction}':
      return s.otherTransaction;
    case '{lowercase}':
      return id.toLowerCase();
    case '{braced}':
      return `{${id}}`;
    case '{nodashes}':
      return id.replace(/-/g, '');
    case '{otherMerchant}':
      return s.other.merchantId;
    case '{otherKey}':
      return s.other.merchantKey;
    case '{merchant}':
      return s.shopId;
    case '{pending}':
      return s.pendingRecipient;
    case '{foreign}':
      return s.foreignRecipient;
    default:
      return raw;
  }
}

function build(index: number, r: Recipe, s: Setup): Built {
  const opBody = baseBody(r, s);
  const root = toNode({
    'transaction-request': {
      version: '1.0.0',
      verification: { merchantId: s.shop.merchantId, merchantKey: s.shop.merchantKey },
      [r.op]: opBody,
    },
  }) as Obj;
  const known = new Set(locations(root).map((l) => JSON.stringify(l.keyPath)));
  const labels: string[] = [];
  const descs: string[] = [];
  const expectations: Expectation[] = [];
  const pans = new Set<string>();
  const rel = (l: Loc | Key[]) => showPath(Array.isArray(l) ? l : l.keyPath, r.op);
  const note = (label: string, desc: string) => {
    labels.push(label);
    descs.push(desc);
  };
  const anchored = (rule: string, label: string, keyPath: Key[], node: Node, ok: (a: Answer) => boolean) =>
    expectations.push({ rule, label, ok, anchor: { keyPath, node, snapshot: bytesOf(node).toString('hex') } });
  const notAccepted = (a: Answer) => a.status < 200 || a.status > 299;

  for (const m of r.mutations) {
    const locs = locations(root);
    const at = <T>(list: T[], n: number) => list[n % list.length];
    // An earlier mutation may have left an empty root: only additions still apply.
    if (!locs.length && !['extra-field', 'proto-key', 'deep-nesting', 'card-number-elsewhere'].includes(m.kind)) continue;
    if (!locs.length && m.kind === 'deep-nesting' && m.replace) continue;
    switch (m.kind) {
      case 'wrong-type': {
        const l = at(locs, m.pick);
        setAt(l, clone(m.value));
        note(`wrong-type:${typeLabel(m.value)}`, `${rel(l)} = ${show(m.value)}`);
        break;
      }
      case 'missing': {
        const entries = locs.filter((l) => l.holder instanceof Obj);
        const l = at(entries, m.pick);
        (l.holder as Obj).entries.splice(l.index, 1);
        note('missing', `${rel(l)} removed`);
        break;
      }
      case 'extra-field': {
        const { obj, keyPath } = at(objectsIn(root), m.pick);
        obj.entries.push([m.key, clone(m.value)]);
        note('extra-field', `${rel([...keyPath, m.key])} added = ${show(m.value)}`);
        break;
      }
      case 'duplicate-key': {
        const entries = locs.filter((l) => l.holder instanceof Obj);
        const l = at(entries, m.pick);
        const holder = l.holder as Obj;
        const dup: [string, Node] = [holder.entries[l.index][0], clone(m.value)];
        holder.entries.splice(m.last ? holder.entries.length : l.index, 0, dup);
        note('duplicate-key', `${rel(l)} repeated ${m.last ? 'after' : 'before'} itself = ${show(m.value)}`);
        break;
      }
      case 'special-char': {
        const insert = (t: string) => {
          const i = m.at % (t.length + 1);
          return t.slice(0, i) + m.ch + t.slice(i);
        };
        const strings = locs.filter((l) => typeof valueAt(l) === 'string');
        if (m.inKey || !strings.length) {
          const entries = locs.filter((l) => l.holder instanceof Obj);
          const l = at(entries, m.pick);
          const entry = (l.holder as Obj).entries[l.index];
          entry[0] = insert(entry[0]);
          note(`${m.cat}:key`, `key ${rel(l)} renamed ${show(entry[0])}`);
        } else {
          const l = at(strings, m.pick);
          setAt(l, insert(valueAt(l) as string));
          note(`${m.cat}:value`, `${rel(l)} = ${show(valueAt(l))}`);
        }
        break;
      }
      case 'proto-key': {
        const { obj, keyPath } = at(objectsIn(root), m.pick);
        const value: unknown = [
          { polluted: true, isAdmin: true },
          { prototype: { polluted: true } },
          null,
          { toString: 1, valueOf: 'x', hasOwnProperty: [] },
        ][m.shape];
        obj.entries.push([m.key, toNode(value)]);
        note(`proto-key:${m.key}`, `${rel([...keyPath, m.key])} added = ${show(toNode(value))}`);
        break;
      }
      case 'number': {
        const leaves = locs.filter((l) => {
          const v = valueAt(l);
          return typeof v === 'string' || typeof v === 'number' || v instanceof Raw;
        });
        if (!leaves.length) break;
        const l = at(leaves, m.pick);
        const value: Node = m.asString ? m.literal : new Raw(m.literal, `literal ${m.literal}`);
        setAt(l, value);
        const isKnown = known.has(JSON.stringify(l.keyPath));
        const isAmount = AMOUNT_KEYS.has(String(keyAt(l)));
        const altered = !m.asString && alteredLiteral(m.literal);
        const decimal = !m.asString && m.literal.includes('.');
        note(
          m.asString ? 'number:as-string' : altered ? 'number:altered' : decimal ? 'number:decimal' : 'number:other',
          `${rel(l)} = ${show(value)}`,
        );
        // docs/merchants/envelope.md: the server must not silently use another number than the merchant wrote.
        if (isKnown && altered)
          anchored("accepted a number literal that a double can't hold, in a known field", 'number:altered', l.keyPath, value, notAccepted);
        if (isKnown && isAmount && decimal)
          anchored('accepted an amount with a decimal point', 'number:decimal', l.keyPath, value, notAccepted);
        break;
      }
      case 'near-miss': {
        const targets = locs.filter((l) => typeof keyAt(l) === 'string' && Object.prototype.hasOwnProperty.call(NEAR_MISS, keyAt(l)));
        if (!targets.length) break;
        const l = at(targets, m.pick);
        const key = keyAt(l) as string;
        const value = toNode(nearMissValue(key, at(NEAR_MISS[key], m.choice), valueAt(l), s));
        setAt(l, value);
        // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a card number may come as a JSON number; an object never reads as digits
        if (key === 'cardNumber' && /^\d{12,19}$/.test(String(value))) pans.add(String(value));
        note(`near-miss:${key}`, `${rel(l)} = ${show(value)}`);
        break;
      }
      case 'deep-nesting': {
        const d = m.depth;
        const raw = new Raw(
          m.arrays ? '['.repeat(d) + ']'.repeat(d) : '{"":'.repeat(d) + '0' + '}'.repeat(d),
          `${d}-deep ${m.arrays ? 'arrays' : 'objects'}`,
        );
        if (m.replace) {
          const l = at(locs, m.pick);
          setAt(l, raw);
          note(`deep-nesting:${d}`, `${rel(l)} = ${raw.label}`);
        } else {
          const { obj, keyPath } = at(objectsIn(root), m.pick);
          obj.entries.push(['deep', raw]);
          note(`deep-nesting:${d}`, `${rel([...keyPath, 'deep'])} added = ${raw.label}`);
        }
        break;
      }
      case 'card-number-elsewhere': {
        const pan = CARD_POOL[m.card % CARD_POOL.length].pan;
        const { obj, keyPath } = at(objectsIn(root), m.pick);
        obj.entries.push(m.inKey ? [pan, 'x'] : ['cardNumberCopy', pan]);
        note(
          `card-number-in-${m.inKey ? 'key' : 'extra-field'}`,
          `${rel(keyPath)} gets ${m.inKey ? 'a key' : 'an unknown field'} holding a card number`,
        );
        break;
      }
      case 'decimal-amount': {
        // Both amounts of a sale get the same literal, so the decimal point is the only problem.
        const paths: Key[][] = isSale(r.op)
          ? [
              ['payment', 'amount'],
              ['order', 'totalAmount'],
            ]
          : [['amount']];
        const opPath = ['transaction-request', r.op];
        const current = effectiveAt(root, [...opPath, ...paths[0]]);
        const n =
          current === undefined && !isSale(r.op) ? 1 : typeof current === 'number' || typeof current === 'string' ? Number(current) : NaN;
        if (!Number.isSafeInteger(n) || n < 1) break;
        const literal = [`${n}.0`, `${n}.00`, `${n}.0e0`][m.form];
        const raw = new Raw(literal, `literal ${literal}`);
        for (const p of paths) {
          const holder = effectiveAt(root, [...opPath, ...p.slice(0, -1)]);
          if (!(holder instanceof Obj)) continue;
          const i = holder.entries.map(([k]) => k).lastIndexOf(p[p.length - 1] as string);
          if (i >= 0) holder.entries[i][1] = raw;
          else holder.entries.push([p[p.length - 1] as string, raw]);
        }
        note('decimal-amount', `${paths.map((p) => p.join('.')).join(' and ')} = ${raw.label}`);
        anchored('accepted an amount with a decimal point', 'decimal-amount', [...opPath, ...paths[0]], raw, notAccepted);
        break;
      }
      case 'split': {
        const payment = effectiveAt(root, ['transaction-request', r.op, 'payment']);
        if (!(payment instanceof Obj)) break;
        const gross = Number(r.base.amount);
        const split = toNode(splitFor(m.variant, m.n, gross, s));
        const i = payment.entries.findIndex(([k]) => k === 'split');
        if (i >= 0) payment.entries[i][1] = split;
        else payment.entries.push(['split', split]);
        note(`split:${m.variant}`, `payment.split = ${show(split)} (${m.variant})`);
        anchored(
          `accepted an invalid split (${m.variant})`,
          `split:${m.variant}`,
          ['transaction-request', r.op, 'payment', 'split'],
          split,
          notAccepted,
        );
        break;
      }
    }
  }

  const effective = (keyPath: Key[]) => effectiveAt(root, ['transaction-request', r.op, ...keyPath]);
  const truthy = (v: Node | undefined) => v === true || v === 'true';
  const mayVault = isSale(r.op) && (truthy(effective(['payment', 'generateToken'])) || truthy(effective(['payment', 'saveCreditCard'])));

  let contentType: string | null = r.base.contentType;
  const serialize = (model: Obj): Buffer => {
    const t = r.transport;
    if (!t) return bytesOf(model);
    switch (t.kind) {
      case 'content-type':
        return bytesOf(model);
      case 'oversize':
      case 'at-limit': {
        const target = t.kind === 'oversize' ? t.size : BODY_LIMIT;
        const padded = new Obj([...model.entries, ['pad', '']]);
        const pad = Math.max(0, target - bytesOf(padded).length);
        padded.entries[padded.entries.length - 1][1] = 'x'.repeat(pad);
        return bytesOf(padded);
      }
      case 'invalid-utf8': {
        const copy = clone(model) as Obj;
        const strings = locations(copy).filter((l) => typeof valueAt(l) === 'string');
        const bad = (v: string) => new BadUtf8(v.slice(0, v.length >> 1), Buffer.from(t.bytes), v.slice(v.length >> 1));
        if (strings.length) {
          const l = strings[t.pick % strings.length];
          setAt(l, bad(valueAt(l) as string));
        } else copy.entries.push(['note', bad('x')]);
        return bytesOf(copy);
      }
      case 'truncated': {
        const full = bytesOf(model);
        return full.subarray(0, Math.floor(full.length * t.fraction));
      }
      case 'empty-body':
        return Buffer.alloc(0);
      case 'whitespace-only':
        return Buffer.from(' \n\t ');
      case 'non-object-root': {
        const inner = bytesOf(model).toString('utf8');
        const roots = ['[]', `[${inner}]`, '"transaction-request"', '0', 'null', 'true', '-1', '1e400', '{}', `[${inner},${inner}]`];
        return Buffer.from(roots[t.variant % roots.length]);
      }
      case 'trailing-garbage':
        return Buffer.concat([bytesOf(model), Buffer.from(t.text)]);
      case 'bom':
        return Buffer.concat([Buffer.from('\ufeff'), bytesOf(model)]);
    }
  };

  const t = r.transport;
  if (t) {
    const label =
      t.kind === 'content-type'
        ? `content-type:${t.value === null ? 'missing' : t.value === '' ? 'empty' : t.value.split(';')[0]}`
        : t.kind;
    const desc: Record<Transport['kind'], string> = {
      'content-type': `Content-Type ${t.kind === 'content-type' ? JSON.stringify(t.value) : ''}`,
      oversize: `body padded to ${t.kind === 'oversize' ? t.size : 0} bytes`,
      'at-limit': `body padded to exactly ${BODY_LIMIT} bytes`,
      'invalid-utf8': `invalid UTF-8 bytes ${t.kind === 'invalid-utf8' ? Buffer.from(t.bytes).toString('hex') : ''} in a string`,
      truncated: 'body cut short',
      'empty-body': 'empty body',
      'whitespace-only': 'body of whitespace only',
      'non-object-root': 'root is not an object',
      'trailing-garbage': `text after the JSON value: ${t.kind === 'trailing-garbage' ? show(t.text) : ''}`,
      bom: 'a byte order mark before the JSON',
    };
    note(label, desc[t.kind]);
    if (t.kind === 'content-type') {
      contentType = t.value;
      if (!isJsonType(t.value))
        expectations.push({ rule: 'a body that is not application/json was not answered 415', label, ok: (a) => a.status === 415 });
    }
    if (t.kind === 'oversize') expectations.push({ rule: 'a body over 64 KiB was not answered 413', label, ok: (a) => a.status === 413 });
    // (A body already over the limit before padding is just another oversize body.)
    if (t.kind === 'at-limit' && serialize(root).length === BODY_LIMIT)
      expectations.push({ rule: 'a body of exactly 64 KiB was answered 413', label, ok: (a) => a.status !== 413 });
    if (t.kind === 'invalid-utf8') expectations.push({ rule: 'accepted a body that is not valid UTF-8', label, ok: notAccepted });
    if (['truncated', 'empty-body', 'whitespace-only', 'non-object-root', 'trailing-garbage'].includes(t.kind)) {
      // Over the size limit the 413 comes first (a 10 000-deep member, wrapped twice, gets there).
      const over = serialize(root).length > BODY_LIMIT;
      expectations.push({
        rule: `a body that is not one JSON object was not answered 400`,
        label,
        ok: (a) => a.status === (over ? 413 : 400),
      });
    }
  }

  const headers: Record<string, string> = {};
  let key: string | undefined;
  let second: Buffer | undefined;
  if (r.idempotency !== 'none') {
    note(
      `key:${r.idempotency}`,
      r.idempotency === 'invalid' ? `Idempotency-Key ${show(r.invalidKey)}` : `Idempotency-Key (${r.idempotency})`,
    );
    key = r.idempotency === 'invalid' ? r.invalidKey : `fuzz-${SEED}-${index}`;
    headers['idempotency-key'] = key;
    if (r.idempotency === 'invalid')
      expectations.push({ rule: 'accepted an invalid Idempotency-Key', label: 'key:invalid', ok: notAccepted });
    if (r.idempotency === 'reused-other-body') second = serialize(new Obj([...root.entries, ['fuzzNonce', index]]));
  }
  if (r.prefer) {
    headers.prefer = 'respond-async';
    note('prefer:respond-async', 'Prefer: respond-async');
  }
  const body = serialize(root);
  if (r.idempotency === 'repeated-same-body') second = body;
  if (r.control && r.op !== 'capture' && r.op !== 'cancel') {
    expectations.push({ rule: 'refused a valid, unmutated body', label: 'control', ok: (a) => a.status >= 200 && a.status < 300 });
  }
  if (r.control) note('control', 'no mutation');

  // Anchored expectations hold only while their node is what the server reads, unchanged: a
  // later mutation may have removed it, or a duplicate key after it may shadow it.
  const live = expectations.filter((e) => {
    if (!e.anchor) return true;
    const now = effectiveAt(root, e.anchor.keyPath);
    return now === e.anchor.node && bytesOf(now).toString('hex') === e.anchor.snapshot;
  });
  return {
    index,
    op: r.op,
    path: PATH_OF[r.op],
    body,
    contentType,
    headers,
    labels,
    descs,
    expectations: live,
    pans,
    idempotency: r.idempotency,
    key,
    second,
    control: r.control,
    mayVault,
  };
}

// ---------------------------------------------------------------------------------------------
// Sending.

interface Answer {
  status: number; // 0: no answer
  ms: number;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  replayed: boolean;
  error?: string;
}

async function send(baseUrl: string, c: Built, body: Buffer): Promise<Answer> {
  const headers: Record<string, string> = { ...c.headers };
  if (c.contentType !== null) headers['content-type'] = c.contentType;
  const started = Date.now();
  try {
    const res = await fetch(baseUrl + c.path, { method: 'POST', headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await res.text();
    const json = jsonOf(text);
    const headerText = [...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n');
    return {
      status: res.status,
      ms: Date.now() - started,
      text: `${headerText}\n\n${text}`,
      json,
      replayed: res.headers.get('idempotent-replayed') === 'true',
    };
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return {
      status: 0,
      ms: Date.now() - started,
      text: '',
      json: undefined,
      replayed: false,
      error: `${(e as Error).name}: ${cause?.code ?? cause?.message ?? (e as Error).message}`,
    };
  }
}

interface Outcome {
  c: Built;
  first: Answer;
  second?: Answer;
}

async function runAll(baseUrl: string, cases: Built[]): Promise<Outcome[]> {
  const out: Outcome[] = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++];
      const first = await send(baseUrl, c, c.body);
      // The second request of a key only means something after the first one was kept (a 2xx).
      const second = c.second && first.status >= 200 && first.status < 300 ? await send(baseUrl, c, c.second) : undefined;
      out[c.index] = { c, first, second };
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Reporting: failures grouped into kinds a person can act on.

interface Failure {
  check: string;
  c: Built;
  answer: Answer;
  /** The mutation that most likely caused it; computed from failure rates when not known. */
  cause?: string;
}

const is2xx = (a: Answer | undefined) => !!a && a.status >= 200 && a.status < 300;
const errorOf = (a: Answer) => (a.json?.result?.error ?? {}) as Json;

function statusText(a: Answer): string {
  if (a.status === 0) return `no answer (${a.error})`;
  const e = errorOf(a);
  const parameter = e.parameter ? ` parameter ${show(maskPans(String(e.parameter)))}` : '';
  return `HTTP ${a.status}${e.code ? ` code ${e.code}` : ''}${parameter}${e.details ? ` "${maskPans(String(e.details)).slice(0, 90)}"` : ''}`;
}

/**
 * Each failure's likely cause: of its case's mutations, the one that best explains the check's
 * failures, scored failures² / cases (how often it fails and how many failures it is in, so a
 * label seen once in a rare combination does not outrank a repeated culprit).
 */
function assignCauses(failures: Failure[], all: Built[]): void {
  const casesWith = new Map<string, number>();
  for (const c of all) for (const l of new Set(c.labels)) casesWith.set(l, (casesWith.get(l) ?? 0) + 1);
  const byCheck = new Map<string, Failure[]>();
  for (const f of failures) byCheck.set(f.check, [...(byCheck.get(f.check) ?? []), f]);
  for (const group of byCheck.values()) {
    const failing = new Map<string, number>();
    for (const f of group) for (const l of new Set(f.c.labels)) failing.set(l, (failing.get(l) ?? 0) + 1);
    const rate = (l: string) => (failing.get(l) ?? 0) ** 2 / (casesWith.get(l) ?? 1);
    for (const f of group) f.cause ??= [...new Set(f.c.labels)].sort((a, b) => rate(b) - rate(a) || a.localeCompare(b))[0] ?? 'none';
  }
}

function report(title: string, failures: Failure[], all: Built[]): string {
  assignCauses(failures, all);
  const casesWith = new Map<string, number>();
  for (const c of all) for (const l of new Set(c.labels)) casesWith.set(l, (casesWith.get(l) ?? 0) + 1);
  const groups = new Map<string, Failure[]>();
  for (const f of failures) {
    const a = f.answer;
    const k = `${f.check} | ${a.status === 0 ? 'no answer' : `HTTP ${a.status} ${errorOf(a).code ?? ''}`} | ${f.cause}`;
    groups.set(k, [...(groups.get(k) ?? []), f]);
  }
  const sorted = [...groups.values()].sort((a, b) => b.length - a.length);
  const lines = [
    `${title}: ${failures.length} failing request(s) of ${all.length} cases, in ${sorted.length} kind(s)`,
    `(seed ${SEED}: FUZZ_SEED=${SEED} FUZZ_BODIES=${BODIES} generates the same bodies)`,
  ];
  sorted.slice(0, 20).forEach((g, i) => {
    const f = g[0];
    const ops = Object.entries(g.reduce<Record<string, number>>((acc, x) => ({ ...acc, [x.c.op]: (acc[x.c.op] ?? 0) + 1 }), {}))
      .map(([op, n]) => `${op}×${n}`)
      .join(' ');
    lines.push(
      `${String(i + 1).padStart(2)}. ×${g.length} ${f.check}: ${statusText(f.answer)}`,
      `    likely cause ${f.cause} (${g.length} of ${casesWith.get(f.cause!) ?? '?'} cases with it); ops ${ops}`,
      `    e.g. case #${f.c.index} ${f.c.op}: ${f.c.descs.join('; ')}`,
    );
  });
  if (sorted.length > 20) lines.push(`… and ${sorted.length - 20} more kind(s)`);
  return lines.join('\n');
}

/**
 * FUZZ_REPORT=<file> appends every failing request there as a JSON line (operation, mutations,
 * status, result.error): the descriptions mask card numbers and the bodies are never written.
 * Not in the log folder: the scans there must see only what the apps wrote.
 */
function assertNone(title: string, failures: Failure[], all: Built[]): void {
  if (!failures.length) return;
  const message = report(title, failures, all);
  if (process.env.FUZZ_REPORT) {
    const lines = failures.map((f) =>
      maskPans(
        JSON.stringify({
          check: f.check,
          case: f.c.index,
          op: f.c.op,
          mutations: f.c.descs,
          cause: f.cause,
          status: f.answer.status,
          error: f.answer.error ?? errorOf(f.answer),
        }),
      ),
    );
    appendFileSync(process.env.FUZZ_REPORT, `${lines.join('\n')}\n`);
  }
  throw new Error(message);
}

/** Every card number and fuzz security code in `text`, described without the number itself. */
function leaksIn(text: string, pans: Iterable<string>): string[] {
  const found: string[] = [];
  for (const pan of pans) if (text.includes(pan)) found.push(`card number ${pan.slice(0, 6)}…${pan.slice(-4)}`);
  for (const { code, re } of CODE_PATTERNS) if (re.test(text)) found.push(`security code ${code}`);
  return found;
}

// ---------------------------------------------------------------------------------------------

describe(`fuzz: ${BODIES} hostile bodies against every merchant endpoint`, () => {
  let stack: Stack;
  let db: Client;
  let setup: Setup;
  let cases: Built[];
  let outcomes: Outcome[];
  const before: Record<string, number> = {};
  let runMs = 0;

  /**
   * The rows of both setup merchants: a body may carry the other merchant's whole credentials (its
   * id and its key), and then its sale is rightly that merchant's.
   */
  const countRows = async (merchantIds: string[]) => {
    const one = async (sql: string) => Number((await db.query<{ n: string }>(sql, [merchantIds])).rows[0].n);
    return {
      transactions: await one('SELECT count(*) AS n FROM transactions WHERE merchant_id = ANY($1::uuid[])'),
      tokens: await one('SELECT count(*) AS n FROM vault.token_cards WHERE merchant_id = ANY($1::uuid[])'),
      applied: await one(`SELECT count(*) AS n FROM transaction_operations WHERE merchant_id = ANY($1::uuid[]) AND state = 'applied'`),
      operations: await one('SELECT count(*) AS n FROM transaction_operations WHERE merchant_id = ANY($1::uuid[])'),
      keys: await one('SELECT count(*) AS n FROM idempotency_keys WHERE merchant_id = ANY($1::uuid[])'),
    };
  };

  beforeAll(async () => {
    const setupStarted = Date.now();
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    // The operator CLI needs only the database: it runs while the apps boot.
    const operator = async () => {
      const [shop, other] = await Promise.all([createMerchant('fuzz shop'), createMerchant('fuzz other shop')]);
      const recipient = async (m: MerchantCredentials, name: string, approve: boolean) => {
        const { recipientId } = await runCli<{ recipientId: string }>(['recipient:create', '--merchant', m.merchantId, '--name', name]);
        if (approve) await runCli(['recipient:approve', '--recipient', recipientId]);
        return recipientId;
      };
      const recipients = await Promise.all([
        recipient(shop, 'fuzz seller 0', true),
        recipient(shop, 'fuzz seller 1', true),
        recipient(shop, 'fuzz seller 2', true),
        recipient(shop, 'fuzz seller pending', false),
        recipient(other, 'fuzz foreign seller', true),
      ]);
      return { shop, other, recipients };
    };
    // Thousands of bodies from one address, many with wrong credentials: the per-address limit on
    // failed authentication (auth-limits.e2e.test.ts) would answer the rest, the controls too, with 429.
    const [booted, made] = await Promise.allSettled([startStack({ AUTH_FAILURE_LIMIT: '0' }), operator()]);
    if (booted.status === 'fulfilled') stack = booted.value;
    if (booted.status === 'rejected') throw booted.reason;
    if (made.status === 'rejected') throw made.reason;
    const {
      shop,
      other,
      recipients: [r0, r1, r2, pendingRecipient, foreignRecipient],
    } = made.value;

    const call = async (m: MerchantCredentials, path: string, op: string, body: Json) => {
      const res = await post(stack.baseUrl, path, {
        'transaction-request': { version: '1.0.0', verification: { merchantId: m.merchantId, merchantKey: m.merchantKey }, [op]: body },
      });
      if (res.status !== 200) throw new Error(`setup ${op} answered ${res.status}: ${res.text.slice(0, 300)}`);
      return res.json as Json;
    };
    const saleOf = (m: MerchantCredentials, op: string, reference: string, amount: number) =>
      call(m, '/v1/receiver', op, {
        order: { reference, totalAmount: amount },
        payment: {
          acquirer: 26,
          method: 1,
          amount,
          currency: '986',
          country: 'BRA',
          numberOfPayments: 1,
          cardHolder: 'FUZZ SETUP',
          cardNumber: SANDBOX_CARDS[1],
          cardSecurityCode: FUZZ_CODES[0],
          cardExpirationDate: '203012',
        },
      });
    // Each authorization takes one capture (then it is captured); the sales take many partial cancels.
    const references = ['FZS-A1', 'FZS-A2', 'FZS-A3', 'FZS-A4', 'FZS-C1', 'FZS-C2', 'FZS-C3'];
    const authorized = await Promise.all(references.slice(0, 4).map((ref) => saleOf(shop, 'authorize', ref, 1_000_000)));
    const captured = await Promise.all(references.slice(4).map((ref) => saleOf(shop, 'sale', ref, 5_000_000)));
    const otherSale = await saleOf(other, 'sale', 'FZS-OTHER', 10_000);
    const tokenOf = (m: MerchantCredentials) =>
      call(m, '/v1/token/add', 'tokencard', { cardNumber: TEST_CARDS.mastercard, cardHolder: 'FUZZ TOKEN', cardExpirationDate: '203106' });
    const [token, otherToken] = await Promise.all([tokenOf(shop), tokenOf(other)]);
    expect([...authorized, ...captured].map((t) => t.status)).toEqual(['3', '3', '3', '3', '8', '8', '8']);

    setup = {
      shop,
      shopId: shop.internalId,
      other,
      authorized: authorized.map((t) => t.transactionId),
      captured: captured.map((t) => t.transactionId),
      references,
      otherTransaction: otherSale.transactionId,
      token: token.TokenCard,
      otherToken: otherToken.TokenCard,
      recipients: [r0, r1, r2],
      pendingRecipient,
      foreignRecipient,
    };
    Object.assign(before, await countRows([setup.shopId, setup.other.internalId]));

    const setupMs = Date.now() - setupStarted;
    const recipes = fc.sample(recipeArb, { numRuns: BODIES, seed: SEED });
    cases = recipes.map((r, i) => build(i, r, setup));
    const started = Date.now();
    outcomes = await runAll(stack.baseUrl, cases);
    runMs = Date.now() - started;

    const byOp: Record<string, Record<string, number>> = {};
    for (const o of outcomes) {
      const s = o.first.status === 0 ? 'none' : `${String(o.first.status)[0]}xx`;
      byOp[o.c.op] ??= {};
      byOp[o.c.op][s] = (byOp[o.c.op][s] ?? 0) + 1;
    }
    const kinds = new Map<string, number>();
    for (const c of cases) for (const l of new Set(c.labels.map((x) => x.split(':')[0]))) kinds.set(l, (kinds.get(l) ?? 0) + 1);
    const ms = outcomes.map((o) => o.first.ms).sort((a, b) => a - b);
    process.stdout.write(
      `\nfuzz: setup ${(setupMs / 1000).toFixed(1)} s; ${cases.length} cases (+${outcomes.filter((o) => o.second).length} second requests) in ` +
        `${(runMs / 1000).toFixed(1)} s, ${CONCURRENCY} in flight, latency p50 ${ms[ms.length >> 1]} ms p99 ${ms[Math.floor(ms.length * 0.99)]} ms; seed ${SEED}\n` +
        `${Object.entries(byOp)
          .map(([op, s]) => `  ${op.padEnd(15)} ${JSON.stringify(s)}`)
          .join('\n')}\n` +
        `  cases by mutation: ${[...kinds.entries()]
          .sort((a, b) => b[1] - a[1])
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}\n`,
    );
  });

  afterAll(async () => {
    await stack?.stop();
    await db?.end();
  });

  it('never answers 5xx, and always answers', () => {
    const failures: Failure[] = [];
    for (const o of outcomes) {
      for (const a of [o.first, o.second]) {
        if (a && (a.status === 0 || a.status >= 500)) failures.push({ check: a.status === 0 ? 'no answer' : '5xx', c: o.c, answer: a });
      }
    }
    assertNone('5xx or no answer', failures, cases);
  });

  it('answers every 4xx with the wire error body, a 400 naming its field', () => {
    const failures: Failure[] = [];
    for (const o of outcomes) {
      for (const a of [o.first, o.second]) {
        if (!a || a.status < 400 || a.status > 499) continue;
        const e = errorOf(a);
        const problems: string[] = [];
        if (!/^\d{3}$/.test(String(e.code))) problems.push('no three-digit result.error.code');
        if (a.json?.status?.code !== String(a.status)) problems.push('status.code is not the HTTP status');
        if (typeof e.details !== 'string' || !e.details) problems.push('no result.error.details');
        if (!Array.isArray(e.errors)) problems.push('no result.error.errors[]');
        if (typeof e.parameter !== 'string') problems.push('no result.error.parameter');
        // A body that is not JSON at all (code 900) has no field to name; every other 400 does.
        else if (a.status === 400 && e.code !== '900' && !e.parameter) problems.push('a 400 whose parameter names no field');
        if (problems.length) failures.push({ check: `error body: ${problems.join(', ')}`, c: o.c, answer: a });
      }
    }
    assertNone('4xx answers without the error body', failures, cases);
  });

  it('refuses what the contract refuses and accepts an unmutated body', () => {
    const failures: Failure[] = [];
    for (const o of outcomes) {
      if (o.first.status === 0) continue; // reported by the 5xx test
      for (const e of o.c.expectations) if (!e.ok(o.first)) failures.push({ check: e.rule, c: o.c, answer: o.first, cause: e.label });
      if (
        o.second &&
        o.c.idempotency === 'reused-other-body' &&
        !(o.second.status === 409 && errorOf(o.second).parameter === 'Idempotency-Key')
      ) {
        failures.push({
          check: 'an Idempotency-Key reused with another body was not answered 409',
          c: o.c,
          answer: o.second,
          cause: 'key:reused-other-body',
        });
      }
      if (o.second && o.c.idempotency === 'repeated-same-body') {
        const why = [
          o.second.status !== o.first.status && `status ${o.second.status} after ${o.first.status}`,
          !o.second.replayed && 'no Idempotent-Replayed header',
          !isDeepStrictEqual(o.second.json, o.first.json) && 'another body',
        ].filter(Boolean);
        if (why.length)
          failures.push({
            check: `a repeated request with its Idempotency-Key was not replayed (${why.join(', ')})`,
            c: o.c,
            answer: o.second,
            cause: 'key:repeated-same-body',
          });
      }
    }
    assertNone('contract violations', failures, cases);
  });

  it('writes no row for a refused body', async () => {
    // Rows settle before the answer; a short pause catches anything a refused body set going.
    await new Promise((r) => setTimeout(r, 1_000));
    const after = await countRows([setup.shopId, setup.other.internalId]);
    const answers = outcomes.flatMap((o) => [o.first, o.second].filter((a): a is Answer => !!a).map((a) => ({ o, a })));
    const fresh2xx = (ops: Op[]) => answers.filter(({ o, a }) => ops.includes(o.c.op) && is2xx(a) && !a.replayed);
    const sales = fresh2xx(['sale', 'authorize']);
    const tokenAdds = fresh2xx(['tokencard', 'tokenCard']).length;
    const vaultingSales = sales.filter(({ o }) => o.c.mayVault).length;
    const operations = fresh2xx(['capture', 'cancel']).length;
    const keysKept = new Set(
      outcomes.filter((o) => o.c.key !== undefined && o.c.idempotency !== 'invalid' && is2xx(o.first)).map((o) => o.c.key),
    );
    const keyRows = new Set(
      (
        await db.query<{ key: string }>('SELECT key FROM idempotency_keys WHERE merchant_id = ANY($1::uuid[])', [
          [setup.shopId, setup.other.internalId],
        ])
      ).rows.map((r) => r.key),
    );
    const strayKeys = [...keyRows].filter((k) => !keysKept.has(k));
    const lostKeys = [...keysKept].filter((k) => !keyRows.has(k!));
    const delta = (k: keyof typeof after) => after[k] - before[k];
    expect({
      transactions: delta('transactions'),
      'vault tokens at most': Math.min(delta('tokens'), tokenAdds + vaultingSales),
      'applied captures and cancels': delta('applied'),
      'idempotency keys of refused requests': strayKeys.length,
      'idempotency keys of kept answers missing': lostKeys.length,
    }).toEqual({
      transactions: sales.length,
      'vault tokens at most': delta('tokens'),
      'applied captures and cancels': operations,
      'idempotency keys of refused requests': 0,
      'idempotency keys of kept answers missing': 0,
    });
    process.stdout.write(
      `fuzz rows: ${delta('transactions')} transactions for ${sales.length} sale/authorize 2xx; ${delta('tokens')} vault tokens for ` +
        `${tokenAdds} token/add 2xx + ${vaultingSales} vaulting sales; ${delta('operations')} operations (${delta('applied')} applied) for ` +
        `${operations} capture/cancel 2xx; ${keyRows.size} idempotency keys\n`,
    );
  });

  it('echoes no card number or security code in any answer', () => {
    const failures: Failure[] = [];
    for (const o of outcomes) {
      for (const a of [o.first, o.second]) {
        if (!a) continue;
        const found = leaksIn(a.text, new Set([...POOL_PANS, ...o.c.pans]));
        if (found.length) failures.push({ check: `card data in the answer (${found.join(', ')})`, c: o.c, answer: a });
      }
    }
    assertNone('card data in answers', failures, cases);
  });

  it("leaves no card number or security code in the run's logs", async () => {
    await stack.stop(); // flushes every app's log
    const pans = new Set([...POOL_PANS, ...cases.flatMap((c) => [...c.pans])]);
    const dir = logDir();
    const files = readdirSync(dir)
      .map((f) => join(dir, f))
      .filter((f) => statSync(f).isFile());
    expect(files.some((f) => f === stack.api.logFile)).toBe(true);
    const found: string[] = [];
    for (const f of files) for (const l of leaksIn(readFileSync(f, 'utf8'), pans)) found.push(`${basename(f)}: ${l}`);
    expect(found).toEqual([]);
  });
});
