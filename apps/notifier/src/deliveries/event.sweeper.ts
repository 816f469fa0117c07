import { Injectable, Logger } from '@nestjs/common';
import { DeliveriesRepository, PublishedStatusChange } from '@app/persistence';
import { PublishedSweep } from '@app/platform';
import { NotifierConfig } from '../config/notifier.config';
import { DeliveriesService } from './deliveries.service';
import { eventsSwept } from './delivery-metrics';

/**
 * No status change is lost to a lost event. The outbox is the record of every change; its event
 * on the stream is only the fast path. An event Redis forgot (a restart without persistence, a
 * failover to a replica that lagged), or one whose retries ran out while Postgres was down (a
 * dead letter), leaves a change with no delivery. Each pass reads the changes published from where
 * the last one stopped until WEBHOOK_EVENT_SWEEP_GRACE_S ago (PublishedSweep), and delivers each
 * one that has a listener and no delivery yet exactly as its event would have
 * (DeliveriesService.onStatusChanged: the delivery's unique key makes a late event, or a second
 * replica's sweep, change nothing).
 */
@Injectable()
export class EventSweeper extends PublishedSweep<PublishedStatusChange> {
  constructor(deliveries: DeliveriesRepository, service: DeliveriesService, config: NotifierConfig) {
    super({
      read: (after, upTo, limit) => deliveries.publishedStatusChanges(after, upTo, limit),
      // A change with no listener (no urlReturn) never has a delivery, and is not lost. The rows of
      // a page go side by side: each destination's and merchant's slots bound what reaches one
      // listener, and a change over them goes to the delivery queue rather than waiting here.
      repair: (c) => (c.payload?.urlReturn && c.payload.view ? service.onLostStatusChange(c.payload) : Promise.resolve(false)),
      counted: (outcome, rows) => eventsSwept.inc({ outcome: outcome === 'repaired' ? 'delivered' : outcome }, rows),
      graceS: config.eventSweepGraceS,
      horizonS: config.eventSweepHorizonS,
      intervalMs: config.sweepIntervalMs,
      logger: new Logger(EventSweeper.name),
      repairedMessage: 'status changes with no delivery (their events were lost): delivered from the outbox',
    });
  }
}
