import type { TokenView } from '@app/contracts';
import { toTokenResponse } from './token-response';

const view: TokenView = {
  token: 'tok',
  maskedNumber: '411111******1111',
  bin: '411111******1111',
  holder: 'A B',
  expMonth: 12,
  expYear: 2030,
  brand: 'visa',
  createdAt: 1_700_000_000,
  billing: null,
};

describe('toTokenResponse across a rolling deploy', () => {
  it('renders BIN from a tokenizer of this release', () => {
    expect(toTokenResponse(view).BIN).toBe('411111******1111');
  });

  it('renders BIN from a tokenizer of the previous release, which sends only `bin`', () => {
    const previous = { ...view, maskedNumber: undefined } as unknown as TokenView;
    expect(toTokenResponse(previous).BIN).toBe('411111******1111');
  });
});
