import { Command, CommandRunner, Option } from 'nest-commander';
import { AuditTrail } from '@app/operators';
import { CliError, printJson } from '../output';
import { Guarded } from './guarded';

@Guarded('admin', 'audit:list')
@Command({ name: 'audit:list', description: 'The audit trail, newest first, as JSON' })
export class AuditListCommand extends CommandRunner {
  constructor(private readonly audit: AuditTrail) {
    super();
  }

  async run(_args: string[], o: { since?: string; operator?: string; action?: string; limit?: string }): Promise<void> {
    const since = o.since === undefined ? undefined : new Date(o.since);
    if (since && Number.isNaN(since.getTime())) throw new CliError('--since must be an ISO 8601 time, e.g. 2026-11-23T00:00:00Z');
    const limit = Number(o.limit ?? 100);
    if (!/^\d+$/.test(o.limit ?? '100') || limit < 1 || limit > 10_000)
      throw new CliError('--limit must be a whole number from 1 to 10000');
    const rows = await this.audit.list({ since, operator: o.operator, action: o.action, limit });
    printJson(
      rows.map((e) => ({
        id: e.id,
        at: e.at,
        operator: e.operator_name,
        action: e.action,
        target: e.target,
        origin: e.origin,
        outcome: e.outcome,
        errorClass: e.error_class,
        attemptId: e.attempt_id,
        detail: e.detail,
      })),
    );
  }

  @Option({ flags: '--since <time>', description: 'ISO 8601: only events at or after it' })
  parseSince(v: string): string {
    return v;
  }

  @Option({ flags: '--operator <name>', description: "only this operator's events" })
  parseOperator(v: string): string {
    return v;
  }

  @Option({ flags: '--action <action>', description: 'only this action, e.g. fees:set or webhooks:replay' })
  parseAction(v: string): string {
    return v;
  }

  @Option({ flags: '--limit <n>', description: 'at most this many events (default 100)' })
  parseLimit(v: string): string {
    return v;
  }
}
