import { DomainError } from '@app/contracts';
import { readEnvelope } from './envelope';

const verification = { merchantId: 'm', merchantKey: 'k' };
const ops = ['tokencard', 'tokenCard'] as const;

function failure(body: unknown) {
  try {
    readEnvelope(body, ops);
  } catch (e) {
    const d = e as DomainError;
    return { code: d.code, parameter: d.parameter, message: d.message };
  }
  throw new Error('expected the envelope to be rejected');
}

describe('readEnvelope', () => {
  it('accepts either operation alias and returns its body', () => {
    for (const op of ops) {
      const envelope = readEnvelope({ 'transaction-request': { version: '1.0.0', verification, [op]: { a: 1 } } }, ops);
      expect(envelope).toEqual({ merchantId: 'm', merchantKey: 'k', operation: op, body: { a: 1 } });
    }
  });

  it('ignores key order', () => {
    const envelope = readEnvelope({ 'transaction-request': { tokencard: {}, verification, version: '1.0.0' } }, ops);
    expect(envelope.operation).toBe('tokencard');
  });

  it.each([
    ['not an object', [], '901', 'transaction-request'],
    ['no root', { other: {} }, '901', 'transaction-request'],
    ['no version', { 'transaction-request': { verification, tokencard: {} } }, '903', 'version'],
    ['wrong version', { 'transaction-request': { version: '2.0.0', verification, tokencard: {} } }, '902', 'version'],
    ['numeric version', { 'transaction-request': { version: 1, verification, tokencard: {} } }, '902', 'version'],
    ['no verification', { 'transaction-request': { version: '1.0.0', tokencard: {} } }, '903', 'verification'],
    [
      'no merchantKey',
      { 'transaction-request': { version: '1.0.0', verification: { merchantId: 'm' }, tokencard: {} } },
      '903',
      'verification.merchantKey',
    ],
    ['no operation', { 'transaction-request': { version: '1.0.0', verification } }, '901', 'transaction-request'],
    [
      'two operations',
      { 'transaction-request': { version: '1.0.0', verification, tokencard: {}, tokenCard: {} } },
      '901',
      'transaction-request',
    ],
    ['foreign operation', { 'transaction-request': { version: '1.0.0', verification, sale: {} } }, '901', 'sale'],
    ['operation not an object', { 'transaction-request': { version: '1.0.0', verification, tokencard: 'x' } }, '904', 'tokencard'],
  ])('rejects %s with code %s naming %s', (_name, body, code, parameter) => {
    expect(failure(body)).toMatchObject({ code, parameter });
  });
});
