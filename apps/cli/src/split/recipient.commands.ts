import { Command, CommandRunner, Option } from 'nest-commander';
import { RecipientRow, RecipientsRepository } from '@app/persistence';
import { CliError, printJson } from '../output';

const view = (r: RecipientRow) => ({ recipientId: r.id, merchantId: r.merchant_id, name: r.name, status: r.status, createdAt: r.created_at, approvedAt: r.approved_at });

@Command({ name: 'recipient:create', description: 'Register a seller a merchant may split with (pending until approved)' })
export class RecipientCreateCommand extends CommandRunner {
  constructor(private readonly recipients: RecipientsRepository) {
    super();
  }

  async run(_args: string[], opts: { merchant?: string; name?: string }): Promise<void> {
    if (!opts.merchant) throw new CliError('--merchant is required');
    if (!opts.name?.trim()) throw new CliError('--name is required');
    const row = await this.recipients.create(opts.merchant, opts.name.trim());
    if (!row) throw new CliError(`no merchant ${JSON.stringify(opts.merchant)}`);
    printJson({ recipientId: row.id, status: row.status });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--name <name>', description: 'recipient name' })
  parseName(v: string): string {
    return v;
  }
}

@Command({ name: 'recipient:approve', description: 'Approve a recipient: splits to it are accepted from now on' })
export class RecipientApproveCommand extends CommandRunner {
  constructor(private readonly recipients: RecipientsRepository) {
    super();
  }

  async run(_args: string[], opts: { recipient?: string }): Promise<void> {
    if (!opts.recipient) throw new CliError('--recipient is required');
    const row = await this.recipients.approve(opts.recipient);
    if (!row) throw new CliError(`no recipient ${JSON.stringify(opts.recipient)}`);
    printJson(view(row));
  }

  @Option({ flags: '--recipient <id>', description: 'recipient id' })
  parseRecipient(v: string): string {
    return v;
  }
}

@Command({ name: 'recipient:list', description: "A merchant's recipients" })
export class RecipientListCommand extends CommandRunner {
  constructor(private readonly recipients: RecipientsRepository) {
    super();
  }

  async run(_args: string[], opts: { merchant?: string }): Promise<void> {
    if (!opts.merchant) throw new CliError('--merchant is required');
    printJson((await this.recipients.listByMerchant(opts.merchant)).map(view));
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id' })
  parseMerchant(v: string): string {
    return v;
  }
}
