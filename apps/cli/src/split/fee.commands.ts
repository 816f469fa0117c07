import { Command, CommandRunner, Option } from 'nest-commander';
import type { MethodKind } from '@app/contracts';
import { FeePlansRepository, MerchantsRepository } from '@app/persistence';
import { instalmentBand, percentToPpm, ppmToPercent } from '@app/split';
import { BRANDS, normalizeFlag } from '@app/card';
import { CliConfig } from '../config/cli.config';
import { merchantOption, publicIdFor } from '../merchants/merchant-option';
import { CliError, printJson } from '../output';
import { Guarded } from '../operators/guarded';

const BANDS: Record<number, string> = { 1: '1', 2: '2-6', 7: '7-12' };

interface FeesSetOptions {
  merchant?: string;
  kind?: string;
  brand?: string;
  instalments?: string;
  rate?: string;
  fixed?: string;
}

@Guarded('operator', 'fees:set')
@Command({ name: 'fees:set', description: 'Set the fee of one band ({1}, {2..6}, {7..12}) of a merchant plan' })
export class FeesSetCommand extends CommandRunner {
  constructor(
    private readonly fees: FeePlansRepository,
    private readonly merchants: MerchantsRepository,
  ) {
    super();
  }

  async run(_args: string[], o: FeesSetOptions): Promise<void> {
    const merchantId = await merchantOption(this.merchants, o.merchant);
    if (o.kind !== 'credit' && o.kind !== 'debit') throw new CliError('--kind must be credit or debit');
    // The brand names a sale's card is detected as, so a typo cannot silently leave a plan unused.
    const brand = normalizeFlag(o.brand?.trim() ?? '');
    if (!brand) throw new CliError(`--brand must be one of ${BRANDS.join(', ')}`);
    const n = Number(o.instalments);
    if (!/^\d+$/.test(o.instalments ?? '') || n < 1 || n > 12) throw new CliError('--instalments must be a whole number from 1 to 12');
    const ratePpm = percentToPpm(o.rate ?? '');
    if (ratePpm === undefined) throw new CliError('--rate must be a percent below 100 with at most 4 decimals, e.g. 2.99');
    if (!/^\d{1,9}$/.test(o.fixed ?? '')) throw new CliError('--fixed must be whole cents, e.g. 30');
    const ok = await this.fees.set(merchantId, o.kind, brand, instalmentBand(n), { ratePpm, fixed: Number(o.fixed) });
    if (!ok) throw new CliError(`--merchant: no merchant ${JSON.stringify(o.merchant)}`);
    printJson({
      merchantId: await publicIdFor(this.merchants, merchantId),
      kind: o.kind,
      brand,
      instalments: BANDS[instalmentBand(n)],
      rate: ppmToPercent(ratePpm),
      fixed: Number(o.fixed),
    });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--kind <kind>', description: 'credit or debit' })
  parseKind(v: string): string {
    return v;
  }

  @Option({ flags: '--brand <flag>', description: 'card brand (flag), e.g. visa' })
  parseBrand(v: string): string {
    return v;
  }

  @Option({ flags: '--instalments <n>', description: 'any instalment count of the band to set' })
  parseInstalments(v: string): string {
    return v;
  }

  @Option({ flags: '--rate <percent>', description: 'percent of the gross, e.g. 2.99' })
  parseRate(v: string): string {
    return v;
  }

  @Option({ flags: '--fixed <cents>', description: 'fixed cents per sale' })
  parseFixed(v: string): string {
    return v;
  }
}

@Guarded('viewer', 'fees:show')
@Command({ name: 'fees:show', description: "A merchant's fee plan, and the default for keys it has no row for" })
export class FeesShowCommand extends CommandRunner {
  constructor(
    private readonly fees: FeePlansRepository,
    private readonly config: CliConfig,
    private readonly merchants: MerchantsRepository,
  ) {
    super();
  }

  async run(_args: string[], o: { merchant?: string }): Promise<void> {
    const merchantId = await merchantOption(this.merchants, o.merchant);
    const rows = await this.fees.listByMerchant(merchantId);
    const show = (kind: MethodKind) => ({
      rate: ppmToPercent(this.config.defaultFees[kind].ratePpm),
      fixed: this.config.defaultFees[kind].fixed,
    });
    printJson({
      merchantId: await publicIdFor(this.merchants, merchantId),
      plan: rows.map((r) => ({
        kind: r.kind,
        brand: r.brand,
        instalments: BANDS[r.band],
        rate: ppmToPercent(r.rate_ppm),
        fixed: Number(r.fixed),
      })),
      default: { credit: show('credit'), debit: show('debit') },
    });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }
}
