import fc from 'fast-check';
import { DomainError } from '@app/contracts';
import { parseJsonBody } from './json-body';
import { render } from './json-path';
import { altered, MAX_DEPTH } from './json-scan';
import { walk } from './json-walk';
import { firstInvalidUtf8 } from './utf8';

const utf8 = (s: string) => Buffer.from(s, 'utf8');
const envelope = (op: string, body: string) =>
  `{"transaction-request":{"version":"1.0.0","verification":{"merchantId":"m","merchantKey":"k"},"${op}":${body}}}`;

function refusal(raw: Uint8Array): DomainError {
  try {
    parseJsonBody(raw);
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('accepted');
}

describe('parseJsonBody', () => {
  it('parses a typical sale: big safe integers and plain unicode as sent, a number with a fraction or exponent as its text', () => {
    const text = envelope(
      'sale',
      '{"order":{"reference":"R-1","totalAmount":150000},"payment":{"split":[{"percentage":12.5},{"percentage":87.5}]},"billing":{"name":"José Ünal 日本 😀"},"n":9007199254740991,"x":-0.000001,"e":1e3,"c":150000.0}',
    );
    const expected = JSON.parse(
      text
        .replace('12.5', '"12.5"')
        .replace('87.5', '"87.5"')
        .replace('-0.000001', '"-0.000001"')
        .replace('1e3', '"1e3"')
        .replace('150000.0', '"150000.0"'),
    );
    expect(parseJsonBody(utf8(text))).toEqual(expected);
  });

  it('rewrites only numbers that stand as values: a number as a member name stays invalid JSON', () => {
    for (const text of ['{1.5:0}', '{"a":1,-0.5:1e+2}', '{1e3:1}']) expect(refusal(utf8(text))).toMatchObject({ code: '900' });
    expect(parseJsonBody(utf8('[1.5,{"a":[2e1,{"b":-0.5}]}]'))).toEqual(['1.5', { a: ['2e1', { b: '-0.5' }] }]);
  });

  it('never shows a member name holding 8 digits or more, dashes or not', () => {
    for (const key of ['4111-1111-1111-1111', '4111111111111111', '3782-822463-10005']) {
      const text = JSON.stringify({ 'transaction-request': { version: '1.0.0', [key]: 'a\u0000' } });
      expect(refusal(utf8(text))).toMatchObject({ parameter: '*' });
    }
  });

  it('keeps an amount written with a decimal point as text, so an integer field can refuse it (never 10.0 read as 10 cents)', () => {
    expect(parseJsonBody(utf8('{"amount":10.0,"b":[1E2,-0.5],"s":"1.5 in a string"}'))).toEqual({
      amount: '10.0',
      b: ['1E2', '-0.5'],
      s: '1.5 in a string',
    });
    expect(refusal(utf8('{"a":1.2.3}'))).toMatchObject({ code: '900' });
  });

  it('strips a UTF-8 byte order mark', () => {
    expect(parseJsonBody(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('{"a":1}')]))).toEqual({ a: 1 });
  });

  it('allows MAX_DEPTH levels and refuses one more', () => {
    expect(parseJsonBody(utf8('['.repeat(MAX_DEPTH) + ']'.repeat(MAX_DEPTH)))).toBeDefined();
    expect(refusal(utf8('['.repeat(MAX_DEPTH + 1) + ']'.repeat(MAX_DEPTH + 1)))).toMatchObject({ code: '904' });
  });

  const cases: [string, Uint8Array, string, string][] = [
    ['NUL in order.reference', utf8(envelope('sale', '{"order":{"reference":"a\\u0000b"}}')), '904', 'order.reference'],
    ['a lone surrogate in order.reference', utf8(envelope('authorize', '{"order":{"reference":"a\\ud800"}}')), '904', 'order.reference'],
    ['a lone low surrogate', utf8(envelope('sale', '{"billing":{"name":"\\udc00x"}}')), '904', 'billing.name'],
    ['a reversed surrogate pair', utf8(envelope('sale', '{"billing":{"name":"\\ude00\\ud83d"}}')), '904', 'billing.name'],
    ['a newline escape in billing', utf8(envelope('sale', '{"billing":{"street":"a\\nb"}}')), '904', 'billing.street'],
    ['a unit separator', utf8(envelope('sale', '{"billing":{"city":"\\u001f"}}')), '904', 'billing.city'],
    ['NUL in tokencard billing', utf8(envelope('tokencard', '{"billing":{"name":"\\u0000"}}')), '904', 'billing.name'],
    ['NUL in a report reference', utf8(envelope('report', '{"reference":"\\u0000"}')), '904', 'reference'],
    ['NUL in the merchant id', utf8(envelope('sale', '{}').replace('"m"', '"m\\u0000"')), '904', 'verification.merchantId'],
    ['NUL in the version', utf8(envelope('sale', '{}').replace('"1.0.0"', '"1\\u0000"')), '904', 'version'],
    [
      'NUL in an array entry',
      utf8(envelope('sale', '{"payment":{"split":[{},{},{"recipient":"\\u0000"}]}}')),
      '904',
      'payment.split[2].recipient',
    ],
    ['NUL in a member name', utf8(envelope('sale', '{"billing":{"na\\u0000me":"x"}}')), '904', 'billing.*'],
    ['a lone surrogate in a member name', utf8('{"a":{"\\ud800":1}}'), '904', 'a.*'],
    ['an operation that is a bad string', utf8(envelope('sale', '"\\u0000"')), '904', 'sale'],
    ['a root string with NUL', utf8('"\\u0000"'), '904', 'body'],
    ['NUL outside the envelope', utf8('{"foo":{"bar":["\\u0000"]}}'), '904', 'foo.bar[0]'],
    ['__proto__', utf8(envelope('sale', '{"order":{"__proto__":{"x":1}}}')), '904', 'order.__proto__'],
    ['constructor.prototype', utf8('{"constructor":{"prototype":{"x":1}}}'), '904', 'constructor'],
    ['prototype deep down', utf8(envelope('sale', '{"a":[{"prototype":1}]}')), '904', 'a[0].prototype'],
    ['2^53 + 1 as reference', utf8(envelope('sale', '{"order":{"reference":9007199254740993}}')), '904', 'order.reference'],
    ['2^53 exactly', utf8(envelope('sale', '{"order":{"totalAmount":9007199254740992}}')), '904', 'order.totalAmount'],
    ['a huge negative integer', utf8('{"a":-123456789012345678901234567890}'), '904', 'a'],
    ['1e400', utf8(envelope('sale', '{"payment":{"amount":1e400}}')), '904', 'payment.amount'],
    ['an underflow to zero', utf8('{"a":[1,1e-400]}'), '904', 'a[1]'],
    [
      'a fraction a double rounds',
      utf8(envelope('sale', '{"payment":{"split":[{"percentage":12.50000000000000001}]}}')),
      '904',
      'payment.split[0].percentage',
    ],
    ['a key with a number after escaped quotes', utf8('{"a\\"":"\\\\","b":99999999999999999}'), '904', 'b'],
    [
      '10 000 levels deep',
      utf8(envelope('sale', `{"order":{"reference":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`)),
      '904',
      'order.reference' + '[0]'.repeat(12),
    ],
    ['10 000 unclosed levels', utf8('{"a":' + '{"b":'.repeat(10_000)), '904', 'a' + '.b'.repeat(15)],
    [
      'brackets in strings do not count, deep after them',
      utf8('{"s":"[[[[[[[[[[[[[[[[[[[[[[","t":' + '['.repeat(17) + ']'.repeat(17) + '}'),
      '904',
      't' + '[0]'.repeat(15),
    ],
    [
      'invalid UTF-8 in order.reference',
      Buffer.concat([utf8(envelope('sale', '{"order":{"reference":"ab')), Buffer.from([0xff]), utf8('"}}')]),
      '904',
      'order.reference',
    ],
    ['an overlong encoding', Buffer.concat([utf8('{"a":"'), Buffer.from([0xc0, 0xaf]), utf8('"}')]), '904', 'a'],
    ['a UTF-8 encoded surrogate', Buffer.concat([utf8('{"a":[1,"'), Buffer.from([0xed, 0xa0, 0x80]), utf8('"]}')]), '904', 'a[1]'],
    ['a truncated sequence at the end', Buffer.concat([utf8('{"a":"'), Buffer.from([0xe2, 0x82])]), '904', 'a'],
    ['invalid UTF-8 in a member name', Buffer.concat([utf8('{"a":{"'), Buffer.from([0xfe]), utf8('":1}}')]), '904', 'a.*'],
    ['broken JSON', utf8('{"cardNumber": "4111111111111111"'), '900', ''],
    ['an empty body', utf8(''), '900', ''],
    ['whitespace only', utf8('  \n'), '900', ''],
    ['a trailing comma', utf8('{"a":1,}'), '900', ''],
    ['a raw control character in a string', utf8('{"a":"x\u0001"}'), '900', ''],
    ['NaN', utf8('{"a":NaN}'), '900', ''],
  ];

  it.each(cases)('refuses %s', (_name, raw, code, parameter) => {
    const e = refusal(raw);
    expect({ code: e.code, parameter: e.parameter ?? '' }).toEqual({ code, parameter });
    expect(e.kind).toBe('validation');
    expect(e.message).toMatch(/\.$/);
  });

  it('never repeats the offending value', () => {
    const e = refusal(utf8(envelope('sale', '{"payment":{"cardNumber":"4111111111111111\\u0000"}}')));
    expect(e.parameter).toBe('payment.cardNumber');
    expect(JSON.stringify({ m: e.message, p: e.parameter, pr: e.problems })).not.toContain('4111');
    const n = refusal(utf8('{"pan":41111111111111111111}'));
    expect(JSON.stringify({ m: n.message, p: n.parameter })).not.toContain('4111');
  });

  it('shows a member name that is not plain as *', () => {
    expect(refusal(utf8('{"a b":{"c":"\\u0000"}}')).parameter).toBe('*.c');
    expect(render(['transaction-request'])).toBe('transaction-request');
    expect(render([])).toBe('body');
    expect(render(['transaction-request', 'sale', 'payment', 'split', 2, 'percentage'])).toBe('payment.split[2].percentage');
    expect(render([0, 'a'])).toBe('[0].a');
  });

  it('accepts a proto-like key only as a value', () => {
    expect(parseJsonBody(utf8('{"a":"__proto__","b":["constructor"]}'))).toEqual({ a: '__proto__', b: ['constructor'] });
  });

  describe('properties', () => {
    /** Any JSON value nested below `levels` arrays and objects. */
    const nested = (levels: number) =>
      fc
        .tuple(
          fc.jsonValue({ maxDepth: 2 }),
          fc.array(fc.boolean(), { minLength: levels, maxLength: levels }),
          fc.string({ unit: 'grapheme-ascii' }),
        )
        .map(([leaf, kinds, key]) => {
          let text = JSON.stringify(leaf) ?? 'null';
          for (const isArray of kinds) text = isArray ? `[${text}]` : `{${JSON.stringify(key)}:${text}}`;
          return text;
        });

    it('refuses anything deeper than MAX_DEPTH with a DomainError and nothing else', () => {
      fc.assert(
        fc.property(fc.integer({ min: MAX_DEPTH + 1, max: 3000 }).chain(nested), (text) => {
          expect(refusal(utf8(text)).code).toBe('904');
        }),
        { numRuns: 200 },
      );
    });

    it('parses, or refuses with a DomainError, any string of any unicode or bytes', () => {
      const anyText = fc.oneof(
        fc.string({ unit: 'binary' }),
        fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
        fc.jsonValue().map((v) => JSON.stringify(v)),
        fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', ':', ',', '1', 'e', '-', '.', 'u', 'd', '8', '0', ' ') }),
      );
      const asBytes = fc.oneof(
        anyText.map(utf8),
        fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
      );
      fc.assert(
        fc.property(asBytes, (raw) => {
          let value: unknown;
          try {
            value = parseJsonBody(raw);
          } catch (e) {
            expect(e).toBeInstanceOf(DomainError);
            return;
          }
          // What is accepted is what JSON.parse reads from it (a fraction as its text), and clean.
          expectSameReading(value, JSON.parse(new TextDecoder().decode(raw)));
          expect(() => walk(value)).not.toThrow();
        }),
        { numRuns: 2000 },
      );
    });

    it('accepts every JSON value of clean strings and exact numbers within the depth', () => {
      const clean = fc
        .string({ unit: 'grapheme' })
        .filter((s) => !/[\u0000-\u001f]/.test(s) && !['__proto__', 'constructor', 'prototype'].includes(s));
      const value = fc.letrec((tie) => ({
        v: fc.oneof(
          { depthSize: 'small', maxDepth: 6 },
          clean,
          fc.integer(),
          fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d) || Number.isSafeInteger(d)),
          fc.boolean(),
          fc.constant(null),
          fc.array(tie('v')),
          fc.dictionary(clean, tie('v')),
        ),
      })).v;
      fc.assert(
        fc.property(value, (v) => {
          const text = JSON.stringify(v);
          expectSameReading(parseJsonBody(utf8(text)), JSON.parse(text));
        }),
        { numRuns: 500 },
      );
    });
  });
});

/** `actual` equals JSON.parse's `parsed`, except that a non-integer-looking number may be its text. */
function expectSameReading(actual: unknown, parsed: unknown): void {
  if (typeof parsed === 'number' && typeof actual === 'string') {
    expect(actual).toMatch(/[.eE]/);
    expect(Number(actual)).toBe(parsed);
  } else if (Array.isArray(parsed)) {
    expect(Array.isArray(actual)).toBe(true);
    expect((actual as unknown[]).length).toBe(parsed.length);
    parsed.forEach((p, i) => expectSameReading((actual as unknown[])[i], p));
  } else if (typeof parsed === 'object' && parsed !== null) {
    expect(Object.keys(actual as object)).toEqual(Object.keys(parsed));
    for (const k of Object.keys(parsed)) expectSameReading((actual as Record<string, unknown>)[k], (parsed as Record<string, unknown>)[k]);
  } else {
    expect(actual).toEqual(parsed);
  }
}

describe('altered', () => {
  it.each([
    ['0', false],
    ['-0', false],
    ['12.5', false],
    ['0.1', false],
    ['1e3', false],
    ['1E+21', false],
    ['9007199254740991', false],
    ['123456789012345.5', false],
    ['1234567890123456.7', true],
    ['1.5e-7', false],
    ['100000000000000000000', false],
    ['5e-324', false],
    ['9007199254740993', true],
    ['1e400', true],
    ['1e-400', true],
    ['0.30000000000000004', false],
    ['0.300000000000000041', true],
  ])('%s: %p', (literal, expected) => {
    expect(altered(literal)).toBe(expected);
  });
});

describe('firstInvalidUtf8', () => {
  it.each([
    [[0x41, 0xc3, 0xa9], 3],
    [[0x41, 0xff], 1],
    [[0xe0, 0x80, 0x80], 0],
    [[0xed, 0xa0, 0x80], 0],
    [[0xf4, 0x90, 0x80, 0x80], 0],
    [[0xf0, 0x9f, 0x98, 0x80, 0x80], 4],
    [[0xe2, 0x82], 0],
    [[0xc2], 0],
  ])('%p → %i', (bytes, at) => {
    expect(firstInvalidUtf8(Uint8Array.from(bytes))).toBe(at);
  });
});
