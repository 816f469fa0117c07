import { Command, CommandRunner, Option } from 'nest-commander';
import { DomainError } from '@app/contracts';
import { LedgerRepository, MerchantsRepository } from '@app/persistence';
import { ChargebackSettlement, VerifyLedger } from '@app/settlement';
import { merchantOption } from '../merchants/merchant-option';
import { CliError, printJson } from '../output';
import { Guarded } from '../operators/guarded';

@Guarded('viewer', 'payables:list')
@Command({ name: 'payables:list', description: 'Payables and debits of a recipient or of a merchant' })
export class PayablesListCommand extends CommandRunner {
  constructor(
    private readonly ledger: LedgerRepository,
    private readonly merchants: MerchantsRepository,
  ) {
    super();
  }

  async run(_args: string[], o: { recipient?: string; merchant?: string }): Promise<void> {
    if (!o.recipient === !o.merchant) throw new CliError('give exactly one of --recipient or --merchant');
    const rows = await this.ledger.list(
      o.recipient ? { recipientId: o.recipient } : { merchantId: await merchantOption(this.merchants, o.merchant) },
    );
    // The words of the report's payables[] (and of split[]), in cents as numbers.
    printJson(
      rows.map((p) => ({
        transactionId: p.transactionId,
        recipient: p.party,
        kind: p.kind,
        instalment: p.instalment,
        dueDate: p.dueDate,
        grossAmount: p.gross,
        feeAmount: p.fee,
        netAmount: p.net,
        status: p.status,
      })),
    );
  }

  @Option({ flags: '--recipient <id>' })
  parseRecipient(v: string): string {
    return v;
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }
}

@Guarded('operator', 'chargeback:record')
@Command({ name: 'chargeback:record', description: 'Record a chargeback from the acquirer; debits liable recipients (else the merchant)' })
export class ChargebackRecordCommand extends CommandRunner {
  constructor(private readonly chargebacks: ChargebackSettlement) {
    super();
  }

  async run(_args: string[], o: { transaction?: string; amount?: string; id?: string }): Promise<void> {
    if (!o.transaction) throw new CliError('--transaction is required');
    if (!/^\d{1,15}$/.test(o.amount ?? '') || Number(o.amount) < 1) throw new CliError('--amount must be whole cents, at least 1');
    if (o.id !== undefined && !/^\S{1,100}$/.test(o.id))
      throw new CliError("--id must be the acquirer's chargeback id (1 to 100 characters, no spaces)");
    try {
      const r = await this.chargebacks.record(o.transaction.toLowerCase(), Number(o.amount), o.id);
      printJson({ transactionId: o.transaction.toUpperCase(), amount: Number(o.amount), ...r });
    } catch (e) {
      throw e instanceof DomainError ? new CliError(e.message) : e;
    }
  }

  @Option({ flags: '--transaction <id>' })
  parseTransaction(v: string): string {
    return v;
  }

  @Option({ flags: '--amount <cents>' })
  parseAmount(v: string): string {
    return v;
  }

  @Option({ flags: '--id <chargebackId>', description: "the acquirer's chargeback id: recording it again changes nothing" })
  parseId(v: string): string {
    return v;
  }
}

@Guarded('viewer', 'ledger:verify')
@Command({
  name: 'ledger:verify',
  description: 'Check that payables, reversals, chargebacks and fees add up for every transaction; exit 1 on any difference',
})
export class LedgerVerifyCommand extends CommandRunner {
  constructor(
    private readonly verifyLedger: VerifyLedger,
    private readonly merchants: MerchantsRepository,
  ) {
    super();
  }

  async run(_args: string[], o: { merchant?: string }): Promise<void> {
    const report = await this.verifyLedger.run(o.merchant === undefined ? undefined : await merchantOption(this.merchants, o.merchant));
    printJson(report);
    if (report.differences.length) throw new CliError(`${report.differences.length} ledger difference(s)`);
  }

  @Option({
    flags: '--merchant <id>',
    description: 'only this merchant, by id (as merchant:create printed it, or its UUID); default: every transaction',
  })
  parseMerchant(v: string): string {
    return v;
  }
}
