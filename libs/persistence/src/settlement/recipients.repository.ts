import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';

export interface RecipientRow {
  id: string;
  merchant_id: string;
  name: string;
  status: 'pending' | 'approved';
  created_at: Date;
  approved_at: Date | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Sellers a merchant may split with; only the operator creates and approves them. */
@Injectable()
export class RecipientsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async create(merchantId: string, name: string): Promise<RecipientRow | undefined> {
    const rows: RecipientRow[] = await this.db.query(
      `INSERT INTO recipients (id, merchant_id, name) SELECT $1, id, $3 FROM merchants WHERE id::text = lower($2) RETURNING *`,
      [randomUUID(), merchantId, name],
    );
    return rows[0];
  }

  async approve(id: string): Promise<RecipientRow | undefined> {
    if (!UUID.test(id.toLowerCase())) return undefined;
    const [rows]: [RecipientRow[], number] = await this.db.query(
      `UPDATE recipients SET status = 'approved', approved_at = COALESCE(approved_at, now()) WHERE id = $1 RETURNING *`,
      [id.toLowerCase()],
    );
    return rows[0];
  }

  async listByMerchant(merchantId: string): Promise<RecipientRow[]> {
    return this.db.query(`SELECT * FROM recipients WHERE merchant_id::text = lower($1) ORDER BY created_at, id`, [merchantId]);
  }

  /** The status of each of `ids` that is a recipient of this merchant (others are absent). */
  async statusesForMerchant(merchantId: string, ids: string[]): Promise<Map<string, 'pending' | 'approved'>> {
    const wanted = [...new Set(ids.map((id) => id.trim().toLowerCase()).filter((id) => UUID.test(id)))];
    if (!wanted.length) return new Map();
    const rows: { id: string; status: 'pending' | 'approved' }[] = await this.db.query(
      'SELECT id, status FROM recipients WHERE merchant_id = $1 AND id = ANY($2::uuid[])',
      [merchantId, wanted],
    );
    return new Map(rows.map((r) => [r.id, r.status]));
  }
}
