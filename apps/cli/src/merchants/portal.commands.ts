import { randomUUID } from 'node:crypto';
import { Command, CommandRunner, Option } from 'nest-commander';
import { MerchantsRepository, PortalLinksRepository } from '@app/persistence';
import { parsePortalTtl, portalKeys, sealPortal } from '@app/webhooks';
import { CliConfig } from '../config/cli.config';
import { CliError, printJson } from '../output';
import { Guarded } from '../operators/guarded';
import { OperatorSession } from '../operators/operator-session';
import { merchantOption, publicIdFor } from './merchant-option';

/**
 * A merchant's own read-and-replay view of its webhook deliveries (the api's /portal): a signed
 * link that expires, recorded in portal_links so it can be revoked. The audit event's target is
 * the link's id, as is the actor of every replay made through it (`portal:<link id>`).
 */
@Guarded('operator', 'merchant:portal-link')
@Command({
  name: 'merchant:portal-link',
  description: "Print a signed, expiring link to a merchant's own view of its webhook deliveries (read and replay)",
})
export class MerchantPortalLinkCommand extends CommandRunner {
  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly links: PortalLinksRepository,
    private readonly session: OperatorSession,
    private readonly config: CliConfig,
  ) {
    super();
  }

  async run(_args: string[], o: { merchant?: string; ttl?: string }): Promise<void> {
    const merchantId = await merchantOption(this.merchants, o.merchant);
    const ttl = parsePortalTtl(o.ttl ?? '1h');
    if (typeof ttl === 'string') throw new CliError(ttl);
    const { portalLinkKey, publicBaseUrl } = this.config;
    if (!portalLinkKey) throw new CliError('PORTAL_LINK_KEY is not set: give the CLI the same value as the console app');
    if (!publicBaseUrl)
      throw new CliError(
        'CONSOLE_PUBLIC_URL is not set: the address merchants reach the console app at, e.g. https://console.pay.example.com',
      );
    const createdBy = this.session.actor?.id;
    if (!createdBy) throw new CliError('merchant:portal-link needs an operator');
    const id = randomUUID();
    this.session.target = id;
    // Whole seconds: the token carries the expiry in seconds, and the row must say the same.
    const expiresAt = new Date((Math.floor(Date.now() / 1000) + ttl) * 1000);
    await this.links.create({ id, merchantId, expiresAt, createdBy });
    // The merchant's public id, not the UUID: the merchant can read the token's claims.
    const publicId = await publicIdFor(this.merchants, merchantId);
    const token = sealPortal(portalKeys(portalLinkKey), 'link', { linkId: id, merchantId: publicId, expiresAt });
    printJson({
      id,
      merchantId: publicId,
      url: `${publicBaseUrl}/portal/enter?t=${token}`,
      expiresAt: expiresAt.toISOString(),
    });
  }

  @Option({ flags: '--merchant <id>', description: 'merchant id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--ttl <duration>', description: 'how long the link works: 30s, 30m, 1h (default), 24h, up to 7d' })
  parseTtl(v: string): string {
    return v;
  }
}

@Guarded('operator', 'merchant:portal-revoke')
@Command({ name: 'merchant:portal-revoke', description: 'Revoke a merchant portal link: it and every session opened with it stop working' })
export class MerchantPortalRevokeCommand extends CommandRunner {
  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly links: PortalLinksRepository,
    private readonly session: OperatorSession,
  ) {
    super();
  }

  async run(_args: string[], o: { id?: string }): Promise<void> {
    if (!o.id) throw new CliError('--id is required (the id merchant:portal-link printed)');
    this.session.target = o.id;
    const by = this.session.actor?.id;
    if (!by) throw new CliError('merchant:portal-revoke needs an operator');
    const revoked = await this.links.revoke(o.id, by);
    if (!revoked) {
      const existing = await this.links.find(o.id);
      throw new CliError(existing ? `--id: link ${o.id} is revoked already` : `--id: no portal link ${JSON.stringify(o.id)}`);
    }
    printJson({ id: revoked.id, merchantId: await publicIdFor(this.merchants, revoked.merchant_id), revokedAt: revoked.revoked_at });
  }

  @Option({ flags: '--id <uuid>', description: 'the link id merchant:portal-link printed' })
  parseId(v: string): string {
    return v;
  }
}
