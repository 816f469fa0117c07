import { Inject } from '@nestjs/common';
import { Command, CommandRunner, Option } from 'nest-commander';
import { ACQUIRER_CONNECTOR, AcquirerConnector, differencesOf, ReconcileDifference } from '@app/acquirer';
import { MerchantsRepository, TransactionsRepository } from '@app/persistence';
import { merchantOption } from '../merchants/merchant-option';
import { CliError, printJson } from '../output';
import { Guarded } from '../operators/guarded';

const PAGE = 1000;

@Guarded('viewer', 'acquirer:reconcile')
@Command({
  name: 'acquirer:reconcile',
  description:
    "Compare every decided transaction's status, captured and cancelled amounts with the acquirer's books; print each difference as JSON, exit 1 on any",
})
export class AcquirerReconcileCommand extends CommandRunner {
  constructor(
    private readonly transactions: TransactionsRepository,
    @Inject(ACQUIRER_CONNECTOR) private readonly acquirer: AcquirerConnector,
    private readonly merchants: MerchantsRepository,
  ) {
    super();
  }

  async run(_args: string[], o: { merchant?: string; since?: string; heldGraceS?: string }): Promise<void> {
    const merchantId = o.merchant === undefined ? undefined : await merchantOption(this.merchants, o.merchant);
    const since = o.since === undefined ? undefined : new Date(o.since);
    if (since && Number.isNaN(since.getTime())) throw new CliError('--since must be an ISO 8601 time, e.g. 2026-11-23T00:00:00Z');
    if (o.heldGraceS !== undefined && !/^\d{1,6}$/.test(o.heldGraceS)) throw new CliError('--held-grace-s must be whole seconds');
    const heldGraceMs = Number(o.heldGraceS ?? 120) * 1000;
    const now = new Date();
    // Changed since, on either side: a stray acquirer operation on a transaction the gateway left alone counts too.
    const alsoTids = since ? await this.acquirer.touchedSince(since) : undefined;
    // The acquirer keeps an authorization's books until its last call is this old (a sandbox prunes
    // its log): a transaction it holds no books for, unchanged on our side since then, cannot be
    // compared. One changed since, or one the acquirer still has books for, always is.
    const booksSince = this.acquirer.booksSince(now);
    const differences: ReconcileDifference[] = [];
    let transactions = 0;
    let pruned = 0;
    for (let after = '00000000-0000-0000-0000-000000000000'; ;) {
      const page = await this.transactions.pageForReconciliation(after, PAGE, { merchantId, since, alsoTids });
      if (!page.length) break;
      after = page[page.length - 1].id;
      transactions += page.length;
      const books = await this.acquirer.books(page.flatMap((t) => (t.tid ? [t.tid] : [])));
      // A difference names its merchant as the operator knows it: by public id.
      const publicIds = await this.merchants.publicIdsOf(page.map((t) => t.merchant_id));
      for (const t of page) {
        const book = t.tid ? books.get(t.tid) : undefined;
        if (!book && booksSince && t.updated_at < booksSince) {
          pruned += 1;
          continue;
        }
        const recorded = {
          id: t.id,
          merchantId: publicIds.get(t.merchant_id) ?? t.merchant_id,
          status: t.status,
          captured: Number(t.captured_amount),
          cancelled: Number(t.cancelled_amount),
          heldSince: t.held_since ?? undefined,
        };
        differences.push(...differencesOf(recorded, book, now, heldGraceMs));
      }
    }
    printJson({
      transactions: transactions - pruned,
      ...(booksSince ? { booksSince: booksSince.toISOString(), beyondBooks: pruned } : {}),
      differences,
    });
    if (differences.length) throw new CliError(`${differences.length} difference(s) between the gateway and the acquirer`);
  }

  @Option({
    flags: '--merchant <id>',
    description: 'only this merchant, by id (as merchant:create printed it, or its UUID); default: every transaction',
  })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--since <time>', description: 'only transactions changed since this ISO 8601 time, by the gateway or by the acquirer' })
  parseSince(v: string): string {
    return v;
  }

  @Option({
    flags: '--held-grace-s <seconds>',
    description: 'a transaction held by an operation for less than this is not compared yet (default 120)',
  })
  parseHeldGrace(v: string): string {
    return v;
  }
}
