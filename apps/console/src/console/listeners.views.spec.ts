import type { ListenerPageRow } from '@app/persistence';
import { listenersPage, ListenerView } from './listeners.views';

const base: ListenerPageRow = {
  merchant_id: '00000000-0000-4000-8000-000000000001',
  origin: 'https://hooks.example.com:443',
  state: 'enabled',
  disabled_at: null,
  disabled_by: null,
  disabled_by_name: null,
  failing_since: null,
  last_success_at: null,
  last_failure_at: null,
  consecutive_failures: 0,
  created_at: new Date(0),
  updated_at: new Date(0),
  held: 0,
  host: 'hooks.example.com',
  rank: 1,
};
const row = (over: Partial<ListenerView['row']> = {}): ListenerView['row'] => ({ ...base, merchant: '1234567890', masked: false, ...over });
const operator = { title: 'Listeners', csrf: 't', operator: { name: 'ana', role: 'operator' as const } };
const viewer = { ...operator, operator: { name: 'vic', role: 'viewer' as const } };

describe("the console's Listeners page", () => {
  it('offers Disable on an enabled listener, Enable on a disabled one, and Release held where an enabled one holds deliveries', () => {
    const out = listenersPage(operator, {
      query: {},
      canAct: true,
      rows: [
        { row: row({ state: 'disabled', disabled_by: 'auto', disabled_at: new Date('2026-11-25T10:00:00Z'), held: 3 }) },
        {
          row: row({ origin: 'https://b.example:443' }),
          rates: { merchant_id: base.merchant_id, origin: 'https://b.example:443', attempts_1h: 4, ok_1h: 3, attempts_24h: 8, ok_24h: 8 },
        },
        { row: row({ origin: 'https://c.example:443', held: 1 }) },
      ],
    });
    expect(out.match(/action="\/console\/listeners\/enable"/g)).toHaveLength(2);
    expect(out.match(/action="\/console\/listeners\/disable"/g)).toHaveLength(2);
    expect(out).toContain('by auto (kept failing) at 2026-11-25 10:00:00Z');
    expect(out).toContain('75% of 4');
    expect(out).toContain('100% of 8');
    expect(out).toContain('Release held');
  });

  it('shows a viewer no buttons, and a card-masked origin none either (its form would name another listener)', () => {
    expect(listenersPage(viewer, { query: {}, canAct: false, rows: [{ row: row() }] })).not.toContain('<button class="disable"');
    const masked = listenersPage(operator, {
      query: {},
      canAct: true,
      rows: [{ row: row({ origin: 'https://411111******1111.example:443', masked: true }) }],
    });
    expect(masked).not.toContain('/console/listeners/disable');
    expect(masked).toContain('—');
  });
});
