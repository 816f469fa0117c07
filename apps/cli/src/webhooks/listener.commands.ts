import { Command, CommandRunner, Option } from 'nest-commander';
import { DeliveriesRepository, ListenerRow, ListenersRepository, ListenerState, MerchantsRepository } from '@app/persistence';
import { listenerOrigin, throttleShown } from '@app/webhooks';
import { disableListener, enableListener } from '@app/webhooks/delivery';
import { merchantOption, publicIdFor } from '../merchants/merchant-option';
import { CliError, printJson, progress } from '../output';
import { Guarded } from '../operators/guarded';
import { OperatorSession } from '../operators/operator-session';
import { DeliveryQueueRef } from './webhook.commands';

const STATES: readonly ListenerState[] = ['enabled', 'disabled'];

/** `--origin` as a listener's origin: an origin or a whole delivery URL (its path and query dropped). */
function originOption(given: string | undefined): string {
  if (!given) throw new CliError('--origin is required (scheme://host:port, or a delivery URL)');
  try {
    return listenerOrigin(given);
  } catch {
    throw new CliError(`--origin: ${JSON.stringify(given)} is not an http(s) origin such as https://hooks.example.com:443`);
  }
}

const printable = (r: ListenerRow & { held?: number }, merchantId: string, throttlePerS: number | null) => ({
  merchantId,
  origin: r.origin,
  state: r.state,
  // The merchant's webhook throttle, which each of its listeners gets (merchant:set-webhook-throttle).
  webhookThrottlePerS: throttleShown(throttlePerS),
  disabledAt: r.disabled_at,
  disabledBy: r.disabled_by,
  failingSince: r.failing_since,
  consecutiveFailures: r.consecutive_failures,
  lastSuccessAt: r.last_success_at,
  lastFailureAt: r.last_failure_at,
  ...(r.held === undefined ? {} : { held: r.held }),
});

@Guarded('viewer', 'listener:list')
@Command({ name: 'listener:list', description: "A merchant's webhook listeners (origins): health, state and held deliveries" })
export class ListenerListCommand extends CommandRunner {
  constructor(
    private readonly listeners: ListenersRepository,
    private readonly merchants: MerchantsRepository,
  ) {
    super();
  }

  async run(_args: string[], o: { merchant?: string; state?: string }): Promise<void> {
    const merchantId = await merchantOption(this.merchants, o.merchant);
    if (o.state && !STATES.includes(o.state as ListenerState)) throw new CliError(`--state must be one of ${STATES.join(', ')}`);
    const publicId = await publicIdFor(this.merchants, merchantId);
    const rows = await this.listeners.list(merchantId, o.state as ListenerState | undefined);
    const throttle = (await this.merchants.webhookThrottleOf(merchantId)) ?? null;
    printJson(rows.map((r) => printable(r, publicId, throttle)));
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--state <state>', description: STATES.join('|') })
  parseState(v: string): string {
    return v;
  }
}

@Guarded('operator', 'listener:disable')
@Command({
  name: 'listener:disable',
  description: "Disable a merchant's listener: its deliveries are held, not attempted, until listener:enable",
})
export class ListenerDisableCommand extends CommandRunner {
  constructor(
    private readonly listeners: ListenersRepository,
    private readonly merchants: MerchantsRepository,
    private readonly session: OperatorSession,
  ) {
    super();
  }

  async run(_args: string[], o: { merchant?: string; origin?: string }): Promise<void> {
    const merchantId = await merchantOption(this.merchants, o.merchant);
    const origin = originOption(o.origin);
    const by = this.session.actor?.id;
    if (!by) throw new CliError('listener:disable needs an operator');
    if ((await disableListener(this.listeners, merchantId, origin, by)) === 'already_disabled')
      throw new CliError(`listener ${origin} is disabled already`);
    printJson({ merchantId: await publicIdFor(this.merchants, merchantId), origin, state: 'disabled' });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--origin <origin>', description: 'scheme://host:port (a delivery URL is cut to its origin)' })
  parseOrigin(v: string): string {
    return v;
  }
}

@Guarded('operator', 'listener:enable')
@Command({
  name: 'listener:enable',
  description: "Enable a merchant's listener again and release its held deliveries, oldest first",
})
export class ListenerEnableCommand extends CommandRunner {
  constructor(
    private readonly listeners: ListenersRepository,
    private readonly deliveries: DeliveriesRepository,
    private readonly queue: DeliveryQueueRef,
    private readonly merchants: MerchantsRepository,
  ) {
    super();
  }

  async run(_args: string[], o: { merchant?: string; origin?: string }): Promise<void> {
    const merchantId = await merchantOption(this.merchants, o.merchant);
    const origin = originOption(o.origin);
    const outcome = await enableListener(this.listeners, this.deliveries, await this.queue.get(), merchantId, origin, (n) =>
      progress({ released: n }),
    );
    if (outcome === 'not_disabled') throw new CliError(`listener ${origin} is not disabled (listener:list shows its state)`);
    printJson({ merchantId: await publicIdFor(this.merchants, merchantId), origin, state: 'enabled', released: outcome.released });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--origin <origin>', description: 'scheme://host:port (a delivery URL is cut to its origin)' })
  parseOrigin(v: string): string {
    return v;
  }
}
