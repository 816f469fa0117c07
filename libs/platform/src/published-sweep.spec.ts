import { PublishedCursor, PublishedSweep } from './published-sweep';

/** Rows 1..n published one millisecond apart, read through the keyset the sweep hands over. */
function outbox(n: number) {
  const rows = Array.from({ length: n }, (_, i) => ({
    id: `00000000-0000-0000-0000-${String(i + 1).padStart(12, '0')}`,
    publishedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)).toISOString(),
  }));
  const reads: PublishedCursor[] = [];
  const read = (after: PublishedCursor, _upTo: Date, limit: number) => {
    reads.push(after);
    return Promise.resolve(
      rows.filter((r) => r.publishedAt > after.publishedAt || (r.publishedAt === after.publishedAt && r.id > after.id)).slice(0, limit),
    );
  };
  return { rows, reads, read };
}

const options = {
  graceS: 0,
  horizonS: 365 * 86_400 * 10,
  intervalMs: 60_000,
  logger: { warn: () => undefined },
  repairedMessage: 'repaired',
};

describe('PublishedSweep', () => {
  it('reads page after page until it has caught up, and repairs each row once', async () => {
    const o = outbox(25);
    const seen: string[] = [];
    const sweep = new PublishedSweep({
      ...options,
      page: 10,
      read: o.read,
      repair: (page) => (seen.push(...page.map((r) => r.id)), Promise.resolve(page.length)),
    });
    expect(await sweep.run()).toBe(25);
    expect(seen).toEqual(o.rows.map((r) => r.id));
    expect(o.reads).toHaveLength(3);
    // The next pass starts after the last row: nothing again.
    expect(await sweep.run()).toBe(0);
  });

  it('a failed repair leaves the cursor where it was: the next pass tries the same rows', async () => {
    const o = outbox(5);
    let fail = true;
    const warned: string[] = [];
    const tried: string[][] = [];
    const sweep = new PublishedSweep({
      ...options,
      logger: { warn: (_f: Record<string, unknown>, m: string) => void warned.push(m) },
      read: o.read,
      repair: (page) => {
        tried.push(page.map((r) => r.id));
        if (fail) return Promise.reject(new Error('Postgres is down'));
        return Promise.resolve(page.length);
      },
    });
    expect(await sweep.run()).toBe(0);
    expect(warned.join()).toContain('Postgres is down');
    fail = false;
    expect(await sweep.run()).toBe(5);
    expect(tried[1]).toEqual(tried[0]);
  });

  it('stops after the page in hand when the process stops', async () => {
    const o = outbox(50);
    let sweep: PublishedSweep<{ id: string; publishedAt: string }> | undefined = undefined;
    let pages = 0;
    sweep = new PublishedSweep({
      ...options,
      page: 10,
      read: o.read,
      repair: async (page) => {
        if (++pages === 2) void sweep!.onApplicationShutdown();
        return page.length;
      },
    });
    expect(await sweep.run()).toBe(20);
  });
});
