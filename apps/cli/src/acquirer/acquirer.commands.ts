import { Command, CommandRunner, Option } from 'nest-commander';
import type { AcquirerBook, SaleBooks, SaleRef } from '@app/acquirer/acquirer.connector';
import { differencesOf, heldBy, ReconcileDifference } from '@app/acquirer/reconcile';
import { AcquirerRouter, NoRouteError, Route } from '@app/acquirer/router';
import { AcquirerRouterRef } from './acquirer-router.ref';
import { MerchantsRepository, ReconciliationRow, TransactionsRepository } from '@app/persistence';
import { merchantOption } from '../merchants/merchant-option';
import { CliError, printJson } from '../output';
import { Guarded } from '../operators/guarded';

const PAGE = 1000;

@Guarded('viewer', 'acquirer:reconcile')
@Command({
  name: 'acquirer:reconcile',
  description:
    "Compare every decided transaction's status, captured and cancelled amounts with its acquirer's books (the sandbox's, Cielo's or e.Rede's, through the merchant's account); print each difference as JSON, exit 1 on any",
})
export class AcquirerReconcileCommand extends CommandRunner {
  constructor(
    private readonly transactions: TransactionsRepository,
    private readonly routers: AcquirerRouterRef,
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
    // Changed since, on either side: a stray acquirer operation on a transaction the gateway left
    // alone counts too (only the sandbox can list what it touched; Cielo and e.Rede answer queries
    // by sale: every charge under each recorded sale's order id is read, so a create the gateway
    // never recorded shows as an orphan of its sale).
    const router = await this.routers.get();
    const sandbox = router.connector('sandbox');
    const alsoTids = since && sandbox.touchedSince ? await sandbox.touchedSince(since) : undefined;
    const differences: ReconcileDifference[] = [];
    const beyond = new Map<string, { booksSince: string; transactions: number }>();
    let transactions = 0;
    let unroutable = 0;
    for (let after = '00000000-0000-0000-0000-000000000000'; ;) {
      const page = await this.transactions.pageForReconciliation(after, PAGE, { merchantId, since, alsoTids });
      if (!page.length) break;
      after = page[page.length - 1].id;
      // A difference names its merchant as the operator knows it: by public id.
      const publicIds = await this.merchants.publicIdsOf(page.map((t) => t.merchant_id));
      for (const [route, rows] of await this.byRoute(page)) {
        if (!route) {
          unroutable += rows.length;
          continue;
        }
        const books = await this.booksOf(route, rows);
        // The acquirer answers for sales this recent (Cielo: three months; a sandbox prunes its log):
        // one it holds no books for, unchanged on our side since then, cannot be compared.
        const booksSince = route.connector.booksSince(now);
        for (const t of rows) {
          const book = books.get(t.id);
          // A sale recorded without a tid at the sandbox never reached it (it decides in the call
          // that records); at Cielo or e.Rede it was looked up by its order id, as far back as they answer.
          const lookedUp = !!t.tid || route.connector.name !== 'sandbox';
          if (!book && lookedUp && booksSince && t.updated_at < booksSince) {
            const b = beyond.get(route.connector.name) ?? { booksSince: booksSince.toISOString(), transactions: 0 };
            b.transactions += 1;
            beyond.set(route.connector.name, b);
            continue;
          }
          transactions += 1;
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
    }
    printJson({
      transactions,
      ...(beyond.size ? { beyondBooks: Object.fromEntries(beyond) } : {}),
      ...(unroutable ? { unroutable } : {}),
      differences,
    });
    if (differences.length) throw new CliError(`${differences.length} difference(s) between the gateway and the acquirer`);
    if (unroutable)
      throw new CliError(`${unroutable} transaction(s) could not be compared: their merchant has no account at their acquirer now`);
  }

  /** The page's transactions by the connector and account that decided them (undefined: none now). */
  private async byRoute(page: ReconciliationRow[]): Promise<Map<Route | undefined, ReconciliationRow[]>> {
    const out = new Map<Route | undefined, ReconciliationRow[]>();
    for (const t of page) {
      const route = await routeOrNone(await this.routers.get(), t.merchant_id, t.acquirer);
      const rows = out.get(route) ?? [];
      rows.push(t);
      out.set(route, rows);
    }
    return out;
  }

  /**
   * The books of a page's sales at their acquirer, by transaction id. Sales without a tid are asked
   * too: Cielo and e.Rede look them up by the order id their create carried (its answer was lost and
   * the sale declined, 101 or 102, yet the create may have landed later); the sandbox skips them.
   */
  private booksOf(route: Route, rows: ReconciliationRow[]): Promise<Map<string, SaleBooks>> {
    return route.connector.books(
      rows.map((t) => ({ tid: t.tid ?? undefined, saleRef: t.sale_ref ?? undefined, transactionId: t.id, account: route.account })),
    );
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

/** The connector and account of a merchant's acquirer code now; undefined when it has none. */
function routeOrNone(router: AcquirerRouter, merchantId: string, acquirer: number): Promise<Route | undefined> {
  return router.route(merchantId, acquirer).catch((e: unknown) => {
    if (e instanceof NoRouteError) return undefined;
    throw e;
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Voids one orphan charge acquirer:reconcile reported: a charge Cielo or e.Rede holds under a
 * sale's order id that the gateway never recorded. The books are read again first and only a
 * charge they still show as an orphan holding money is voided (whole), never the sale the gateway
 * recorded: a charge named by mistake is refused without acting. The gate audits every run.
 */
@Guarded('operator', 'acquirer:void-orphan')
@Command({
  name: 'acquirer:void-orphan',
  description:
    "Void whole, at Cielo or e.Rede, a charge acquirer:reconcile reported as an 'orphan' of a transaction (by its saleRef or tid); never the charge the gateway recorded",
})
export class AcquirerVoidOrphanCommand extends CommandRunner {
  constructor(
    private readonly transactions: TransactionsRepository,
    private readonly routers: AcquirerRouterRef,
    private readonly merchants: MerchantsRepository,
  ) {
    super();
  }

  async run(_args: string[], o: { merchant?: string; transaction?: string; charge?: string }): Promise<void> {
    const merchantId = await merchantOption(this.merchants, o.merchant);
    if (!o.transaction || !UUID.test(o.transaction))
      throw new CliError('--transaction must be the transactionId the orphan difference names');
    if (!o.charge || !/^[\w-]{1,64}$/.test(o.charge))
      throw new CliError("--charge must be the orphan's saleRef (Cielo's PaymentId) or tid");
    const t = await this.transactions.findByMerchantAndId(merchantId, o.transaction.toLowerCase());
    if (!t || t.status === 0) throw new CliError(`--transaction: this merchant has no decided transaction ${o.transaction.toUpperCase()}`);
    const route = await routeOrNone(await this.routers.get(), t.merchant_id, t.acquirer);
    if (!route) throw new CliError('the merchant has no account at this acquirer now: its books cannot be read');
    const sale: SaleRef = {
      tid: t.processor?.tid || undefined,
      saleRef: t.processor?.saleRef,
      transactionId: t.id,
      account: route.account,
    };
    const charge = o.charge;
    const orphan = async (): Promise<AcquirerBook | undefined> =>
      (await route.connector.books([sale])).get(t.id)?.others.find((b) => heldBy(b) > 0 && (b.saleRef === charge || b.tid === charge));
    const found = await orphan();
    if (!found)
      throw new CliError(`no orphan charge ${charge} holding money under ${t.id.toUpperCase()}: nothing done (run acquirer:reconcile)`);
    const result = await route.connector.cancel({
      operationKey: `${t.id}-orphan-${charge}`,
      tid: found.tid,
      saleRef: found.saleRef,
      transactionId: t.id,
      account: route.account,
    });
    const left = await orphan();
    printJson({
      transactionId: t.id.toUpperCase(),
      tid: found.tid,
      ...(found.saleRef ? { saleRef: found.saleRef } : {}),
      held: heldBy(found),
      voided: !left,
      returnCode: result.returnCode,
      returnMessage: result.returnMessage,
    });
    if (left)
      throw new CliError(`the acquirer refused the void or does not show it yet (${result.returnCode}): run acquirer:reconcile again`);
  }

  @Option({ flags: '--merchant <id>', description: 'the merchant, by id (as merchant:create printed it, or its UUID)' })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--transaction <id>', description: 'the transactionId the orphan difference names' })
  parseTransaction(v: string): string {
    return v;
  }

  @Option({ flags: '--charge <ref>', description: "the orphan's saleRef (Cielo's PaymentId) or, on e.Rede, its tid" })
  parseCharge(v: string): string {
    return v;
  }
}
