import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** An event waiting in the outbox (written with the change it tells of, by the transactions repository). */
export interface OutboxRow {
  id: string;
  event: string;
  payload: unknown;
}

/** The statements the outbox relay (libs/outbox) reads and marks events with. */
@Injectable()
export class OutboxRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * In one transaction: locks up to `limit` unpublished events, oldest first, skipping those
   * another relay holds; hands them to `publish`; marks them published. If `publish` throws,
   * nothing is marked and the locks go with the rollback. Resolves with how many were handed over.
   */
  async publishBatch(limit: number, publish: (rows: OutboxRow[]) => Promise<void>): Promise<number> {
    return this.db.transaction(async (tx) => {
      const rows: OutboxRow[] = await tx.query(
        'SELECT id, event, payload FROM outbox WHERE published_at IS NULL ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED',
        [limit],
      );
      await publish(rows);
      if (rows.length) await tx.query('UPDATE outbox SET published_at = now() WHERE id = ANY($1::uuid[])', [rows.map((r) => r.id)]);
      return rows.length;
    });
  }

  /**
   * Seconds since the oldest event not yet published was written (0 when none waits): the relay's
   * lag, read on each scrape. One index lookup (outbox_unpublished), bounded to 1 s by the server.
   */
  async oldestUnpublishedAgeSeconds(): Promise<number> {
    return this.db.transaction(async (tx) => {
      await tx.query(`SET LOCAL statement_timeout = '1s'`);
      const rows: { age: number | null }[] = await tx.query(
        'SELECT EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS age FROM outbox WHERE published_at IS NULL',
      );
      return Math.max(0, rows[0]?.age ?? 0);
    });
  }
}
