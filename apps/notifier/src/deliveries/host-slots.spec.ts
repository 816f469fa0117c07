import { HostSlots } from './host-slots';

const tick = () => new Promise((r) => setImmediate(r));

describe('HostSlots', () => {
  it('grants up to the cap at once, per host', async () => {
    const slots = new HostSlots(2, 0);
    const a = await slots.acquire('a');
    const b = await slots.acquire('a');
    expect(a && b).toBeTruthy();
    expect(await slots.acquire('a')).toBeUndefined(); // no wait allowed: over the cap at once
    expect(await slots.acquire('other')).toBeDefined(); // another host is not affected
    a!();
    expect(await slots.acquire('a')).toBeDefined();
  });

  it('hands a released slot to the longest waiter, so the cap never grows', async () => {
    const slots = new HostSlots(1, 10_000);
    const first = (await slots.acquire('h'))!;
    const order: string[] = [];
    const w1 = slots.acquire('h').then((r) => (order.push('w1'), r));
    await tick();
    expect(order).toEqual([]);
    first();
    first(); // a second release of the same slot changes nothing
    const r1 = await w1;
    expect(order).toEqual(['w1']);
    expect(slots.activeFor('h')).toBe(1);
    r1!();
    expect(slots.activeFor('h')).toBe(0);
  });

  it("lets callers wait only as long as the host's pace allows within maxWaitMs, then refuses at once", async () => {
    jest.useFakeTimers();
    try {
      // Slots assumed held 100 ms until one is given back: 2 slots take a waiter every 50 ms,
      // so 5 waiters fit in 250 ms and a 6th is refused without waiting.
      const slots = new HostSlots(2, 250);
      await slots.acquire('h');
      await slots.acquire('h');
      const waiting = Array.from({ length: 5 }, () => slots.acquire('h'));
      expect(await slots.acquire('h')).toBeUndefined();
      jest.advanceTimersByTime(250);
      expect(await Promise.all(waiting)).toEqual([undefined, undefined, undefined, undefined, undefined]);
      expect(slots.activeFor('h')).toBe(2);
    } finally {
      jest.useRealTimers();
    }
  });

  it('keeps fewer waiters for a slow host: its slots are held longer', async () => {
    let now = 0;
    const slots = new HostSlots(2, 250, () => now);
    for (let i = 0; i < 30; i++) {
      const release = (await slots.acquire('slow'))!;
      now += 1000;
      release();
    }
    await slots.acquire('slow');
    await slots.acquire('slow');
    // One waiter would wait ~500 ms (1 s per slot, 2 slots): more than 250 ms, so none waits.
    expect(await slots.acquire('slow')).toBeUndefined();
  });
});

describe('HostSlots.deferMs', () => {
  it('spaces deferrals of a busy host at the pace it drains, so a backlog does not come back at once', async () => {
    let now = 1_000_000;
    const slots = new HostSlots(4, 0, () => now);
    // Slots held 1 s each, many times over: the smoothed hold nears 1 s, one attempt per 250 ms.
    for (let i = 0; i < 40; i++) {
      const release = (await slots.acquire('slow'))!;
      now += 1000;
      release();
    }
    await Promise.all([1, 2, 3, 4].map(() => slots.acquire('slow')));
    expect(await slots.acquire('slow')).toBeUndefined();
    const delays = Array.from({ length: 40 }, () => slots.deferMs('slow'));
    // The k-th deferral is due about k × hold / cap from now, within the ±20 % jitter.
    delays.forEach((d, k) => {
      expect(d).toBeGreaterThanOrEqual(Math.floor(0.8 * (k + 1) * 249));
      expect(d).toBeLessThanOrEqual(Math.ceil(1.2 * (k + 1) * 250));
    });
    // Time passing moves the tail up: a deferral made later is not pushed behind the old ones.
    now += 20_000;
    expect(slots.deferMs('slow')).toBeLessThanOrEqual(300);
    expect(slots.deferMs('unknown host')).toBeGreaterThanOrEqual(100);
  });
});
