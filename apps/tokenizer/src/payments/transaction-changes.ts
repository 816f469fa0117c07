import { Injectable } from '@nestjs/common';
import { TransactionView } from '@app/contracts';
import { OutboxRelay } from '@app/outbox';
import { TransactionRow, TransactionsRepository, Transition } from '@app/persistence';
import { AcquirerRouter, NoRouteError, Route } from '@app/acquirer';
import { inSpan } from '@app/platform/tracing';
import { eventsOf, notFound, SettleEvent, viewOfRow } from './payment-answers';

/** What the sale path and the money operations share: a transaction's route, and recording a sale's decision. */
@Injectable()
export class TransactionChanges {
  constructor(
    private readonly transactions: TransactionsRepository,
    private readonly relay: OutboxRelay,
    private readonly router: AcquirerRouter,
  ) {}

  /** The connector and account of a transaction, or why it has none (a NoRouteError's message). */
  async routeOf(row: TransactionRow): Promise<Route | string> {
    try {
      return await this.router.route(row.merchant_id, row.acquirer);
    } catch (e) {
      if (e instanceof NoRouteError) return e.message;
      throw e;
    }
  }

  async connectorNameOf(row: TransactionRow): Promise<string> {
    const route = await this.routeOf(row);
    return typeof route === 'string' ? 'none' : route.connector.name;
  }

  /**
   * Records a sale's decision and its events in one statement. When another change won the race
   * (a redelivered job), the recorded outcome is the answer.
   */
  async apply(row: TransactionRow, change: Transition, extra: SettleEvent[]): Promise<TransactionView> {
    let recorded = 0;
    // The change's span: its events (settlement, the webhook) carry it, so they hang under it.
    const updated = await inSpan('status change', { attributes: { 'gateway.status': change.status } }, () =>
      this.transactions.transition(row, change, (next) => {
        const out = eventsOf(next, extra);
        recorded = out.length;
        return out;
      }),
    );
    if (updated) {
      // A change with nothing to publish (a silent decline) needs no relay pass.
      if (recorded) this.relay.poke();
      return viewOfRow(updated);
    }
    return viewOfRow(await this.load(row.merchant_id, row.id));
  }

  async load(merchantId: string, id: string): Promise<TransactionRow> {
    const row = await this.transactions.findByMerchantAndId(merchantId, id.toLowerCase());
    if (!row) throw notFound();
    return row;
  }

  /** Asks the outbox relay for a pass now (a change with events was recorded elsewhere). */
  poke(): void {
    this.relay.poke();
  }
}
