import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export interface PortalLinkState {
  id: string;
  merchant_id: string;
  expires_at: Date;
  revoked_at: Date | null;
}

export interface PortalLinkRow extends PortalLinkState {
  created_by: string;
  created_at: Date;
}

/** Issued merchant portal links (the token is never stored: see libs/webhooks/src/portal-link.ts). */
@Injectable()
export class PortalLinksRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async create(link: { id: string; merchantId: string; expiresAt: Date; createdBy: string }): Promise<PortalLinkRow> {
    const rows: PortalLinkRow[] = await this.db.query(
      `INSERT INTO portal_links (id, merchant_id, expires_at, created_by) VALUES ($1, $2, $3, $4)
       RETURNING id, merchant_id, expires_at, created_by, created_at, revoked_at`,
      [link.id, link.merchantId, link.expiresAt, link.createdBy],
    );
    return rows[0];
  }

  /** What the portal checks on every request (the api may read these columns only). */
  async find(id: string): Promise<PortalLinkState | undefined> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
    const rows: PortalLinkState[] = await this.db.query('SELECT id, merchant_id, expires_at, revoked_at FROM portal_links WHERE id = $1', [
      id.toLowerCase(),
    ]);
    return rows[0];
  }

  /** Revokes a link not revoked yet; undefined when there is no such link or it was revoked already. */
  async revoke(id: string, by: string): Promise<PortalLinkRow | undefined> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
    // An UPDATE answers [rows, count] through TypeORM.
    const [[revoked]]: [PortalLinkRow[], number] = await this.db.query(
      `UPDATE portal_links SET revoked_at = now(), revoked_by = $2 WHERE id = $1 AND revoked_at IS NULL
       RETURNING id, merchant_id, expires_at, created_by, created_at, revoked_at`,
      [id.toLowerCase(), by],
    );
    return revoked;
  }
}
