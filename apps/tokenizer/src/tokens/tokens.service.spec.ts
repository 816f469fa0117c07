import type { TokenCardRow } from '@app/vault-store';
import { tokenViewOf } from '@app/contracts';

describe('tokenViewOf', () => {
  it('sends the masked number under both its names, so an api one release behind still renders BIN', () => {
    const row: TokenCardRow = {
      token: 't',
      masked: '411111******1111',
      holder: 'A',
      exp_year: 2030,
      exp_month: 1,
      brand: 'visa',
      created_at: new Date(0),
      billing: null,
    };
    const view = tokenViewOf(row);
    expect(view.maskedNumber).toBe('411111******1111');
    expect(view.bin).toBe('411111******1111');
  });
});
