import fc from 'fast-check';
import { DomainError } from '@app/contracts';
import { TEST_CARDS } from '@app/card';
import { parseSale, withoutExponent } from './sale.dto';
import { parseReport, parseTransactionOperation } from './operations.dto';

type JsonObject = Record<string, unknown>;

const sale = (over: { order?: JsonObject; payment?: JsonObject; rest?: JsonObject } = {}): JsonObject => ({
  order: { reference: 'A-1', totalAmount: 150000, ...over.order },
  payment: {
    acquirer: 26,
    method: 1,
    amount: 150000,
    currency: '986',
    country: 'BRA',
    numberOfPayments: 1,
    flag: 'visa',
    cardHolder: 'MARIA',
    cardNumber: TEST_CARDS.visa,
    cardSecurityCode: '123',
    cardExpirationDate: '203012',
    ...over.payment,
  },
  ...over.rest,
});

function problems(op: JsonObject): { code: string; parameter: string; message: string }[] {
  try {
    parseSale(op);
  } catch (e) {
    return (e as DomainError).problems;
  }
  throw new Error('expected the sale to be rejected');
}

describe('parseSale (SaleDto)', () => {
  it('reads the inline-card sale of docs/merchants/sales.md', () => {
    const input = parseSale(sale({ rest: { urlReturn: 'https://merchant.example/listener?x=1', fraud: 'false' } }));
    expect(input).toMatchObject({
      order: { reference: 'A-1', totalAmount: 150000 },
      payment: {
        acquirer: 26,
        method: 1,
        amount: 150000,
        currency: '986',
        country: 'BRA',
        numberOfPayments: 1,
        card: { cardNumber: TEST_CARDS.visa },
      },
      urlReturn: 'https://merchant.example/listener?x=1',
      fraud: false,
    });
  });

  it('reads the SDK shape: numbers as JSON numbers, only a token, fraud "true"', () => {
    const token = 'ab'.repeat(32);
    const op = {
      order: { reference: 'SDK', totalAmount: 990 },
      payment: { acquirer: 26, method: 1, amount: 990, currency: 986, country: 'bra', tokenCard: token },
      fraud: 'true',
    };
    const input = parseSale(op);
    expect(input).toMatchObject({ payment: { tokenCard: token, currency: '986', country: 'BRA' }, fraud: true });
    expect(input.payment.card).toBeUndefined();
    const { tokenCard: _sent, ...withoutTokenCard } = op.payment;
    expect(parseSale({ ...op, payment: { ...withoutTokenCard, cardToken: token.toUpperCase() } }).payment.tokenCard).toBe(token);
  });

  it('reads every value given as a string (plugin style) the same as numbers', () => {
    const strings = JSON.parse(
      JSON.stringify(sale({ payment: { saveCreditCard: 'true', generateToken: 'false' } }), (_k, v) =>
        typeof v === 'number' ? String(v) : v,
      ),
    );
    expect(parseSale(strings)).toEqual(parseSale(sale({ payment: { saveCreditCard: true, generateToken: false } })));
  });

  it.each<[string, JsonObject, string, string]>([
    ['a missing reference', sale({ order: { reference: undefined as never } }), '903', 'order.reference'],
    ['a decimal total', sale({ order: { totalAmount: '1500.00' } }), '904', 'order.totalAmount'],
    ['an unknown acquirer', sale({ payment: { acquirer: 1000 } }), '904', 'payment.acquirer'],
    ['a departure tax above the amount', sale({ payment: { departureTax: 150001 } }), '904', 'payment.departureTax'],
    ['an unknown method', sale({ payment: { method: 5 } }), '904', 'payment.method'],
    ['instalments on method 1', sale({ payment: { numberOfPayments: 2 } }), '904', 'payment.numberOfPayments'],
    ['instalments on debit', sale({ payment: { method: 4, numberOfPayments: 3 } }), '904', 'payment.numberOfPayments'],
    ['one instalment on method 2', sale({ payment: { method: 2, numberOfPayments: 1 } }), '904', 'payment.numberOfPayments'],
    ['13 instalments', sale({ payment: { method: 3, numberOfPayments: 13 } }), '904', 'payment.numberOfPayments'],
    ['amount differs from total', sale({ payment: { amount: 1 } }), '904', 'payment.amount'],
    ['a letter currency', sale({ payment: { currency: 'BRL' } }), '904', 'payment.currency'],
    ['a two-letter payment country', sale({ payment: { country: 'BR' } }), '904', 'payment.country'],
    ['a non-numeric group number', sale({ payment: { groupNumber: 'x1' } }), '904', 'payment.groupNumber'],
    ['a negative departure tax', sale({ payment: { departureTax: -1 } }), '904', 'payment.departureTax'],
    ['a long soft descriptor', sale({ payment: { softDescriptor: 'x'.repeat(23) } }), '904', 'payment.softDescriptor'],
    ['a Luhn-invalid card', sale({ payment: { cardNumber: '4111111111111112' } }), '910', 'payment.cardNumber'],
    ['an expired card', sale({ payment: { cardExpirationDate: '202001' } }), '911', 'payment.cardExpirationDate'],
    ['a flag of another brand', sale({ payment: { flag: 'amex' } }), '912', 'payment.flag'],
    ['a 5-digit security code', sale({ payment: { cardSecurityCode: '12345' } }), '913', 'payment.cardSecurityCode'],
    [
      'no card and no token',
      sale({ payment: { cardNumber: undefined as never, cardHolder: undefined as never, cardExpirationDate: undefined as never } }),
      '903',
      'payment.cardNumber',
    ],
    ['a token with a card number', sale({ payment: { tokenCard: 'ab'.repeat(32) } }), '904', 'payment.cardNumber'],
    [
      'a malformed token',
      { ...sale(), payment: { acquirer: 26, method: 1, amount: 150000, currency: '986', country: 'BRA', tokenCard: 'xyz' } },
      '904',
      'payment.tokenCard',
    ],
    ['a bad flag boolean', sale({ payment: { generateToken: 'yes' } }), '904', 'payment.generateToken'],
    ['a bad billing state', sale({ rest: { billing: { state: 'São Paulo' } } }), '904', 'billing.state'],
    ['a bad billing postal code', sale({ rest: { billing: { postalCode: '01310-100' } } }), '904', 'billing.postalCode'],
    ['a bad billing phone', sale({ rest: { billing: { phone: '(11) 9999' } } }), '904', 'billing.phone'],
    ['a bad billing e-mail', sale({ rest: { billing: { email: 'maria' } } }), '904', 'billing.email'],
    ['an ftp urlReturn', sale({ rest: { urlReturn: 'ftp://merchant.example/' } }), '904', 'urlReturn'],
    ['a urlReturn with credentials', sale({ rest: { urlReturn: 'https://u:p@merchant.example/' } }), '904', 'urlReturn'],
    ['a relative urlReturn', sale({ rest: { urlReturn: '/listener' } }), '904', 'urlReturn'],
    ['a split that is not an array', sale({ payment: { split: {} } }), '904', 'payment.split'],
    [
      'a split percentage that is not a number',
      sale({ payment: { split: [{ recipient: 'r1', percentage: '12%' }] } }),
      '904',
      'payment.split[0].percentage',
    ],
    [
      'a split amount that is not integer cents',
      sale({ payment: { split: [{ recipient: 'r1', amount: 10.5 }] } }),
      '904',
      'payment.split[0].amount',
    ],
    ['a split entry that is not an object', sale({ payment: { split: ['r1'] } }), '904', 'payment.split[0]'],
  ])('rejects %s (code %s, %s)', (_name, op, code, parameter) => {
    const found = problems(op);
    expect(found).toContainEqual(expect.objectContaining({ code, parameter }));
    expect(JSON.stringify(found)).not.toContain(TEST_CARDS.visa);
    for (const p of found) expect(p.message).toMatch(/\.$/);
  });

  it('treats a blank security code as absent, as every other optional field', () => {
    expect(parseSale(sale({ payment: { cardSecurityCode: '' } })).payment.card).toEqual({
      cardNumber: TEST_CARDS.visa,
      cardHolder: 'MARIA',
      cardExpirationDate: '203012',
      cardSecurityCode: undefined,
    });
  });

  it('names every split entry that is not an object, and still validates the others', () => {
    const found = problems(sale({ payment: { split: [null, { percentage: 'x' }, [], 5] } }));
    expect(found.map((p) => p.parameter)).toEqual([
      'payment.split[0]',
      'payment.split[2]',
      'payment.split[3]',
      'payment.split[1].percentage',
    ]);
  });

  it('refuses a 64 KiB array where an object or a short list belongs without validating each element', () => {
    const many = Array.from({ length: 21_000 }, () => ({}));
    for (const [over, parameter] of [
      [{ payment: { split: many } }, 'payment.split'],
      [{ rest: { billing: many } }, 'billing'],
    ] as const) {
      const started = process.hrtime.bigint();
      expect(problems(sale(over as never))).toContainEqual(expect.objectContaining({ code: '904', parameter }));
      expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(100);
    }
    expect(problems({ order: many, payment: {} })).toContainEqual(
      expect.objectContaining({ parameter: 'order', message: 'order must be an object.' }),
    );
  });

  it.each([
    ['1e1', '10'],
    ['1.25E-1', '0.125'],
    ['-2.5e2', '-250'],
    ['1e-3', '0.001'],
    ['12.5', '12.5'],
    ['0e0', '0'],
    ['33.33', '33.33'],
    ['1e', '1e'],
  ])('reads the split percentage %s as %s', (text, expected) => expect(withoutExponent(text)).toBe(expected));

  it('lists every problem at once', () => {
    const found = problems(
      sale({ order: { totalAmount: 100 }, payment: { currency: 'x', country: 'yy' }, rest: { billing: { email: 'no' } } }),
    );
    expect(found.map((p) => p.parameter)).toEqual(
      expect.arrayContaining(['payment.amount', 'payment.currency', 'payment.country', 'billing.email']),
    );
  });

  it('leaves the money rules of a split to the split engine (missing values, ranges, precision)', () => {
    const input = parseSale(
      sale({
        payment: {
          split: [
            { percentage: '12.345' },
            { recipient: 'r2', amount: 0 },
            { recipient: 'r3' },
            { recipient: 'r4', percentage: 150, amount: -1 },
          ],
        },
      }),
    );
    expect(input.payment.split).toEqual([
      expect.objectContaining({ recipient: undefined, percentage: '12.345' }),
      expect.objectContaining({ recipient: 'r2', amount: 0 }),
      expect.not.objectContaining({ percentage: expect.anything(), amount: expect.anything() }),
      expect.objectContaining({ recipient: 'r4', percentage: '150', amount: -1 }),
    ]);
  });

  it('keeps split flags and defaults (liable defaults to true)', () => {
    const input = parseSale(
      sale({
        payment: {
          split: [
            { recipient: 'r1', percentage: '12.5' },
            { recipient: 'r2', amount: '300', liable: 'false', charge_processing_fee: true, is_gross_amount: 'true' },
          ],
        },
      }),
    );
    expect(input.payment.split).toEqual([
      {
        recipient: 'r1',
        percentage: '12.5',
        liable: true,
        chargeProcessingFee: false,
        chargeRecipientProcessingFee: false,
        isGrossAmount: false,
      },
      { recipient: 'r2', amount: 300, liable: false, chargeProcessingFee: true, chargeRecipientProcessingFee: false, isGrossAmount: true },
    ]);
  });

  it('reads any amount the same from a number or its digits', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 40 }), (cents) => {
        const a = parseSale(sale({ order: { totalAmount: cents }, payment: { amount: cents } }));
        const b = parseSale(sale({ order: { totalAmount: String(cents) }, payment: { amount: String(cents) } }));
        expect(a.payment.amount).toBe(cents);
        expect(b).toEqual(a);
      }),
    );
  });

  it('keeps any percentage with up to 2 decimals as its exact decimal text', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 10000 }), (bp) => {
        const text = `${Math.floor(bp / 100)}.${String(bp % 100).padStart(2, '0')}`;
        const input = parseSale(sale({ payment: { split: [{ recipient: 'r', percentage: text }] } }));
        expect(input.payment.split![0].percentage).toBe(text);
      }),
    );
  });
});

describe('capture, cancel and report bodies', () => {
  it('upper-cases the transaction id and reads an optional amount', () => {
    expect(parseTransactionOperation({ transactionId: '52580f07-80fd-3241-dae2-bdc38138193a', amount: '100' })).toEqual({
      transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A',
      amount: 100,
    });
    expect(parseTransactionOperation({ transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A' })).toEqual({
      transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A',
      amount: undefined,
    });
  });

  it.each([
    [{}, 'transactionId'],
    [{ transactionId: 'nope' }, 'transactionId'],
    [{ transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A', amount: 0 }, 'amount'],
  ])('rejects %j naming %s', (op, parameter) => {
    expect(() => parseTransactionOperation(op as JsonObject)).toThrow(expect.objectContaining({ parameter }));
  });

  it('reports by id or by reference, not both', () => {
    expect(parseReport({ reference: 'A-1' })).toEqual({ reference: 'A-1' });
    expect(parseReport({ transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A' })).toEqual({
      transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A',
    });
    expect(() => parseReport({ reference: 'A-1', transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A' })).toThrow(
      expect.objectContaining({ parameter: 'reference' }),
    );
  });
});
