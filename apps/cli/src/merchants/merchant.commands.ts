import { Command, CommandRunner, Option } from 'nest-commander';
import { MERCHANT_ENVIRONMENTS, MerchantEnvironment } from '@app/contracts';
import { MerchantsRepository } from '@app/persistence';
import { CliConfig } from '../config/cli.config';
import { keyringSource } from '../keys/keyrings';
import { CliError, printJson } from '../output';
import { newMerchantKey, newWebhookSecret } from './merchant-credentials';
import { merchantOption, publicIdFor } from './merchant-option';
import { Guarded } from '../operators/guarded';
import { OperatorSession } from '../operators/operator-session';

@Guarded('admin', 'merchant:create')
@Command({ name: 'merchant:create', description: 'Create a merchant; prints its id (10 digits), key (shown once) and webhook secret' })
export class MerchantCreateCommand extends CommandRunner {
  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly session: OperatorSession,
    private readonly config: CliConfig,
  ) {
    super();
  }

  async run(_args: string[], opts: { name?: string; environment?: string }): Promise<void> {
    const name = opts.name?.trim();
    if (!name) throw new CliError('--name is required');
    const environment = (opts.environment ?? 'test') as MerchantEnvironment;
    if (!MERCHANT_ENVIRONMENTS.includes(environment))
      throw new CliError(`--environment must be ${MERCHANT_ENVIRONMENTS.join(' or ')} (got ${JSON.stringify(opts.environment)})`);
    const secrets = keyringSource(this.config, 'SECRETS_KEKS').keyring;
    const { key, hash } = newMerchantKey();
    const webhookSecret = newWebhookSecret();
    // The merchant knows only its public id; the UUID stays inside the gateway.
    const { publicId } = await this.merchants.create({ name, keyHash: hash, webhookSecret, environment }, secrets);
    this.session.target = publicId;
    printJson({ merchantId: publicId, merchantKey: key, webhookSecret, environment });
  }

  @Option({ flags: '--name <name>', description: 'merchant name' })
  parseName(v: string): string {
    return v;
  }

  @Option({
    flags: '--environment <test|production>',
    description:
      "test (default): every sale goes to the built-in sandbox; production: to the acquirer each sale names, through the merchant's account there (merchant:set-acquirer). Fixed once made",
  })
  parseEnvironment(v: string): string {
    return v;
  }
}

@Guarded('admin', 'merchant:rotate-key')
@Command({ name: 'merchant:rotate-key', description: 'Issue a new merchant key; the old one stops working' })
export class MerchantRotateKeyCommand extends CommandRunner {
  constructor(private readonly merchants: MerchantsRepository) {
    super();
  }

  async run(_args: string[], opts: { merchant?: string }): Promise<void> {
    const id = await merchantOption(this.merchants, opts.merchant);
    const { key, hash } = newMerchantKey();
    if (!(await this.merchants.rotateKey(id, hash))) throw new CliError(`--merchant: no merchant ${JSON.stringify(opts.merchant)}`);
    printJson({ merchantId: await publicIdFor(this.merchants, id), merchantKey: key });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }
}
