import { PublishedCursor, PublishedSweep, PublishedSweepOptions } from './published-sweep';

type Row = PublishedCursor;

/** Rows 1..n published one millisecond apart, read through the keyset the sweep hands over. */
function outbox(n: number) {
  const rows: Row[] = Array.from({ length: n }, (_, i) => ({
    id: `00000000-0000-0000-0000-${String(i + 1).padStart(12, '0')}`,
    publishedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)).toISOString(),
  }));
  const reads: PublishedCursor[] = [];
  const read = (after: PublishedCursor, _upTo: Date, limit: number) => {
    reads.push(after);
    const later = (r: Row) => r.publishedAt > after.publishedAt || (r.publishedAt === after.publishedAt && r.id > after.id);
    return Promise.resolve(rows.filter(later).slice(0, limit));
  };
  return { rows, reads, read };
}

function sweepOf(o: ReturnType<typeof outbox>, repair: (row: Row) => Promise<boolean>, extra: Partial<PublishedSweepOptions<Row>> = {}) {
  const logged: string[] = [];
  const sweep = new PublishedSweep<Row>({
    graceS: 0,
    horizonS: 10 * 365 * 86_400,
    intervalMs: 60_000,
    logger: { warn: (_f, m) => void logged.push(m), error: (_f, m) => void logged.push(m) },
    repairedMessage: 'repaired',
    page: 10,
    read: o.read,
    repair,
    ...extra,
  });
  return { sweep, logged };
}

describe('PublishedSweep', () => {
  it('reads page after page until it has caught up, and repairs each row once', async () => {
    const o = outbox(25);
    const seen: string[] = [];
    const { sweep } = sweepOf(o, (r) => (seen.push(r.id), Promise.resolve(true)));
    expect(await sweep.run()).toBe(25);
    expect(seen).toEqual(o.rows.map((r) => r.id));
    expect(o.reads).toHaveLength(3);
    // The next pass starts after the last row: nothing again.
    expect(await sweep.run()).toBe(0);
  });

  it('rows that needed nothing are passed over, not counted', async () => {
    const o = outbox(12);
    const { sweep } = sweepOf(o, (r) => Promise.resolve(r.id.endsWith('2')));
    expect(await sweep.run()).toBe(2);
  });

  it('when every row fails (Postgres down), the next pass tries the same rows, however many passes it takes', async () => {
    const o = outbox(5);
    let down = true;
    const tried: string[] = [];
    const { sweep, logged } = sweepOf(
      o,
      (r) => (tried.push(r.id), down ? Promise.reject(new Error('Postgres is down')) : Promise.resolve(true)),
    );
    for (let i = 0; i < 8; i++) expect(await sweep.run()).toBe(0);
    expect(logged.join()).toContain('Postgres is down');
    down = false;
    expect(await sweep.run()).toBe(5);
    expect(tried.filter((id) => id === o.rows[0].id)).toHaveLength(9);
  });

  it('a row that keeps failing beside rows that are repaired is given up on, and the sweep goes past it', async () => {
    const o = outbox(30);
    const poison = o.rows[3].id;
    const given: number[] = [];
    const done = new Set<string>();
    const { sweep, logged } = sweepOf(
      o,
      (r) => {
        if (r.id === poison) return Promise.reject(new Error('malformed'));
        const fresh = !done.has(r.id);
        done.add(r.id);
        return Promise.resolve(fresh);
      },
      { counted: (outcome, n) => void (outcome === 'given_up' && given.push(n)) },
    );
    let repaired = 0;
    for (let i = 0; i < 6; i++) repaired += await sweep.run();
    expect(done.size).toBe(29);
    expect(repaired).toBe(29);
    expect(given).toEqual([1]);
    expect(logged.some((m) => m.startsWith('sweep gave up on an outbox row'))).toBe(true);
  });

  it('stops after the page in hand when the app stops', async () => {
    const o = outbox(50);
    let rows = 0;
    let sweep: PublishedSweep<Row> | undefined = undefined;
    ({ sweep } = sweepOf(o, () => {
      if (++rows === 15) void sweep!.beforeApplicationShutdown();
      return Promise.resolve(true);
    }));
    expect(await sweep.run()).toBe(20);
  });
});
