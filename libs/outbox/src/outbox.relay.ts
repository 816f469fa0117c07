import { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { OutboxRepository } from '@app/persistence';
import { safeErrorText } from '@app/platform/safe-error';
import { measureOutboxLagWith } from './outbox-metrics';
import { withTraceparent } from '@app/platform/tracing';

export type Publish = (event: string, id: string, payload: unknown) => Promise<unknown>;

/**
 * Moves committed outbox events to their streams. Each event is published with its outbox id, so
 * publishing it again (a crash between publish and mark, two relays) within the dedup window
 * (EVENT_DEDUP_WINDOW_S) adds nothing; past it, the consumers' own keys make a second run change
 * nothing. While Redis is down the publish fails, the batch rolls back, and the next tick tries
 * again: nothing is lost, and the relay catches up by itself when Redis returns.
 */
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private again = false;
  /** A poke has already brought the next pass forward. */
  private poked = false;

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly publish: Publish,
    private readonly opts: { intervalMs: number; batchSize: number; pokeDelayMs: number },
  ) {}

  onApplicationBootstrap(): void {
    // The process that relays is the one that reports how far behind the relay is.
    measureOutboxLagWith(() => this.outbox.oldestUnpublishedAgeSeconds());
    this.schedule(0);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /**
   * Called after a commit that wrote events: the next pass runs within `pokeDelayMs` rather than
   * at the next tick. The short wait lets the events of the commits around it go out in the same
   * pass, so their consumers get them in bursts: a pass, and every wake-up of a consumer, costs
   * about the same for one event as for twenty.
   */
  poke(): void {
    if (this.running) this.again = true;
    else if (!this.poked) {
      this.poked = true;
      this.schedule(this.opts.pokeDelayMs);
    }
  }

  /** Publishes one batch; returns how many events went out. */
  relayBatch(): Promise<number> {
    // In parallel: one Redis round trip per batch, not per event. A failure rolls the batch back;
    // its events that did go out are published again under the same id, which dedups them.
    return this.outbox.publishBatch(this.opts.batchSize, async (rows) => {
      // Each event goes out in the trace of the change that wrote it.
      await Promise.all(rows.map((r) => withTraceparent(traceparentOf(r.payload), () => this.publish(r.event, r.id, r.payload))));
    });
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.poked = false;
      this.running = this.drain().finally(() => {
        this.running = undefined;
        const next = this.again ? this.opts.pokeDelayMs : this.opts.intervalMs;
        // A pass already due soon: a poke in the meantime must not put it off.
        this.poked = this.again;
        this.again = false;
        this.schedule(next);
      });
    }, delayMs);
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopped && (await this.relayBatch()) === this.opts.batchSize);
    } catch (e) {
      this.logger.warn(`outbox relay paused: ${safeErrorText(e)}`);
    }
  }
}

function traceparentOf(payload: unknown): string | undefined {
  const t = (payload as { traceparent?: unknown } | null)?.traceparent;
  return typeof t === 'string' ? t : undefined;
}
