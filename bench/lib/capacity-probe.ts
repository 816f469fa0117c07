import { readdirSync, readFileSync } from 'node:fs';
import Redis from 'ioredis';
import { Client } from 'pg';
import { PrivateServer } from '../../scripts/lib/local-servers';
import { waitUntil } from '../../scripts/lib/processes';
import { Counters, statementLabel } from './capacity-model';
import { cpuSecondsOf } from './cpu';
import { BenchStack } from './stack';

/** How long the capacity group waits for the pipeline to finish a round's sales. */
export const PIPELINE_TIMEOUT_MS = 180_000;

/** Each app's process plus Redis and Postgres counters, read at one moment. */
export interface Snapshot {
  at: number;
  counters: Counters;
  usedMemory: number;
}

/**
 * Reads the counters. Its own Postgres queries run as the superuser, whose statements are left
 * out of pg_stat_statements' figures; its own transactions are counted and taken off.
 */
export class Probe {
  private ownQueries = 0;

  private constructor(
    private readonly stack: BenchStack,
    private readonly pg: Client,
    private readonly redis: Redis,
    private readonly postmaster: number,
  ) {}

  static async open(stack: BenchStack, pgServer: PrivateServer): Promise<Probe> {
    const pg = new Client({ connectionString: stack.env.DATABASE_URL });
    await pg.connect();
    await pg.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const redis = new Redis(stack.env.REDIS_URL as string);
    return new Probe(stack, pg, redis, pgServer.pid()!);
  }

  private async q<T extends object>(sql: string, params: unknown[] = []): Promise<T[]> {
    this.ownQueries++;
    return (await this.pg.query<T>(sql, params)).rows;
  }

  async versions(): Promise<{ postgres: string; redis: string }> {
    const [{ server_version }] = await this.q<{ server_version: string }>('SHOW server_version');
    const redis = /redis_version:(\S+)/.exec(await this.redis.info('server'))?.[1] ?? '?';
    return { postgres: server_version, redis };
  }

  async checkpoint(): Promise<void> {
    await this.q('CHECKPOINT');
  }

  async snapshot(): Promise<Snapshot> {
    const c: Counters = {};
    for (const app of this.stack.apps) c[`cpu.${app.name}`] = cpuSecondsOf(app.proc.pid!);
    c['cpu.postgres'] = postgresCpuSeconds(this.postmaster);

    const [db] = await this.q<{ commits: string; wal: string }>(
      `SELECT xact_commit AS commits, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') AS wal FROM pg_stat_database WHERE datname = current_database()`,
    );
    c['pg.commits'] = Number(db.commits) - this.ownQueries;
    c['pg.wal-bytes'] = Number(db.wal);
    const [wal] = await this.q<{ syncs: string; fpi: string; records: string }>(
      'SELECT wal_sync AS syncs, wal_fpi AS fpi, wal_records AS records FROM pg_stat_wal',
    );
    c['pg.wal-syncs'] = Number(wal.syncs);
    c['pg.wal-fpi'] = Number(wal.fpi);
    c['pg.wal-records'] = Number(wal.records);
    const [bg] = await this.q<{ pages: string }>(
      'SELECT buffers_checkpoint + buffers_clean + buffers_backend AS pages FROM pg_stat_bgwriter',
    );
    c['pg.pages-written'] = Number(bg.pages);
    // The apps' statements only (each app is its own role; this probe is the superuser).
    const statements = await this.q<{ query: string; calls: string; ms: number }>(
      `SELECT s.query, s.calls, s.total_exec_time AS ms FROM pg_stat_statements s
       JOIN pg_roles r ON r.oid = s.userid
       WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND NOT r.rolsuper`,
    );
    c['pg.exec-ms'] = 0;
    for (const s of statements) {
      const key = `pg.stmt.${statementLabel(s.query)}`;
      c[key] = (c[key] ?? 0) + Number(s.calls);
      c['pg.exec-ms'] += s.ms;
    }
    for (const t of await this.q<{ name: string; n: string }>(
      `SELECT schemaname || '.' || relname AS name, n_tup_ins + n_tup_upd + n_tup_del AS n FROM pg_stat_user_tables`,
    )) {
      if (Number(t.n) > 0) c[`pg.rows.${t.name}`] = Number(t.n);
    }

    // commandstats counts the commands run inside scripts too; the probe's own INFO is left out.
    const info = (await this.redis.call('INFO', 'commandstats', 'cpu', 'memory')) as string;
    const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
    c['cpu.redis'] = field('used_cpu_sys') + field('used_cpu_user');
    c['cpu.redis-main'] = field('used_cpu_sys_main_thread') + field('used_cpu_user_main_thread');
    for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      if (m[1] !== 'info') c[`redis.cmd.${m[1]}`] = Number(m[2]);
    }
    return { at: Date.now(), counters: c, usedMemory: field('used_memory') };
  }

  /** Every event published, every captured sale settled, no webhook still to send. */
  async pipelineDone(): Promise<void> {
    await waitUntil(
      'the sales to be settled and their webhooks sent',
      async () => {
        const [r] = await this.q<{ n: number }>(
          `SELECT (SELECT count(*) FROM outbox WHERE published_at IS NULL)
                + (SELECT count(*) FROM transactions t WHERE t.merchant_id = $1 AND t.captured_amount > 0
                     AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.transaction_id = t.id))
                + (SELECT count(*) FROM deliveries WHERE status IN ('pending', 'sending')) AS n`,
          [this.stack.merchantInternalId],
        );
        return Number(r.n) === 0;
      },
      PIPELINE_TIMEOUT_MS,
      250,
    );
  }

  async outboxPublished(): Promise<void> {
    await waitUntil(
      'the outbox to be published',
      async () => Number((await this.q<{ n: string }>('SELECT count(*) AS n FROM outbox WHERE published_at IS NULL'))[0].n) === 0,
      PIPELINE_TIMEOUT_MS,
      250,
    );
  }

  async close(): Promise<void> {
    this.redis.disconnect();
    await this.pg.end();
  }
}

/**
 * CPU seconds of a Postgres cluster: the postmaster, every live backend and background process
 * (its children), and the children that already exited (the postmaster's cutime/cstime).
 */
function postgresCpuSeconds(postmaster: number): number {
  let total = cpuSecondsOf(postmaster, true);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) total += cpuSecondsOf(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}
