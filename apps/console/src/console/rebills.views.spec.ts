import { RebillPeriods } from '@app/contracts';
import type { CycleRow } from '@app/persistence';
import { periodText, rebillPage, rebillsPage, RebillShown } from './rebills.views';

const HOSTILE = `<img src=x onerror="alert(1)">'&`;
const rebill: RebillShown = {
  id: '0f6b1c7e-8a57-4f61-9b0b-6a9f0c1d2e3f',
  merchant_id: '00000000-0000-4000-8000-000000000001',
  merchant: '1234567890',
  reference: HOSTILE,
  state: 'suspended',
  period: RebillPeriods.Monthly,
  frequency: 1,
  date_start: '2070-01-10',
  date_end: '2070-12-31',
  retry_days: [1, 3, 5],
  due_shift_days: 0,
  acquirer: 26,
  instalments: 1,
  currency: '986',
  amount: '1990',
  token_card: '',
  masked_card: '411111******1111',
  brand: 'visa',
  card_expires: '2035-12-31',
  details: { method: 1 },
  url_return: null,
  next_cycle: 2,
  next_attempt: 3,
  next_due_at: null,
  open_transaction_id: null,
  suspended_reason: 'retries_exhausted',
  version: 7,
  created_at: new Date('2026-11-27T10:00:00Z'),
  updated_at: new Date('2026-11-27T10:00:00Z'),
};
const frame = { title: 'Rebills', csrf: 't', operator: { name: 'vic', role: 'viewer' as const } };
const charge = (over: Partial<CycleRow & { returnMessage: string }>): CycleRow & { returnMessage: string } => ({
  rebill_id: rebill.id,
  cycle: 1,
  attempt: 0,
  transaction_id: 'aaaaaaaa-0000-4000-8000-000000000001',
  cycle_date: '2070-01-10',
  merchant_initiated: true,
  status: 8,
  error_code: '',
  processor: { tid: 't', returnCode: '00', returnMessage: 'Approved' },
  amount: '1990',
  created_at: new Date('2026-11-27T10:00:00Z'),
  returnMessage: 'Approved',
  ...over,
});

describe("the console's Rebills pages", () => {
  it('escape the merchant-given reference in the list and on the page', () => {
    const list = rebillsPage(frame, {
      query: { merchant: '1234567890' },
      merchant: '1234567890',
      rows: [{ ...rebill, cycles_charged: 1 }],
    });
    const detail = rebillPage(frame, { rebill, charges: [] });
    for (const out of [list, detail]) {
      expect(out).not.toContain('<img');
      expect(out).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&amp;');
    }
  });

  it('show the schedule, where it stands and the card-expiry flag, and every charge with its status, codes and retries', () => {
    const list = rebillsPage(frame, {
      query: { merchant: '1234567890' },
      merchant: '1234567890',
      rows: [{ ...rebill, cycles_charged: 1 }],
    });
    expect(list).toContain('every month');
    expect(list).toContain('1 of 12');
    expect(list).toContain('retries_exhausted');
    expect(list).toContain('card expires before end');
    expect(list).toContain('411111******1111');
    const detail = rebillPage(frame, {
      rebill,
      charges: [
        charge({}),
        charge({
          cycle: 2,
          cycle_date: '2070-02-10',
          status: 4,
          error_code: '',
          processor: { returnCode: '05' },
          returnMessage: 'Do not honor',
        }),
        charge({ cycle: 2, attempt: 3, cycle_date: '2070-02-10', status: 4, error_code: '911', processor: { returnCode: '54' } }),
      ],
    });
    expect(detail).toContain('1 of 12 (3 charges tried)');
    expect(detail).toContain('8 APPROVED');
    expect(detail).toContain('4 UNAUTHORIZED');
    expect(detail).toContain('Do not honor');
    expect(detail).toContain('The card is expired.');
    expect(detail).toContain('retry 3');
    // A third retry is due 5 days after its cycle's date.
    expect(detail).toContain('2070-02-15');
    expect(detail).toContain('AAAAAAAA-0000-4000-8000-000000000001');
  });

  it('ask for a merchant before listing, and say nothing of a card expiring after the schedule', () => {
    expect(rebillsPage(frame, { query: {}, rows: [] })).toContain('Enter a merchant id');
    expect(rebillPage(frame, { rebill: { ...rebill, card_expires: '2079-12-31' }, charges: [] })).not.toContain('card expires before end');
  });

  it('say a period in words', () => {
    expect(periodText(RebillPeriods.Weekly, 2)).toBe('every 2 weeks');
  });
});
