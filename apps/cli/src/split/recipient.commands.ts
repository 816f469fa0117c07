import { Command, CommandRunner, Option } from 'nest-commander';
import { MerchantsRepository, RecipientRow, RecipientsRepository } from '@app/persistence';
import { merchantOption, publicIdFor } from '../merchants/merchant-option';
import { CliError, printJson } from '../output';
import { Guarded } from '../operators/guarded';

/** A recipient as the operator sees it: its merchant by public id. */
const view = (r: RecipientRow, merchantPublicId: string) => ({
  recipientId: r.id,
  merchantId: merchantPublicId,
  name: r.name,
  status: r.status,
  createdAt: r.created_at,
  approvedAt: r.approved_at,
});

@Guarded('operator', 'recipient:create')
@Command({ name: 'recipient:create', description: 'Register a seller a merchant may split with (pending until approved)' })
export class RecipientCreateCommand extends CommandRunner {
  constructor(
    private readonly recipients: RecipientsRepository,
    private readonly merchants: MerchantsRepository,
  ) {
    super();
  }

  async run(_args: string[], opts: { merchant?: string; name?: string }): Promise<void> {
    const merchantId = await merchantOption(this.merchants, opts.merchant);
    if (!opts.name?.trim()) throw new CliError('--name is required');
    const row = await this.recipients.create(merchantId, opts.name.trim());
    if (!row) throw new CliError(`--merchant: no merchant ${JSON.stringify(opts.merchant)}`);
    printJson({ recipientId: row.id, status: row.status });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--name <name>', description: 'recipient name' })
  parseName(v: string): string {
    return v;
  }
}

@Guarded('operator', 'recipient:approve')
@Command({ name: 'recipient:approve', description: 'Approve a recipient: splits to it are accepted from now on' })
export class RecipientApproveCommand extends CommandRunner {
  constructor(
    private readonly recipients: RecipientsRepository,
    private readonly merchants: MerchantsRepository,
  ) {
    super();
  }

  async run(_args: string[], opts: { recipient?: string }): Promise<void> {
    if (!opts.recipient) throw new CliError('--recipient is required');
    const row = await this.recipients.approve(opts.recipient);
    if (!row) throw new CliError(`no recipient ${JSON.stringify(opts.recipient)}`);
    printJson(view(row, await publicIdFor(this.merchants, row.merchant_id)));
  }

  @Option({ flags: '--recipient <id>', description: 'recipient id' })
  parseRecipient(v: string): string {
    return v;
  }
}

@Guarded('viewer', 'recipient:list')
@Command({ name: 'recipient:list', description: "A merchant's recipients" })
export class RecipientListCommand extends CommandRunner {
  constructor(
    private readonly recipients: RecipientsRepository,
    private readonly merchants: MerchantsRepository,
  ) {
    super();
  }

  async run(_args: string[], opts: { merchant?: string }): Promise<void> {
    const merchantId = await merchantOption(this.merchants, opts.merchant);
    const publicId = await publicIdFor(this.merchants, merchantId);
    printJson((await this.recipients.listByMerchant(merchantId)).map((r) => view(r, publicId)));
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }
}
