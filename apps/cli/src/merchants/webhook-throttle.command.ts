import { Command, CommandRunner, Option } from 'nest-commander';
import { MerchantsRepository } from '@app/persistence';
import { parseThrottle, SET_WEBHOOK_THROTTLE_ACTION, THROTTLE_OFF, THROTTLE_VALUE_RULE, throttleShown } from '@app/webhooks';
import { CliError, printJson } from '../output';
import { merchantOption, publicIdFor } from './merchant-option';
import { Guarded } from '../operators/guarded';

@Guarded('operator', SET_WEBHOOK_THROTTLE_ACTION)
@Command({
  name: SET_WEBHOOK_THROTTLE_ACTION,
  description: `Set a merchant's webhook throttle: at most this many deliveries per second to each of its listeners, across every notifier; "${THROTTLE_OFF}" removes it`,
})
export class MerchantSetWebhookThrottleCommand extends CommandRunner {
  constructor(private readonly merchants: MerchantsRepository) {
    super();
  }

  async run(_args: string[], opts: { merchant?: string; perSecond?: string }): Promise<void> {
    if (opts.perSecond === undefined)
      throw new CliError(`--per-second is required (a number of deliveries per second, or "${THROTTLE_OFF}")`);
    const perS = parseThrottle(opts.perSecond);
    if (perS === undefined) throw new CliError(`--per-second ${THROTTLE_VALUE_RULE} (got ${JSON.stringify(opts.perSecond)})`);
    const id = await merchantOption(this.merchants, opts.merchant);
    const set = await this.merchants.setWebhookThrottle(id, perS);
    if (!set) throw new CliError(`--merchant: no merchant ${JSON.stringify(opts.merchant)}`);
    printJson({ merchantId: await publicIdFor(this.merchants, id), webhookThrottlePerS: throttleShown(set.perS) });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--per-second <n>', description: `deliveries per second to each listener, or "${THROTTLE_OFF}"` })
  parsePerSecond(v: string): string {
    return v;
  }
}
