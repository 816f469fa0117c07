import { Command, CommandRunner, Option } from 'nest-commander';
import { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { DeliveriesRepository, DeliveryStatus } from '@app/persistence';
import IORedis from 'ioredis';
import { DELIVERY_QUEUE, replayDelivery } from '@app/webhooks';
import { newWebhookSecret } from '../merchants/merchant-credentials';
import { CliConfig } from '../config/cli.config';
import { CliError, printJson, progress } from '../output';

const STATUSES: readonly DeliveryStatus[] = ['pending', 'sending', 'succeeded', 'failed', 'blocked'];

/** The delivery queue, connected only when a command queues something (webhooks:replay). */
export class DeliveryQueueRef {
  private queue?: Queue;

  constructor(private readonly config: CliConfig) {}

  get(): Queue {
    this.queue ??= new Queue(DELIVERY_QUEUE, {
      connection: new IORedis(this.config.base.redisUrl, { maxRetriesPerRequest: 3 }).on('error', () => undefined),
      prefix: this.config.base.queuePrefix,
    });
    return this.queue;
  }

  async close(): Promise<void> {
    if (!this.queue) return;
    await this.queue.close();
    (this.queue.opts.connection as IORedis).disconnect();
  }
}

@Command({ name: 'webhooks:list', description: "A merchant's webhook deliveries, newest first" })
export class WebhooksListCommand extends CommandRunner {
  constructor(private readonly deliveries: DeliveriesRepository) {
    super();
  }

  async run(_args: string[], o: { merchant?: string; status?: string; limit?: string }): Promise<void> {
    if (!o.merchant) throw new CliError('--merchant is required');
    if (o.status && !STATUSES.includes(o.status as DeliveryStatus)) throw new CliError(`--status must be one of ${STATUSES.join(', ')}`);
    const limit = Number(o.limit ?? 100);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new CliError('--limit must be a whole number from 1 to 10000');
    printJson(await this.deliveries.list({ merchantId: o.merchant, status: o.status as DeliveryStatus | undefined, limit }));
  }

  @Option({ flags: '--merchant <id>' })
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

@Command({ name: 'webhooks:replay', description: 'Replay one delivery, or every delivery of a merchant since a time that never succeeded' })
export class WebhooksReplayCommand extends CommandRunner {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly queue: DeliveryQueueRef,
  ) {
    super();
  }

  async run(_args: string[], o: { delivery?: string; merchant?: string; since?: string }): Promise<void> {
    if (o.delivery) {
      const outcome = await replayDelivery(this.deliveries, this.queue.get(), o.delivery);
      if (outcome === 'not_found') throw new CliError(`no delivery ${JSON.stringify(o.delivery)}`);
      if (outcome === 'not_replayable') throw new CliError('only a failed or blocked delivery can be replayed');
      printJson({ deliveryId: o.delivery.toLowerCase(), replay: outcome });
      return;
    }
    if (!o.merchant || !o.since) throw new CliError('give --delivery <id>, or --merchant <id> with --since <ISO time>');
    const since = new Date(o.since);
    if (Number.isNaN(since.getTime())) throw new CliError('--since must be an ISO 8601 time, e.g. 2026-11-22T00:00:00Z');
    const ids = await this.deliveries.neverSucceeded(o.merchant, since);
    let queued = 0;
    for (const [i, id] of ids.entries()) {
      if ((await replayDelivery(this.deliveries, this.queue.get(), id)) === 'queued') queued++;
      if ((i + 1) % 100 === 0 || i + 1 === ids.length) progress({ replayed: i + 1, of: ids.length });
    }
    printJson({ merchantId: o.merchant.toLowerCase(), since: since.toISOString(), found: ids.length, queued });
  }

  @Option({ flags: '--delivery <id>' })
  parseDelivery(v: string): string {
    return v;
  }

  @Option({ flags: '--merchant <id>' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--since <time>', description: 'ISO 8601' })
  parseSince(v: string): string {
    return v;
  }
}

@Command({ name: 'merchant:rotate-webhook-secret', description: 'New webhook secret; the old one keeps signing (as a second signature) for a grace period' })
export class MerchantRotateWebhookSecretCommand extends CommandRunner {
  constructor(
    private readonly db: DataSource,
    private readonly config: CliConfig,
  ) {
    super();
  }

  async run(_args: string[], o: { merchant?: string; graceHours?: string }): Promise<void> {
    if (!o.merchant) throw new CliError('--merchant is required');
    const hours = Number(o.graceHours ?? this.config.webhookSecretGraceHours);
    if (!Number.isFinite(hours) || hours < 0 || hours > 24 * 30) throw new CliError('--grace-hours must be from 0 to 720');
    const secret = newWebhookSecret();
    const [rows]: [{ expires: Date }[], number] = await this.db.query(
      `UPDATE merchants SET previous_webhook_secret = webhook_secret, webhook_secret = $2,
         previous_secret_expires_at = now() + make_interval(secs => $3) WHERE id::text = lower($1) RETURNING previous_secret_expires_at AS expires`,
      [o.merchant, secret, hours * 3600],
    );
    if (!rows.length) throw new CliError(`no merchant ${JSON.stringify(o.merchant)}`);
    printJson({ merchantId: o.merchant.toLowerCase(), webhookSecret: secret, previousSecretSignsUntil: rows[0].expires });
  }

  @Option({ flags: '--merchant <id>' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--grace-hours <h>', description: 'how long the old secret still signs (default WEBHOOK_SECRET_GRACE_HOURS, 24)' })
  parseGrace(v: string): string {
    return v;
  }
}
