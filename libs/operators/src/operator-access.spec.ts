import { auditDetail, looksLikeOperatorToken, newOperatorToken, operatorTokenHash, roleAllows } from './operator-access';
import { errorClassOf, RefusedError } from './audit-trail';

describe('operator access', () => {
  it('roles are ordered: viewer < operator < admin', () => {
    expect(roleAllows('viewer', 'viewer')).toBe(true);
    expect(roleAllows('viewer', 'operator')).toBe(false);
    expect(roleAllows('operator', 'viewer')).toBe(true);
    expect(roleAllows('operator', 'admin')).toBe(false);
    expect(roleAllows('admin', 'operator')).toBe(true);
  });

  it('tokens are op_ + 43 base64url characters; only their SHA-256 is kept', () => {
    const { token, hash } = newOperatorToken();
    expect(token).toMatch(/^op_[A-Za-z0-9_-]{43}$/);
    expect(looksLikeOperatorToken(token)).toBe(true);
    expect(hash.equals(operatorTokenHash(token))).toBe(true);
    expect(hash).toHaveLength(32);
    for (const bad of [undefined, '', 'op_short', token + 'x', token.replace('op_', 'mk_')])
      expect(looksLikeOperatorToken(bad)).toBe(false);
  });

  it('an audit detail drops secret-named keys, removes Luhn-valid card-like numbers and cuts long text', () => {
    const d = auditDetail({
      merchant: '1234567897',
      token: 'op_x',
      webhookSecret: 's',
      note: 'card 4111111111111111 here',
      amount: '100000000000001',
      long: 'y'.repeat(500),
      n: 3,
      skip: undefined,
    });
    expect(d).toEqual({
      merchant: '1234567897',
      note: 'card [card-like number] here',
      amount: '100000000000001',
      long: `${'y'.repeat(200)}…`,
      n: 3,
    });
  });

  it('an error class is the error name, never its message', () => {
    expect(errorClassOf(new RefusedError('x'))).toBe('RefusedError');
    expect(errorClassOf(new TypeError('secret 4111111111111111'))).toBe('TypeError');
    expect(errorClassOf('boom')).toBe('string');
  });
});
