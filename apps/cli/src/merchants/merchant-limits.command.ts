import { Command, CommandRunner, Option } from 'nest-commander';
import { MerchantRateLimits, MerchantsRepository, RATE_LIMIT_RANGE } from '@app/persistence';
import { CliError, printJson } from '../output';
import { merchantOption, publicIdFor } from './merchant-option';
import { Guarded } from '../operators/guarded';

/** The word that returns a limit to the api's default (RATE_LIMIT_*_PER_S). */
export const DEFAULT_LIMIT = 'default';

/**
 * A `--reads` / `--writes` value: a whole number of requests per second in the range the
 * database's CHECK holds, `default` (null: the api's default), or absent (undefined: unchanged).
 */
export function parseLimitOption(option: string, given: string | undefined): number | null | undefined {
  if (given === undefined) return undefined;
  const v = given.trim();
  if (v.toLowerCase() === DEFAULT_LIMIT) return null;
  if (/^\d{1,7}$/.test(v) && Number(v) >= RATE_LIMIT_RANGE.min && Number(v) <= RATE_LIMIT_RANGE.max) return Number(v);
  throw new CliError(
    `${option} must be a whole number of requests per second from ${RATE_LIMIT_RANGE.min} to ${RATE_LIMIT_RANGE.max}, or "${DEFAULT_LIMIT}" for the api's default (got ${JSON.stringify(given)})`,
  );
}

const shown = (perS: number | null) => perS ?? DEFAULT_LIMIT;

@Guarded('operator', 'merchant:set-limits')
@Command({
  name: 'merchant:set-limits',
  description: `Set a merchant's rate limits in requests per second (--writes: sale, authorize, capture, cancel, token/add; --reads: report, token/retrieve); "${DEFAULT_LIMIT}" returns to the api's default`,
})
export class MerchantSetLimitsCommand extends CommandRunner {
  constructor(private readonly merchants: MerchantsRepository) {
    super();
  }

  async run(_args: string[], opts: { merchant?: string; reads?: string; writes?: string }): Promise<void> {
    // Every option is checked before anything is written.
    const writesPerS = parseLimitOption('--writes', opts.writes);
    const readsPerS = parseLimitOption('--reads', opts.reads);
    if (writesPerS === undefined && readsPerS === undefined)
      throw new CliError('give --reads and/or --writes (a number of requests per second, or "default")');
    const id = await merchantOption(this.merchants, opts.merchant);
    const limits: MerchantRateLimits | undefined = await this.merchants.setRateLimits(id, { writesPerS, readsPerS });
    if (!limits) throw new CliError(`--merchant: no merchant ${JSON.stringify(opts.merchant)}`);
    printJson({ merchantId: await publicIdFor(this.merchants, id), writes: shown(limits.writesPerS), reads: shown(limits.readsPerS) });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--reads <perS>', description: `report and token/retrieve requests per second, or "${DEFAULT_LIMIT}"` })
  parseReads(v: string): string {
    return v;
  }

  @Option({
    flags: '--writes <perS>',
    description: `sale, authorize, capture, cancel and token/add requests per second, or "${DEFAULT_LIMIT}"`,
  })
  parseWrites(v: string): string {
    return v;
  }
}
