import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DeliveriesRepository, PublishedCursor } from '@app/persistence';
import { PeriodicPass, safeErrorText } from '@app/platform';
import { NotifierConfig } from '../config/notifier.config';
import { DeliveriesService } from './deliveries.service';
import { eventsSwept } from './delivery-metrics';

/** Status changes looked at per page; a pass reads pages until it has caught up. */
const PAGE = 500;

/**
 * No status change is lost to a lost event. The outbox is the record of every change; its event
 * on the stream is only the fast path. An event Redis forgot (a restart without persistence, a
 * failover to a replica that lagged), or one whose retries ran out while Postgres was down (a
 * dead letter), leaves a change with no delivery. Each pass reads the changes published between
 * where the last pass stopped and WEBHOOK_EVENT_SWEEP_GRACE_S ago, and delivers each one that has
 * no delivery yet exactly as its event would have (DeliveriesService.onStatusChanged: the delivery's
 * unique key makes a late event, or a second replica's sweep, change nothing).
 *
 * The cursor starts WEBHOOK_EVENT_SWEEP_HORIZON_S back when the notifier starts, and moves past a
 * page only when every change in it was handled: a pass that fails (Postgres down) leaves it, and
 * the next tries the same changes again.
 */
@Injectable()
export class EventSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(EventSweeper.name);
  private readonly periodic = new PeriodicPass(() => this.pass());
  private cursor: PublishedCursor;
  private stopping = false;

  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly service: DeliveriesService,
    private readonly config: NotifierConfig,
  ) {
    this.cursor = { publishedAt: new Date(Date.now() - config.eventSweepHorizonS * 1000).toISOString(), id: ZERO_UUID };
  }

  onApplicationBootstrap(): void {
    this.periodic.start(this.config.sweepIntervalMs);
  }

  async onApplicationShutdown(): Promise<void> {
    // A pass catching up stops after its page; the next notifier goes on from its own horizon.
    this.stopping = true;
    await this.periodic.stop();
  }

  /** One pass; resolves with how many changes it delivered. */
  sweep(): Promise<number> {
    return this.periodic.run();
  }

  private async pass(): Promise<number> {
    let delivered = 0;
    try {
      const upTo = new Date(Date.now() - this.config.eventSweepGraceS * 1000);
      while (!this.stopping) {
        const page = await this.deliveries.publishedStatusChanges(this.cursor, upTo, PAGE);
        // A change with no listener (no urlReturn) never has a delivery, and is not lost.
        const lost = page.flatMap((c) => (c.payload?.urlReturn && c.payload.view ? [c.payload] : []));
        // Side by side: each destination's and merchant's slots bound what reaches one listener, and
        // a change over them goes to the delivery queue rather than waiting here.
        const outcomes = await Promise.allSettled(lost.map((e) => this.service.onStatusChanged(e)));
        const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
        delivered += outcomes.length - rejected.length;
        if (rejected.length) throw rejected[0].reason;
        if (page.length) this.cursor = { publishedAt: page[page.length - 1].publishedAt, id: page[page.length - 1].id };
        if (page.length < PAGE) break;
      }
    } catch (e) {
      this.logger.warn(`event sweep stopped (the next pass goes on from the same place): ${safeErrorText(e)}`);
    }
    if (delivered) {
      eventsSwept.inc(delivered);
      this.logger.warn({ delivered }, 'status changes with no delivery (their events were lost): delivered from the outbox');
    }
    return delivered;
  }
}

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
