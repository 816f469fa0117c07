import fc from 'fast-check';
import { TEST_CARDS } from '@app/card';
import { SaleDto } from './transactions/sale.dto';
import { ReportDto, TransactionOperationDto } from './transactions/operations.dto';
import { TokenAddDto, TokenRetrieveDto } from './tokens/token.dto';
import { EnvelopeHeaderDto } from './envelope/envelope';
import { classValidatorErrors, problemsOf } from './envelope/validate';
import { instantiate, passes } from './envelope/wire-fields';

type Plain = Record<string, unknown>;

const validSale = (): Plain => ({
  order: { reference: 'A-1', totalAmount: 150000 },
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
    split: [
      { recipient: 'r1', percentage: '10' },
      { recipient: 'r2', amount: 100 },
    ],
  },
  billing: { name: 'Maria', state: 'SP', postalCode: '01310100', email: 'maria@example.com' },
  urlReturn: 'https://merchant.example/listener',
  fraud: 'false',
});

/** Values of every kind a field may be given, valid somewhere and wrong elsewhere. */
const anyValue = fc.oneof(
  fc.constantFrom(
    undefined,
    null,
    '',
    ' ',
    'x',
    'true',
    'false',
    true,
    false,
    0,
    1,
    -1,
    2,
    13,
    1.5,
    '1.5',
    '12',
    '986',
    'BRA',
    'SP',
    '203012',
    '202001',
    '123',
    '12345',
    TEST_CARDS.visa,
    TEST_CARDS.amex,
    '4111111111111112',
    'ab'.repeat(32),
    'visa',
    'amex',
    'https://a.example/',
    'ftp://a/',
    '52580F07-80FD-3241-DAE2-BDC38138193A',
    {},
    [],
    [{}],
    [null],
    ['x'],
    '1.0.0',
  ),
  fc.string({ maxLength: 70 }),
  fc.integer(),
  fc.dictionary(
    fc.constantFrom('percentage', 'amount', 'recipient', 'liable', 'name'),
    fc.constantFrom<unknown>('10', 5, 'x', null, true),
    { maxKeys: 3 },
  ),
);

/** Sets `value` at a path of `body` (creating objects on the way), or deletes it for undefined. */
function setAt(body: Plain, path: readonly string[], value: unknown): void {
  let at: Plain = body;
  for (const k of path.slice(0, -1)) {
    if (typeof at[k] !== 'object' || at[k] === null) at[k] = {};
    at = at[k] as Plain;
  }
  if (value === undefined) delete at[path[path.length - 1]];
  else at[path[path.length - 1]] = value;
}

const SALE_PATHS = [
  ['order'],
  ['order', 'reference'],
  ['order', 'totalAmount'],
  ['payment'],
  ['billing'],
  ['urlReturn'],
  ['fraud'],
  ...[
    'acquirer',
    'method',
    'amount',
    'currency',
    'country',
    'numberOfPayments',
    'groupNumber',
    'departureTax',
    'softDescriptor',
    'flag',
    'saveCreditCard',
    'generateToken',
    'tokenCard',
    'cardToken',
    'cardNumber',
    'cardHolder',
    'cardExpirationDate',
    'cardSecurityCode',
    'split',
  ].map((k) => ['payment', k]),
  ['payment', 'split', '0'],
  ['payment', 'split', '1', 'percentage'],
  ['payment', 'split', '0', 'amount'],
  ['payment', 'split', '1', 'liable'],
  ...['name', 'state', 'postalCode', 'email', 'phone', 'country'].map((k) => ['billing', k]),
];

/**
 * The fast path and class-validator itself must agree on every body: same checks, same verdict.
 * (class-validator's own "nested property must be an object" for a field sent as "" is not a
 * problem: "" is an absent field on this wire; only the fields' constraints are.)
 */
function agree(cls: new () => object, body: Plain): void {
  const instance = instantiate(cls, body) as Plain;
  expect(passes(cls, instance)).toBe(problemsOf(classValidatorErrors(instance), '').length === 0);
}

describe('passes() and class-validator agree', () => {
  it('on a valid sale', () => {
    const instance = instantiate(SaleDto, validSale()) as unknown as Plain;
    expect([passes(SaleDto, instance), classValidatorErrors(instance)]).toEqual([true, []]);
    expect(passes(SaleDto, instantiate(SaleDto, { ...validSale(), fraud: 'maybe' }) as unknown as Plain)).toBe(false);
  });

  it('on any sale with up to four fields changed to any value', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...SALE_PATHS), anyValue), { minLength: 1, maxLength: 4 }), (changes) => {
        const body = validSale();
        for (const [path, value] of changes) setAt(body, path, value);
        agree(SaleDto, body);
      }),
      { numRuns: 3000 },
    );
  });

  it.each<[string, new () => object, string[]]>([
    ['capture/cancel', TransactionOperationDto, ['transactionId', 'amount']],
    ['report', ReportDto, ['transactionId', 'reference']],
    ['tokencard', TokenAddDto, ['cardNumber', 'cardHolder', 'cardExpirationDate', 'cardSecurityCode', 'flag', 'billing']],
    ['retrieve-token', TokenRetrieveDto, ['token', 'tokenCard']],
    ['envelope', EnvelopeHeaderDto, ['version', 'verification']],
  ])('on any %s body', (_name, cls, keys) => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...keys), anyValue), (body) => agree(cls, body as Plain)),
      { numRuns: 1500 },
    );
  });
});
