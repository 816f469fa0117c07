import type { AuthorizeRequest, SaleSnapshot } from '@app/contracts';
import { recordedRow, viewOfRow } from './payment-answers';

const ID = '0b4f4f7c-59a3-4c7a-9a51-1c1bdf0e0a01';
const MERCHANT = '5a1c0c62-3b6f-4d0c-8d1e-2f3a4b5c6d7e';

const snapshot = (over: Partial<SaleSnapshot> = {}): SaleSnapshot => ({
  id: ID,
  merchantId: MERCHANT,
  reference: 'A-1',
  operation: 'sale',
  status: 0,
  statusVersion: 1,
  acquirer: 26,
  method: 1,
  instalments: 1,
  currency: '986',
  amount: 10_000,
  capturedAmount: 0,
  cancelledAmount: 0,
  maskedCard: '411111******1111',
  brand: 'visa',
  errorCode: '',
  processor: {},
  details: {
    terms: { kind: 'credit', brand: 'visa', fee: { ratePpm: 20_000, fixed: 10 } },
    rebill: { id: 'REBILL-1', cycle: 2, attempt: 1 },
  },
  createdAt: '2026-01-02T03:04:05.678Z',
  ...over,
});

const request = (recorded: unknown): AuthorizeRequest =>
  ({ transactionId: ID.toUpperCase(), merchantId: MERCHANT, capture: true, saveCard: false, recorded }) as AuthorizeRequest;

describe('recordedRow', () => {
  it("decides a first delivery from the API's snapshot, and answers it as the API would", () => {
    const row = recordedRow(request(JSON.parse(JSON.stringify(snapshot()))));
    expect(row).toMatchObject({ id: ID, merchant_id: MERCHANT, status: 0, status_version: 1, amount: '10000', charged_back_amount: '0' });
    const view = viewOfRow(row!);
    expect(view).toMatchObject({ id: ID.toUpperCase(), amount: 10_000, createdAt: '2026-01-02T03:04:05.678Z' });
    expect(view.rebillCharge).toEqual({ rebillId: 'REBILL-1', cycle: 2, attempt: 1 });
    // Fee 2 % + 10 cents of 10 000: 210, all the merchant's.
    expect(view.split).toMatchObject({ gross: 10_000, fee: 210, merchant: { net: 9_790 } });
  });

  it('reads the sale back for a snapshot of another sale or merchant, or of a sale that moved on', () => {
    expect(recordedRow(request(snapshot({ id: '1b4f4f7c-59a3-4c7a-9a51-1c1bdf0e0a01' })))).toBeUndefined();
    expect(recordedRow(request(snapshot({ merchantId: '6a1c0c62-3b6f-4d0c-8d1e-2f3a4b5c6d7e' })))).toBeUndefined();
    expect(recordedRow(request(snapshot({ status: 8, statusVersion: 2 })))).toBeUndefined();
    expect(recordedRow(request(undefined))).toBeUndefined();
  });

  it('reads the sale back for a job queued before the snapshot, which carried the table row', () => {
    const oldRow = {
      id: ID,
      merchant_id: MERCHANT,
      status: 0,
      status_version: 1,
      amount: '10000',
      details: {},
      created_at: '2026-01-02T03:04:05.678Z',
    };
    expect(recordedRow(request(oldRow))).toBeUndefined();
  });
});
