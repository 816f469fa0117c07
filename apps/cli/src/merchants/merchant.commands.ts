import { Command, CommandRunner, Option } from 'nest-commander';
import { DataSource } from 'typeorm';
import { CliError, printJson } from '../output';
import { newMerchantId, newMerchantKey, newWebhookSecret } from './merchant-credentials';

@Command({ name: 'merchant:create', description: 'Create a merchant; prints its id, key (shown once) and webhook secret' })
export class MerchantCreateCommand extends CommandRunner {
  constructor(private readonly db: DataSource) {
    super();
  }

  async run(_args: string[], opts: { name?: string }): Promise<void> {
    const name = opts.name?.trim();
    if (!name) throw new CliError('--name is required');
    const merchantId = newMerchantId();
    const { key, hash } = newMerchantKey();
    const webhookSecret = newWebhookSecret();
    await this.db.query('INSERT INTO merchants (id, name, key_hash, webhook_secret) VALUES ($1, $2, $3, $4)', [merchantId, name, hash, webhookSecret]);
    printJson({ merchantId, merchantKey: key, webhookSecret });
  }

  @Option({ flags: '--name <name>', description: 'merchant name' })
  parseName(v: string): string {
    return v;
  }
}

@Command({ name: 'merchant:rotate-key', description: 'Issue a new merchant key; the old one stops working' })
export class MerchantRotateKeyCommand extends CommandRunner {
  constructor(private readonly db: DataSource) {
    super();
  }

  async run(_args: string[], opts: { merchant?: string }): Promise<void> {
    if (!opts.merchant) throw new CliError('--merchant is required');
    const { key, hash } = newMerchantKey();
    const [, updated] = await this.db.query(
      `UPDATE merchants SET key_hash = $2, key_rotated_at = now() WHERE id::text = lower($1)`,
      [opts.merchant, hash],
    );
    if (!updated) throw new CliError(`no merchant ${JSON.stringify(opts.merchant)}`);
    printJson({ merchantId: opts.merchant.toLowerCase(), merchantKey: key });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id' })
  parseMerchant(v: string): string {
    return v;
  }
}
