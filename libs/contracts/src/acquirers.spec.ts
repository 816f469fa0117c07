import { connectorFor } from './acquirers';

describe('connectorFor', () => {
  it('sends every sale of a test merchant to the sandbox, whatever the code', () => {
    for (const code of [1, 5, 26, 27, 33]) expect(connectorFor('test', code, [])).toEqual({ connector: 'sandbox' });
  });

  it("sends a production merchant's sale to the code's connector when it has an account there", () => {
    expect(connectorFor('production', 26, [26])).toEqual({ connector: 'cielo' });
    expect(connectorFor('production', 27, [26, 27])).toEqual({ connector: 'erede' });
  });

  it('refuses a code without a connector, and one the merchant has no account at, saying which', () => {
    const unknown = connectorFor('production', 5, [26, 27]);
    expect(unknown).toEqual({
      refused: expect.stringMatching(/payment\.acquirer 5 has no connector.*26 \(Cielo API 3\.0\) or 27 \(e\.Rede\)/),
    });
    expect(connectorFor('production', 27, [26])).toEqual({
      refused: expect.stringMatching(/27 \(e\.Rede\): this merchant has no account/),
    });
  });
});
