import { Command, CommandRunner, Option } from 'nest-commander';
import { ACQUIRER_CONNECTORS, ACQUIRER_NAMES } from '@app/contracts';
import { AcquirerAccountsRepository, MerchantsRepository, sealAcquirerSecret } from '@app/persistence';
import { CliConfig } from '../config/cli.config';
import { keyringSource } from '../keys/keyrings';
import { CliError, printJson } from '../output';
import { merchantOption, publicIdFor } from './merchant-option';
import { Guarded } from '../operators/guarded';
import { OperatorSession } from '../operators/operator-session';

const CODES = Object.keys(ACQUIRER_CONNECTORS).join(' or ');

/** The account format each acquirer issues: Cielo's MerchantId is a GUID, e.Rede's PV a number. */
const ACCOUNT_FORMATS: Record<number, { rule: RegExp; says: string }> = {
  26: { rule: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, says: "Cielo's MerchantId, a GUID" },
  27: { rule: /^\d{1,20}$/, says: "e.Rede's affiliation number (PV), digits only" },
};

/** Reads the whole of standard input (a secret piped in, so it never sits in a shell history or a process list). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

@Guarded('admin', 'merchant:set-acquirer')
@Command({
  name: 'merchant:set-acquirer',
  description: `Set a production merchant's own account at an acquirer (${CODES}); the secret is sealed at rest and never printed back`,
})
export class MerchantSetAcquirerCommand extends CommandRunner {
  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly accounts: AcquirerAccountsRepository,
    private readonly session: OperatorSession,
    private readonly config: CliConfig,
  ) {
    super();
  }

  async run(
    _args: string[],
    o: { merchant?: string; acquirer?: string; account?: string; secret?: string; secretStdin?: boolean },
  ): Promise<void> {
    const code = Number(o.acquirer);
    if (!o.acquirer || !ACQUIRER_CONNECTORS[code]) throw new CliError(`--acquirer must be ${CODES} (got ${JSON.stringify(o.acquirer)})`);
    const account = o.account?.trim();
    const format = ACCOUNT_FORMATS[code];
    if (!account || !format.rule.test(account)) throw new CliError(`--account must be ${format.says}`);
    if (o.secret !== undefined && o.secretStdin) throw new CliError('give the secret once: --secret or --secret-stdin');
    const secret = (o.secretStdin ? await readStdin() : o.secret)?.trim();
    if (!secret) throw new CliError('--secret (or --secret-stdin) is required: the MerchantKey (Cielo) or the token (e.Rede)');
    // Sent in an HTTP header (Cielo) or Basic credentials (e.Rede): printable ASCII only, so a pasted
    // invisible character never makes every sale of the merchant fail.
    if (!/^[\x21-\x7e]{1,200}$/.test(secret)) throw new CliError('the secret must be 1 to 200 printable ASCII characters, without spaces');
    const id = await merchantOption(this.merchants, o.merchant);
    const publicId = await publicIdFor(this.merchants, id);
    this.session.target = publicId;
    const ring = keyringSource(this.config, 'SECRETS_KEKS').keyring;
    const { replaced } = await this.accounts.set(id, code, account, sealAcquirerSecret(ring, id, code, secret));
    printJson({ merchantId: publicId, acquirer: code, acquirerName: ACQUIRER_NAMES[code], account, replaced });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--acquirer <code>', description: `acquirer code: ${CODES}` })
  parseAcquirer(v: string): string {
    return v;
  }

  @Option({ flags: '--account <id>', description: "the merchant's id at the acquirer (Cielo MerchantId, e.Rede PV)" })
  parseAccount(v: string): string {
    return v;
  }

  @Option({ flags: '--secret <secret>', description: 'Cielo MerchantKey or e.Rede token (prefer --secret-stdin)' })
  parseSecret(v: string): string {
    return v;
  }

  @Option({ flags: '--secret-stdin', description: 'read the secret from standard input' })
  parseSecretStdin(): boolean {
    return true;
  }
}

@Guarded('admin', 'merchant:remove-acquirer')
@Command({
  name: 'merchant:remove-acquirer',
  description: "Remove a merchant's account at an acquirer: its sales there are refused (030) from then on",
})
export class MerchantRemoveAcquirerCommand extends CommandRunner {
  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly accounts: AcquirerAccountsRepository,
    private readonly session: OperatorSession,
  ) {
    super();
  }

  async run(_args: string[], o: { merchant?: string; acquirer?: string }): Promise<void> {
    const code = Number(o.acquirer);
    if (!o.acquirer || !ACQUIRER_CONNECTORS[code]) throw new CliError(`--acquirer must be ${CODES} (got ${JSON.stringify(o.acquirer)})`);
    const id = await merchantOption(this.merchants, o.merchant);
    const publicId = await publicIdFor(this.merchants, id);
    this.session.target = publicId;
    if (!(await this.accounts.remove(id, code))) throw new CliError(`merchant ${publicId} has no account at acquirer ${code}`);
    printJson({ merchantId: publicId, acquirer: code, removed: true });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--acquirer <code>', description: `acquirer code: ${CODES}` })
  parseAcquirer(v: string): string {
    return v;
  }
}

@Guarded('viewer', 'merchant:show')
@Command({
  name: 'merchant:show',
  description: 'Show a merchant: its environment, limits and the acquirers it has an account at (never a secret)',
})
export class MerchantShowCommand extends CommandRunner {
  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly accounts: AcquirerAccountsRepository,
  ) {
    super();
  }

  async run(_args: string[], o: { merchant?: string }): Promise<void> {
    const id = await merchantOption(this.merchants, o.merchant);
    const shown = await this.merchants.show(id);
    if (!shown) throw new CliError(`--merchant: no merchant ${JSON.stringify(o.merchant)}`);
    const acquirers = (await this.accounts.list(id)).map((a) => ({
      acquirer: a.acquirer,
      acquirerName: ACQUIRER_NAMES[a.acquirer] ?? 'unknown',
      account: a.account,
      updatedAt: a.updatedAt.toISOString(),
    }));
    printJson({ ...shown, acquirers });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }
}
