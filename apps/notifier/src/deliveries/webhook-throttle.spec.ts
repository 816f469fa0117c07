import { ThrottleSettings } from './webhook-throttle';

describe('ThrottleSettings (the notifier-side cache of a merchant throttle)', () => {
  it('reads each merchant once per TTL, concurrent deliveries sharing the read in flight', async () => {
    const reads: string[] = [];
    const settings = new ThrottleSettings(async (id) => (reads.push(id), id === 'm1' ? 5 : undefined), 50);
    expect(await Promise.all([settings.perSOf('m1'), settings.perSOf('m1'), settings.perSOf('m2')])).toEqual([5, 5, null]);
    expect(await settings.perSOf('m1')).toBe(5);
    expect(reads).toEqual(['m1', 'm2']);
    await new Promise((r) => setTimeout(r, 60));
    expect(await settings.perSOf('m1')).toBe(5);
    expect(reads).toEqual(['m1', 'm2', 'm1']);
  });

  it('does not keep a failed read: the next delivery reads again', async () => {
    let fail = true;
    const settings = new ThrottleSettings(async () => {
      if (fail) throw new Error('postgres down');
      return 3;
    }, 10_000);
    await expect(settings.perSOf('m1')).rejects.toThrow('postgres down');
    fail = false;
    expect(await settings.perSOf('m1')).toBe(3);
  });
});
