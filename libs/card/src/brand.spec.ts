import fc from 'fast-check';
import { Brand, brandByPrefix, detectBrand, normalizeFlag } from './brand';

const pad = (prefix: string, length = 16) => prefix.padEnd(length, '0');

describe('detectBrand', () => {
  it.each<[string, Brand]>([
    ['4111111111111111', 'visa'],
    ['4012888888881881', 'visa'],
    ['4222222222222', 'visa'],
    ['5555555555554444', 'mastercard'],
    ['2223000048400011', 'mastercard'],
    ['378282246310005', 'amex'],
    ['371449635398431', 'amex'],
    ['30569309025904', 'diners'],
    ['36227206271667', 'diners'],
    ['6011111111111117', 'discover'],
    ['6445644564456445', 'discover'],
    ['3530111333300000', 'jcb'],
    ['6362970000457013', 'elo'],
    ['5067224275805500', 'elo'],
    ['6062825624254001', 'hipercard'],
    ['5078601870000127985', 'aura'],
  ])('%s is %s', (pan, brand) => {
    expect(detectBrand(pan)).toBe(brand);
  });

  // Each of these prefixes is inside a range another scheme claims too; the specific one wins.
  it.each<[string, Brand]>([
    ['401178', 'elo'],
    ['431274', 'elo'],
    ['457632', 'elo'],
    ['504175', 'elo'],
    ['506699', 'elo'],
    ['506778', 'elo'],
    ['509999', 'elo'],
    ['627780', 'elo'],
    ['636368', 'elo'],
    ['650031', 'elo'],
    ['650035', 'elo'],
    ['650598', 'elo'],
    ['651652', 'elo'],
    ['655058', 'elo'],
    ['384100', 'hipercard'],
    ['384140', 'hipercard'],
    ['384160', 'hipercard'],
    ['637095', 'hipercard'],
    ['606282', 'hipercard'],
    ['506698', 'aura'],
    ['506779', 'aura'],
    ['650034', 'discover'],
    ['650599', 'discover'],
    ['655020', 'discover'],
    ['622126', 'discover'],
    ['622925', 'discover'],
    ['384101', 'diners'],
    ['305999', 'diners'],
    ['401177', 'visa'],
    ['401180', 'visa'],
    ['222100', 'mastercard'],
    ['272099', 'mastercard'],
    ['352800', 'jcb'],
    ['358999', 'jcb'],
  ])('prefix %s is %s', (prefix, brand) => {
    expect(detectBrand(pad(prefix))).toBe(brand);
  });

  it.each(['622125', '622926', '306000', '272100', '222099', '352799', '359000', '643999', '100000', '999999', '560000'])(
    'prefix %s is no supported brand',
    (prefix) => expect(detectBrand(pad(prefix))).toBeNull(),
  );

  it.each<[string, number]>([
    ['37828224631000', 14],
    ['3782822463100050', 16],
    ['55555555555544', 14],
    ['555555555555444400', 18],
    ['636297000045701', 15],
  ])('refuses %s: no such %i-digit card exists for its prefix', (pan) => {
    expect(detectBrand(pan)).toBeNull();
    expect(brandByPrefix(pan)).not.toBeNull();
  });

  it('is total: any string gives a brand or null, never an exception', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: 25 })), (s) => {
        const brand = detectBrand(s);
        expect(brand === null || typeof brand === 'string').toBe(true);
      }),
    );
  });

  it('never answers for anything but 12 to 19 digits', () => {
    const notACardNumber = fc
      .oneof(fc.string(), fc.string({ unit: fc.constantFrom(...'0123456789') }))
      .filter((s) => !/^\d{12,19}$/.test(s));
    fc.assert(fc.property(notACardNumber, (s) => expect(detectBrand(s)).toBeNull()));
  });
});

describe('normalizeFlag', () => {
  it.each<[string, Brand | null]>([
    ['visa', 'visa'],
    ['VISA', 'visa'],
    [' Visa ', 'visa'],
    ['mastercard', 'mastercard'],
    ['Master', 'mastercard'],
    ['MasterCard', 'mastercard'],
    ['amex', 'amex'],
    ['American Express', 'amex'],
    ['americanexpress', 'amex'],
    ['elo', 'elo'],
    ['diners', 'diners'],
    ['Diners Club', 'diners'],
    ['dinersclub', 'diners'],
    ['discover', 'discover'],
    ['JCB', 'jcb'],
    ['aura', 'aura'],
    ['hipercard', 'hipercard'],
    ['Hypercard', 'hipercard'],
    ['maestro', null],
    ['', null],
    ['toString', null],
    ['__proto__', null],
  ])('%p → %p', (flag, brand) => {
    expect(normalizeFlag(flag)).toBe(brand);
  });
});
