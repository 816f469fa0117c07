import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';

/** The roles the operators table's CHECK allows; which allows what is libs/operators' rule. */
export type OperatorRoleColumn = 'viewer' | 'operator' | 'admin';

export interface OperatorRow {
  id: string;
  name: string;
  role: OperatorRoleColumn;
  created_at: Date;
  created_by: string | null;
  revoked_at: Date | null;
  revoked_by: string | null;
  last_used_at: Date | null;
}

/** Every column but the token hash, which never leaves the database. */
const COLUMNS = 'id, name, role, created_at, created_by, revoked_at, revoked_by, last_used_at';
/** One lock for every change that must see "is there an active admin?" stay true while it runs. */
const ADMINS_LOCK = `SELECT pg_advisory_xact_lock(hashtext('operators.admins'))`;

export type RevokeOutcome = { revoked: OperatorRow } | { problem: 'not_found' | 'already_revoked' | 'last_admin' };

/** The people who run the gateway: a role each, a personal token stored as its SHA-256 only. */
@Injectable()
export class OperatorsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The operator a token hash belongs to, revoked or not (the caller refuses revoked ones). */
  async findByTokenHash(hash: Buffer): Promise<OperatorRow | undefined> {
    const rows: OperatorRow[] = await this.db.query(`SELECT ${COLUMNS} FROM operators WHERE token_hash = $1`, [hash]);
    return rows[0];
  }

  /** last_used_at, written at most once a minute per operator so a busy dashboard costs no writes. */
  async touch(id: string): Promise<void> {
    await this.db.query(
      `UPDATE operators SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [id],
    );
  }

  async hasActiveAdmin(m: EntityManager | DataSource = this.db): Promise<boolean> {
    const rows: unknown[] = await m.query(`SELECT 1 FROM operators WHERE role = 'admin' AND revoked_at IS NULL LIMIT 1`);
    return rows.length > 0;
  }

  /**
   * A new operator. `createdBy` undefined is the bootstrap: allowed only while no active admin
   * exists, checked under a lock so two bootstraps racing create one admin. Returns 'name_taken'
   * (names stay taken after a revocation: the trail refers to them) or 'admin_exists'.
   */
  async create(o: {
    name: string;
    role: OperatorRoleColumn;
    tokenHash: Buffer;
    createdBy?: string;
  }): Promise<OperatorRow | 'name_taken' | 'admin_exists'> {
    return this.db.transaction(async (m) => {
      await m.query(ADMINS_LOCK);
      if (o.createdBy === undefined && (o.role !== 'admin' || (await this.hasActiveAdmin(m)))) return 'admin_exists';
      const rows: OperatorRow[] = await m.query(
        `INSERT INTO operators (id, name, role, token_hash, created_by) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`,
        [randomUUID(), o.name, o.role, o.tokenHash, o.createdBy ?? null],
      );
      return rows[0] ?? 'name_taken';
    });
  }

  /**
   * Revokes at once (the next request or command with the token is refused) and ends the
   * operator's console sessions; never the last active admin.
   */
  async revoke(name: string, by: string): Promise<RevokeOutcome> {
    return this.db.transaction(async (m) => {
      await m.query(ADMINS_LOCK);
      const [row]: OperatorRow[] = await m.query(`SELECT ${COLUMNS} FROM operators WHERE name = $1 FOR UPDATE`, [name]);
      if (!row) return { problem: 'not_found' };
      if (row.revoked_at) return { problem: 'already_revoked' };
      if (row.role === 'admin') {
        const [{ n }]: { n: number }[] = await m.query(
          `SELECT count(*)::int AS n FROM operators WHERE role = 'admin' AND revoked_at IS NULL`,
        );
        if (n <= 1) return { problem: 'last_admin' };
      }
      const [[revoked]]: [OperatorRow[], number] = await m.query(
        `UPDATE operators SET revoked_at = now(), revoked_by = $2 WHERE id = $1 RETURNING ${COLUMNS}`,
        [row.id, by],
      );
      // Their console sessions end with it (the console also refuses a revoked operator on every request).
      await m.query(`UPDATE console_sessions SET ended_at = now() WHERE operator_id = $1 AND ended_at IS NULL`, [row.id]);
      return { revoked };
    });
  }

  async list(): Promise<(OperatorRow & { created_by_name: string | null; revoked_by_name: string | null })[]> {
    return this.db.query(
      `SELECT o.id, o.name, o.role, o.created_at, o.created_by, c.name AS created_by_name, o.revoked_at, o.revoked_by, r.name AS revoked_by_name, o.last_used_at
       FROM operators o LEFT JOIN operators c ON c.id = o.created_by LEFT JOIN operators r ON r.id = o.revoked_by
       ORDER BY o.created_at, o.name`,
    );
  }
}
