import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { OperatorRow } from './operators.repository';

/** A console session id: 128 random bits in base64url (22 characters). Only its SHA-256 is stored. */
const SESSION_ID = /^[A-Za-z0-9_-]{22}$/;

export const looksLikeSessionId = (v: string | undefined): v is string => !!v && SESSION_ID.test(v);
const idHash = (id: string): Buffer => createHash('sha256').update(id).digest();

/** The operator a valid session belongs to (revoked or not: the caller refuses revoked ones). */
export interface OpenSession {
  operator: OperatorRow;
  lastSeenAt: Date;
}

/** The console's sign-ins (console_sessions): opened at sign-in, ended at sign-out or by operator:revoke. */
@Injectable()
export class ConsoleSessionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * A new session for `operatorId` lasting `ttlS` seconds; returns its id (for the cookie, never
   * stored). Sessions ended or expired long ago are the api's retention pass's (RETENTION_CONSOLE_SESSIONS).
   */
  async open(operatorId: string, ttlS: number, ip: string | undefined): Promise<string> {
    const id = randomBytes(16).toString('base64url');
    await this.db.query(
      `INSERT INTO console_sessions (id_hash, operator_id, expires_at, created_ip) VALUES ($1, $2, now() + make_interval(secs => $3), $4)`,
      [idHash(id), operatorId, ttlS, ip?.slice(0, 64) ?? null],
    );
    return id;
  }

  /** The operator of a session that is neither ended nor expired, read with it in one statement. */
  async find(id: string): Promise<OpenSession | undefined> {
    if (!looksLikeSessionId(id)) return undefined;
    const rows: (OperatorRow & { session_last_seen_at: Date })[] = await this.db.query(
      `SELECT o.id, o.name, o.role, o.created_at, o.created_by, o.revoked_at, o.revoked_by, o.last_used_at, s.last_seen_at AS session_last_seen_at
       FROM console_sessions s JOIN operators o ON o.id = s.operator_id
       WHERE s.id_hash = $1 AND s.ended_at IS NULL AND s.expires_at > now()`,
      [idHash(id)],
    );
    if (!rows[0]) return undefined;
    const { session_last_seen_at: lastSeenAt, ...operator } = rows[0];
    return { operator, lastSeenAt };
  }

  /** last_seen_at, written at most once a minute (the caller checks the value find() read). */
  async touch(id: string): Promise<void> {
    await this.db.query(
      `UPDATE console_sessions SET last_seen_at = now() WHERE id_hash = $1 AND last_seen_at < now() - interval '1 minute'`,
      [idHash(id)],
    );
  }

  /** Sign-out: the session is refused from now on, whoever holds its cookie. */
  async end(id: string): Promise<void> {
    if (!looksLikeSessionId(id)) return;
    await this.db.query(`UPDATE console_sessions SET ended_at = now() WHERE id_hash = $1 AND ended_at IS NULL`, [idHash(id)]);
  }
}
