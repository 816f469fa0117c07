import { Command, CommandRunner, Option } from 'nest-commander';
import { DataSource } from 'typeorm';
import { PrunedTable, RetentionRepository } from '@app/persistence';
import { PRUNED_TABLES, RetentionPruner } from '@app/retention';
import { CliConfig } from '../config/cli.config';
import { CliError, printJson } from '../output';
import { Guarded } from '../operators/guarded';

/**
 * Runs the retention rules now (docs/operations/retention.md), each as its app's pass would:
 * batched deletes in short transactions, delivery_attempts' partitions dropped and created. A
 * table another pruner is working on right now is left to it ("skipped"). --dry-run counts the
 * rows past each age (and the partitions that would go or come) and changes nothing.
 */
@Guarded('operator', 'retention:run')
@Command({
  name: 'retention:run',
  description: 'Prune every table past its retention age now (RETENTION_*); --dry-run prints what would go; prints rows per table as JSON',
})
export class RetentionRunCommand extends CommandRunner {
  constructor(
    private readonly db: DataSource,
    private readonly config: CliConfig,
  ) {
    super();
  }

  async run(_args: string[], o: { dryRun?: boolean; table?: string[] }): Promise<void> {
    const unknown = (o.table ?? []).filter((t) => !(PRUNED_TABLES as string[]).includes(t));
    if (unknown.length) throw new CliError(`--table must be one of ${PRUNED_TABLES.join(', ')} (got ${unknown.join(', ')})`);
    const tables = o.table?.length ? (o.table as PrunedTable[]) : PRUNED_TABLES;
    const pruner = new RetentionPruner(new RetentionRepository(this.db), tables, this.config.base.retention);
    const passes = await pruner.run({ dry: o.dryRun === true });
    const failed = tables.filter((t) => !passes.some((p) => p.table === t));
    printJson({ dryRun: o.dryRun === true, tables: passes });
    if (failed.length) throw new CliError(`retention of ${failed.join(', ')} failed (see the warnings above)`);
  }

  @Option({ flags: '--dry-run', description: 'count what is past each age; delete nothing' })
  parseDryRun(): boolean {
    return true;
  }

  @Option({ flags: '--table <name>', description: `only this table (repeatable): ${PRUNED_TABLES.join(', ')}` })
  parseTable(v: string, previous: string[] = []): string[] {
    return [...previous, v];
  }
}
