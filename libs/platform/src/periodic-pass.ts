/**
 * A background pass run every so often, never two at once, that shutdown waits for: the shape
 * of the sweepers that repair what a crash left behind (pending sales, deliveries without a job).
 */
export class PeriodicPass {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;

  constructor(private readonly pass: () => Promise<number>) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.run(), intervalMs);
    this.timer.unref();
  }

  /** Runs one pass now (or joins the one in flight); resolves with what it did. */
  run(): Promise<number> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
