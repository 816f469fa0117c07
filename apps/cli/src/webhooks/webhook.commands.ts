import { Command, CommandRunner, Option } from 'nest-commander';
import type { Queue } from 'bullmq';
import {
  DELIVERY_STATUSES,
  DeliveriesRepository,
  DeliveryStatus,
  MerchantsRepository,
  RecoverableStatus,
  RecoveriesRepository,
  RecoveryRow,
} from '@app/persistence';
import { originNamed } from '@app/webhooks';
import { queueOn } from '@app/messaging/queue-keys';
import { connectRedis, type RedisConnection } from '@app/platform';
import { DELIVERY_QUEUE, queueStartedRecovery, RECOVERY_QUEUE, replayDelivery } from '@app/webhooks/delivery';
import { newWebhookSecret } from '../merchants/merchant-credentials';
import { keyringSource } from '../keys/keyrings';
import { merchantOption, publicIdFor } from '../merchants/merchant-option';
import { CliConfig } from '../config/cli.config';
import { CliError, printJson, progress } from '../output';
import { Guarded } from '../operators/guarded';
import { OperatorSession } from '../operators/operator-session';

const STATUSES: readonly DeliveryStatus[] = DELIVERY_STATUSES;

/** A queue, connected only when a command queues something. */
class QueueRef {
  private queue?: Promise<Queue>;

  constructor(
    private readonly config: CliConfig,
    private readonly name: string,
  ) {}

  /** BullMQ is loaded on the first use: most commands queue nothing, and start faster without it. */
  get(): Promise<Queue> {
    this.queue ??= import('bullmq').then(
      ({ Queue }) =>
        new Queue(this.name, {
          ...queueOn(
            connectRedis(this.config.base.redis, { maxRetriesPerRequest: 3 }).on('error', () => undefined),
            this.config.base.queuePrefix,
            this.name,
          ),
        }),
    );
    return this.queue;
  }

  async close(): Promise<void> {
    if (!this.queue) return;
    const queue = await this.queue;
    await queue.close();
    (queue.opts.connection as RedisConnection).disconnect();
  }
}

/** The delivery queue (webhooks:replay --delivery, listener:enable). */
export class DeliveryQueueRef extends QueueRef {
  constructor(config: CliConfig) {
    super(config, DELIVERY_QUEUE);
  }
}

/** The recovery queue (webhooks:replay --merchant: the notifier runs the recovery). */
export class RecoveryQueueRef extends QueueRef {
  constructor(config: CliConfig) {
    super(config, RECOVERY_QUEUE);
  }
}

/** How often webhooks:replay --merchant looks at its recovery while it waits. */
const POLL_MS = 500;

@Guarded('viewer', 'webhooks:list')
@Command({ name: 'webhooks:list', description: "A merchant's webhook deliveries, newest first" })
export class WebhooksListCommand extends CommandRunner {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly merchants: MerchantsRepository,
  ) {
    super();
  }

  async run(_args: string[], o: { merchant?: string; status?: string; limit?: string }): Promise<void> {
    const merchantId = await merchantOption(this.merchants, o.merchant);
    if (o.status && !STATUSES.includes(o.status as DeliveryStatus)) throw new CliError(`--status must be one of ${STATUSES.join(', ')}`);
    const limit = Number(o.limit ?? 100);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new CliError('--limit must be a whole number from 1 to 10000');
    const publicId = await publicIdFor(this.merchants, merchantId);
    const rows = await this.deliveries.list({ merchantId, status: o.status as DeliveryStatus | undefined, limit });
    printJson(rows.map((r) => ({ ...r, merchant_id: publicId })));
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--status <status>', description: STATUSES.join('|') })
  parseStatus(v: string): string {
    return v;
  }

  @Option({ flags: '--limit <n>' })
  parseLimit(v: string): string {
    return v;
  }
}

@Guarded('operator', 'webhooks:replay')
@Command({
  name: 'webhooks:replay',
  description: 'Replay one delivery, or recover every failed delivery of a merchant (one listener with --origin) since a time',
})
export class WebhooksReplayCommand extends CommandRunner {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly queue: DeliveryQueueRef,
    private readonly recoveryQueue: RecoveryQueueRef,
    private readonly recoveries: RecoveriesRepository,
    private readonly merchants: MerchantsRepository,
    private readonly session: OperatorSession,
  ) {
    super();
  }

  async run(
    _args: string[],
    o: { delivery?: string; merchant?: string; since?: string; origin?: string; blocked?: boolean; wait?: boolean },
  ): Promise<void> {
    if (o.delivery) {
      const outcome = await replayDelivery(this.deliveries, await this.queue.get(), o.delivery);
      if (outcome === 'not_found') throw new CliError(`no delivery ${JSON.stringify(o.delivery)}`);
      if (outcome === 'not_replayable') throw new CliError('only a failed or blocked delivery can be replayed');
      printJson({ deliveryId: o.delivery.toLowerCase(), replay: outcome });
      return;
    }
    if (!o.merchant || !o.since) throw new CliError('give --delivery <id>, or --merchant <id> with --since <ISO time>');
    const merchantId = await merchantOption(this.merchants, o.merchant);
    const since = new Date(o.since);
    if (Number.isNaN(since.getTime()) || since.getUTCFullYear() < 1970 || since.getUTCFullYear() > 9999)
      throw new CliError('--since must be an ISO 8601 time, e.g. 2026-11-22T00:00:00Z');
    let origin: string | undefined;
    if (o.origin) {
      const named = originNamed(o.origin, await this.recoveries.listenerOrigins(merchantId));
      if ('problem' in named) throw new CliError(`--origin: ${named.problem}`);
      origin = named.origin;
    }
    const by = this.session.actor?.id;
    if (!by) throw new CliError('webhooks:replay --merchant needs an operator');
    const states: RecoverableStatus[] = o.blocked ? ['failed', 'blocked'] : ['failed'];
    const started = await this.recoveries.start({ merchantId, origin, since, states }, by);
    this.session.target = started.id;
    const queued = await queueStartedRecovery(await this.recoveryQueue.get(), started.id);
    // Started (committed) either way: with the queue down, the notifier's sweep queues it within a minute.
    progress({
      recoveryId: started.id,
      total: started.total,
      ...(queued ? {} : { queued: 'by the notifier within a minute (queue unreachable now)' }),
    });
    let r: RecoveryRow = started;
    let shown = -1;
    while (o.wait !== false && r.state === 'running') {
      await new Promise((done) => setTimeout(done, POLL_MS));
      r = (await this.recoveries.find(started.id)) ?? r;
      if (r.replayed !== shown) progress({ recoveryId: r.id, replayed: r.replayed, of: r.total });
      shown = r.replayed;
    }
    printJson({
      merchantId: await publicIdFor(this.merchants, merchantId),
      origin: origin ?? null,
      since: since.toISOString(),
      recoveryId: r.id,
      state: r.state,
      found: r.total,
      queued: r.replayed,
      skipped: r.skipped,
    });
  }

  @Option({ flags: '--delivery <id>' })
  parseDelivery(v: string): string {
    return v;
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--since <time>', description: 'ISO 8601' })
  parseSince(v: string): string {
    return v;
  }

  @Option({ flags: '--origin <origin>', description: "only this listener's: scheme://host:port, a delivery URL, or a host" })
  parseOrigin(v: string): string {
    return v;
  }

  @Option({ flags: '--blocked', description: 'also replay blocked deliveries (refused by the address guard)' })
  parseBlocked(): boolean {
    return true;
  }

  @Option({ flags: '--no-wait', description: 'print the recovery and return at once (the notifier runs it)' })
  parseNoWait(): boolean {
    return false;
  }
}

@Guarded('operator', 'webhooks:recover-cancel')
@Command({
  name: 'webhooks:recover-cancel',
  description: 'Cancel a running recovery (started by webhooks:replay --merchant or the console)',
})
export class WebhooksRecoverCancelCommand extends CommandRunner {
  constructor(
    private readonly recoveries: RecoveriesRepository,
    private readonly session: OperatorSession,
  ) {
    super();
  }

  async run(_args: string[], o: { id?: string }): Promise<void> {
    if (!o.id) throw new CliError('--id is required (the recovery id webhooks:replay printed)');
    const found = await this.recoveries.find(o.id);
    if (!found) throw new CliError(`--id: no recovery ${JSON.stringify(o.id)}`);
    this.session.target = found.id;
    const cancelled = await this.recoveries.cancel(found.id);
    if (!cancelled) throw new CliError(`recovery ${found.id} is ${found.state}, not running`);
    printJson({ recoveryId: cancelled.id, state: cancelled.state, replayed: cancelled.replayed, of: cancelled.total });
  }

  @Option({ flags: '--id <recovery>' })
  parseId(v: string): string {
    return v;
  }
}

@Guarded('admin', 'merchant:rotate-webhook-secret')
@Command({
  name: 'merchant:rotate-webhook-secret',
  description: 'New webhook secret; the old one keeps signing (as a second signature) for a grace period',
})
export class MerchantRotateWebhookSecretCommand extends CommandRunner {
  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly config: CliConfig,
  ) {
    super();
  }

  async run(_args: string[], o: { merchant?: string; graceHours?: string }): Promise<void> {
    const merchantId = await merchantOption(this.merchants, o.merchant);
    const hours = Number(o.graceHours ?? this.config.webhookSecretGraceHours);
    if (!Number.isFinite(hours) || hours < 0 || hours > 24 * 30) throw new CliError('--grace-hours must be from 0 to 720');
    const secrets = keyringSource(this.config, 'SECRETS_KEKS').keyring;
    const secret = newWebhookSecret();
    const expires = await this.merchants.rotateWebhookSecret(merchantId, secret, hours * 3600, secrets);
    if (!expires) throw new CliError(`--merchant: no merchant ${JSON.stringify(o.merchant)}`);
    printJson({ merchantId: await publicIdFor(this.merchants, merchantId), webhookSecret: secret, previousSecretSignsUntil: expires });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--grace-hours <h>', description: 'how long the old secret still signs (default WEBHOOK_SECRET_GRACE_HOURS, 24)' })
  parseGrace(v: string): string {
    return v;
  }
}
