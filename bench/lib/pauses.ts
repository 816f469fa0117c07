import { PauseWindow, startPauseMonitors, takePauseWindow } from '@app/platform/pauses';
import { BenchStack } from './stack';

/**
 * The pauses behind a run's tail, per process: each app's window (pause_window_seconds on its
 * /metrics: event-loop delay and GC pauses since the previous scrape) and the load generator's
 * own (this process: a generator that is late to send or to read an answer adds to the p99 it
 * reports). `start` opens the windows, `end` reads them: the run between the two alone.
 */
export interface ProcessPauses extends PauseWindow {
  process: string;
}

async function scrape(app: { name: string; port: number }): Promise<ProcessPauses> {
  const text = await (await fetch(`http://127.0.0.1:${app.port}/metrics`)).text();
  const value = (source: string, stat: string): number => {
    const line = text
      .split('\n')
      .find((l) => l.startsWith('pause_window_seconds{') && l.includes(`source="${source}"`) && l.includes(`stat="${stat}"`));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : NaN;
  };
  const ms = (source: string, stat: string) => value(source, stat) * 1000;
  return {
    process: app.name,
    loop: { p50: ms('eventloop', 'p50'), p99: ms('eventloop', 'p99'), max: ms('eventloop', 'max') },
    gc: { count: value('gc', 'count'), sumMs: ms('gc', 'sum'), p99: ms('gc', 'p99'), max: ms('gc', 'max') },
  };
}

/** Opens a window in every app and in the generator. */
export async function startPauses(stack: BenchStack): Promise<void> {
  startPauseMonitors();
  takePauseWindow();
  await Promise.all(stack.apps.map(scrape));
}

/** What every app and the generator saw since startPauses. */
export async function endPauses(stack: BenchStack): Promise<ProcessPauses[]> {
  const generator: ProcessPauses = { process: 'generator', ...takePauseWindow() };
  return [...(await Promise.all(stack.apps.map(scrape))), generator];
}

const f = (n: number) => (n >= 10 ? n.toFixed(0) : n.toFixed(1));

/** One line: per process, the loop delay's p50/p99/max and the GC pauses (count, sum, max), in ms. */
export function pausesLine(all: ProcessPauses[]): string {
  return (
    '    pauses (ms): ' +
    all
      .map(
        (p) => `${p.process} loop ${f(p.loop.p50)}/${f(p.loop.p99)}/${f(p.loop.max)} gc ${p.gc.count}×=${f(p.gc.sumMs)} max ${f(p.gc.max)}`,
      )
      .join(' | ')
  );
}
