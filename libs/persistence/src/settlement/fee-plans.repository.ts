import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { FeeRate, MethodKind } from '@app/contracts';

export interface FeePlanRow {
  kind: MethodKind;
  brand: string;
  band: number;
  rate_ppm: number;
  fixed: string;
}

/** The rates a merchant without its own row pays, per method kind (from configuration). */
export type DefaultFeePlan = Record<MethodKind, FeeRate>;

/**
 * Fee plans per merchant, keyed by (credit|debit, brand, instalment band). A merchant without a
 * row for a key pays the configured default of its kind, so a new merchant can sell at once.
 * A band is named by its first instalment count (the split engine's instalmentBand).
 */
@Injectable()
export class FeePlansRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async set(merchantId: string, kind: MethodKind, brand: string, band: number, rate: FeeRate): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `INSERT INTO fee_plans (merchant_id, kind, brand, band, rate_ppm, fixed)
       SELECT id, $2, $3, $4, $5, $6 FROM merchants WHERE id::text = lower($1)
       ON CONFLICT (merchant_id, kind, brand, band) DO UPDATE SET rate_ppm = EXCLUDED.rate_ppm, fixed = EXCLUDED.fixed, updated_at = now()
       RETURNING merchant_id`,
      [merchantId, kind, brand, band, rate.ratePpm, rate.fixed],
    );
    return rows.length > 0;
  }

  listByMerchant(merchantId: string): Promise<FeePlanRow[]> {
    return this.db.query(
      `SELECT kind, brand, band, rate_ppm, fixed FROM fee_plans WHERE merchant_id::text = lower($1) ORDER BY kind, brand, band`,
      [merchantId],
    );
  }

  async rateFor(merchantId: string, kind: MethodKind, brand: string, band: number, defaults: DefaultFeePlan): Promise<FeeRate> {
    const rows: FeePlanRow[] = await this.db.query(
      'SELECT rate_ppm, fixed FROM fee_plans WHERE merchant_id = $1 AND kind = $2 AND brand = $3 AND band = $4',
      [merchantId, kind, brand, band],
    );
    return rows[0] ? { ratePpm: rows[0].rate_ppm, fixed: Number(rows[0].fixed) } : defaults[kind];
  }
}
