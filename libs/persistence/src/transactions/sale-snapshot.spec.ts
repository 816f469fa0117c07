import { saleDetailsJson, saleDetailsOf } from './sale-details';
import { pendingRowOf, saleSnapshotOf } from './sale-snapshot';
import type { TransactionRow } from './transaction-rows';

const terms = { kind: 'credit' as const, brand: 'visa', fee: { ratePpm: 20_000, fixed: 10 } };

/** A sale as INSERT ... RETURNING gives it back: status 0, first version. */
const pending = (over: Partial<TransactionRow> = {}): TransactionRow => ({
  id: '0b4f4f7c-59a3-4c7a-9a51-1c1bdf0e0a01',
  merchant_id: '5a1c0c62-3b6f-4d0c-8d1e-2f3a4b5c6d7e',
  reference: 'A-1',
  operation: 3,
  status: 0,
  status_version: 1,
  acquirer: 26,
  method: 1,
  instalments: 2,
  currency: '986',
  amount: '15000',
  captured_amount: '0',
  cancelled_amount: '0',
  masked_card: '411111******1111',
  brand: 'visa',
  token_card: null,
  error_code: '',
  processor: {},
  details: { softDescriptor: 'SHOP', fraud: false, terms },
  url_return: 'https://shop.example/hook',
  created_at: new Date('2026-01-02T03:04:05.678Z'),
  charged_back_amount: '0',
  pending_operation_id: null,
  pending_kind: null,
  pending_amount: null,
  ...over,
});

describe('saleDetailsOf', () => {
  it('reads back what saleDetailsJson wrote', () => {
    const details = {
      softDescriptor: 'SHOP',
      groupNumber: 'G1',
      departureTax: 300,
      billing: { name: 'Maria' },
      fraud: true,
      terms: {
        ...terms,
        split: [
          {
            recipient: 'r',
            liable: true,
            chargeProcessingFee: true,
            chargeRecipientProcessingFee: false,
            isGrossAmount: false,
            amount: 100,
          },
        ],
      },
      rebill: { id: 'AB-1', cycle: 3, attempt: 1 },
    };
    expect(saleDetailsOf(JSON.parse(saleDetailsJson(details)))).toEqual(details);
  });

  it('leaves out a field of another type, and a rebill charge missing its cycle or attempt', () => {
    expect(saleDetailsOf({ softDescriptor: 7, terms: 'x', rebill: { id: 'AB-1', cycle: 3 } })).toEqual({});
    expect(saleDetailsOf({ rebill: { id: 'AB-1', cycle: '3', attempt: 0 } })).toEqual({});
  });

  it('reads a record that is not an object as no details', () => {
    for (const stored of [null, undefined, 'x', 3, []]) expect(saleDetailsOf(stored)).toEqual({});
  });
});

describe('saleSnapshotOf and pendingRowOf', () => {
  it('a sale just recorded: its snapshot gives its row back, column for column', () => {
    const row = pending({ token_card: 'tok-1', processor: { returnCode: '' } });
    const snapshot = saleSnapshotOf(row);
    expect(snapshot).toMatchObject({
      merchantId: row.merchant_id,
      operation: 'sale',
      statusVersion: 1,
      amount: 15_000,
      capturedAmount: 0,
      tokenCard: 'tok-1',
      urlReturn: 'https://shop.example/hook',
      createdAt: '2026-01-02T03:04:05.678Z',
      details: { softDescriptor: 'SHOP', fraud: false, terms },
    });
    // Through the queue, as JSON.
    expect(pendingRowOf(JSON.parse(JSON.stringify(snapshot)))).toEqual(row);
  });

  it('absent columns read as absent fields: no token, no listener', () => {
    const bare = saleSnapshotOf(pending({ url_return: null }));
    expect([bare.tokenCard, bare.urlReturn]).toEqual([undefined, undefined]);
    expect(pendingRowOf(bare)).toMatchObject({ token_card: null, url_return: null });
  });

  it('no row from a snapshot of a sale past its first version', () => {
    expect(pendingRowOf(saleSnapshotOf(pending({ status: 8, status_version: 2, captured_amount: '15000' })))).toBeUndefined();
    expect(pendingRowOf(saleSnapshotOf(pending({ status_version: 2 })))).toBeUndefined();
  });
});
