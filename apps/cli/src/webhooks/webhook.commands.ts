import { Command, CommandRunner, Option } from 'nest-commander';
import { Queue } from 'bullmq';
import { DELIVERY_STATUSES, DeliveriesRepository, DeliveryStatus, MerchantsRepository } from '@app/persistence';
import IORedis from 'ioredis';
import { DELIVERY_QUEUE, replayDelivery } from '@app/webhooks/delivery';
import { newWebhookSecret } from '../merchants/merchant-credentials';
import { keyringSource } from '../keys/keyrings';
import { merchantOption, publicIdFor } from '../merchants/merchant-option';
import { CliConfig } from '../config/cli.config';
import { CliError, printJson, progress } from '../output';
import { Guarded } from '../operators/guarded';

const STATUSES: readonly DeliveryStatus[] = DELIVERY_STATUSES;

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
@Command({ name: 'webhooks:replay', description: 'Replay one delivery, or every delivery of a merchant since a time that never succeeded' })
export class WebhooksReplayCommand extends CommandRunner {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly queue: DeliveryQueueRef,
    private readonly merchants: MerchantsRepository,
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
    const merchantId = await merchantOption(this.merchants, o.merchant);
    const since = new Date(o.since);
    if (Number.isNaN(since.getTime())) throw new CliError('--since must be an ISO 8601 time, e.g. 2026-11-22T00:00:00Z');
    const ids = await this.deliveries.neverSucceeded(merchantId, since);
    let queued = 0;
    for (const [i, id] of ids.entries()) {
      if ((await replayDelivery(this.deliveries, this.queue.get(), id)) === 'queued') queued++;
      if ((i + 1) % 100 === 0 || i + 1 === ids.length) progress({ replayed: i + 1, of: ids.length });
    }
    printJson({ merchantId: await publicIdFor(this.merchants, merchantId), since: since.toISOString(), found: ids.length, queued });
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
