const verification = { merchantId: '4830175925', merchantKey: 'mk_…' };

export const TokenAddExample = {
  'transaction-request': {
    version: '1.0.0',
    verification,
    tokencard: {
      cardNumber: '4111111111111111',
      cardHolder: 'MARIA SILVA',
      cardExpirationDate: '203012',
      cardSecurityCode: '123',
      flag: 'visa',
      billing: { name: 'Maria Silva', email: 'maria@example.com', city: 'São Paulo', state: 'SP', postalCode: '01310100', country: 'BRA' },
    },
  },
};

export const TokenRetrieveExample = {
  'transaction-request': { version: '1.0.0', verification, 'retrieve-token': { token: '9f2c…64 hex chars' } },
};

export const TokenResponseSchema = {
  type: 'object',
  example: {
    TokenCard: '3b1f6c0e5d2a4f8b9c7e1d0a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e',
    BIN: '411111******1111',
    CardHolder: 'MARIA SILVA',
    Month: '12',
    Year: '2030',
    Flag: 'visa',
    Created_at: '1795000000',
    Client: { name: 'Maria Silva', email: 'maria@example.com' },
  },
};
