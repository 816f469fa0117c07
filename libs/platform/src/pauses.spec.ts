import { register } from 'prom-client';
import { startPauseMonitors, takePauseWindow } from './pauses';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const block = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until);
};
const maxOf = (text: string) => Number(/pause_window_seconds\{source="eventloop",stat="max"\} (\S+)/.exec(text)?.[1]);

describe('pause windows', () => {
  beforeAll(async () => {
    startPauseMonitors();
    await sleep(50);
  });

  it('sees the event loop held up within the window; the next window starts without it', async () => {
    takePauseWindow();
    await sleep(20);
    block(200);
    await sleep(20);
    const w = takePauseWindow();
    expect(w.loop.max).toBeGreaterThanOrEqual(190);
    expect(w.loop.p50).toBeLessThan(w.loop.max);
    await sleep(30);
    // A busy machine's scheduler may hold a process up too, but not for the 200 ms block again.
    expect(takePauseWindow().loop.max).toBeLessThan(150);
  });

  it('counts garbage-collection pauses', async () => {
    takePauseWindow();
    let kept = 0;
    for (let round = 0; round < 20; round++) {
      const garbage = Array.from({ length: 20_000 }, (_, i) => ({ i, s: `x${i}` }));
      kept += garbage.length;
      await sleep(1);
    }
    const { gc } = takePauseWindow();
    expect(kept).toBe(400_000);
    expect(gc.count).toBeGreaterThan(0);
    expect(gc.sumMs).toBeGreaterThan(0);
    expect(gc.max).toBeLessThanOrEqual(gc.sumMs);
  });

  it('exports the window on /metrics and starts a new one with each scrape', async () => {
    await register.metrics();
    await sleep(20);
    block(200);
    await sleep(20);
    const first = await register.metrics();
    expect(maxOf(first)).toBeGreaterThanOrEqual(0.19);
    expect(first).toMatch(/pause_window_seconds\{source="gc",stat="count"\} \d+/);
    await sleep(20);
    expect(maxOf(await register.metrics())).toBeLessThan(0.15);
  });
});
