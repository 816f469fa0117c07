import { DataSource } from 'typeorm';
import { AuditTrail } from '@app/operators';
import { AuditEventsRepository } from '@app/persistence';
import { hasCardLikeNumber } from '@app/platform/safe-error';
import { CANARY_CARDS } from '../fixtures/cards';

jest.setTimeout(60_000);

/**
 * What the audit trail stores (real Postgres, the run's migrated database): whatever an operator
 * or a caller puts in a target, an option or a reason, the row holds no card number in any of
 * the shapes the logs already censor, and a byte Postgres refuses in text (NUL) does not turn a
 * hostile input into "the audit trail is unavailable".
 */
describe('AuditTrail (real Postgres)', () => {
  let db: DataSource;
  let audit: AuditTrail;
  const card = Object.values(CANARY_CARDS)[0] as string;
  const grouped = [card.replace(/(\d{4})(?=\d)/g, '$1 '), card.replace(/(\d{4})(?=\d)/g, '$1-')];

  beforeAll(async () => {
    db = new DataSource({ type: 'postgres', url: process.env.DATABASE_URL });
    await db.initialize();
    audit = new AuditTrail(new AuditEventsRepository(db));
  });

  afterAll(async () => {
    await db?.destroy();
  });

  const stored = async (id: string) =>
    (await db.query(`SELECT target, detail::text AS detail FROM audit_events WHERE id = $1`, [id]))[0] as {
      target: string | null;
      detail: string;
    };

  it.each(grouped)('keeps no grouped card number (%s) in the target, the detail or a reason', async (pan) => {
    const id = await audit.append(
      { action: 'probe', target: `delivery ${pan}`, origin: 'test', detail: { name: `shop ${pan}`, note: { text: pan } } },
      'attempted',
    );
    const row = await stored(id);
    expect(hasCardLikeNumber(row.target ?? '')).toBe(false);
    expect(hasCardLikeNumber(row.detail)).toBe(false);
    await audit.refuse({ action: 'probe', origin: 'test' }, `reason ${pan}`);
    const [last] = await db.query(`SELECT detail::text AS detail FROM audit_events ORDER BY id DESC LIMIT 1`);
    expect(hasCardLikeNumber(last.detail)).toBe(false);
  });

  it('records a target or detail holding a NUL character instead of failing as unavailable', async () => {
    const appended = audit.append({ action: 'probe', target: 'a\u0000b', origin: 'test', detail: { name: 'x\u0000y' } }, 'refused');
    await expect(appended).resolves.toMatch(/^\d+$/);
    const row = await stored(await appended);
    expect(row.target).toBe('a\uFFFDb');
    expect(row.detail).toContain('x\uFFFDy');
  });

  it('keeps no credential pasted by mistake into an argument, an option or a URL: operator token, merchant key, webhook secret', async () => {
    const { randomBytes } = await import('node:crypto');
    const credentials = [
      `op_${randomBytes(32).toString('base64url')}`,
      `mk_${randomBytes(32).toString('base64url')}`,
      `whsec_${randomBytes(32).toString('base64')}`,
    ];
    const id = await audit.append(
      {
        action: 'probe',
        target: credentials[0],
        origin: 'test',
        detail: { args: credentials, name: credentials[1], note: `secret was ${credentials[2]}` },
      },
      'attempted',
    );
    const row = await stored(id);
    for (const c of credentials) {
      expect(row.target).not.toContain(c.slice(0, 12));
      expect(row.detail).not.toContain(c.slice(0, 12));
    }
  });
});
