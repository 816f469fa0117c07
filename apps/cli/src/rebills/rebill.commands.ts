import { Command, CommandRunner, Option } from 'nest-commander';
import { RebillState, toTransactionResponse } from '@app/contracts';
import { TypedClient } from '@app/messaging/typed-client';
import { MerchantsRepository, RebillRow, RebillsRepository } from '@app/persistence';
import { cardExpiresBeforeEnd, findRebillView, queueCharges, RebillLifecycle, RebillRunner } from '@app/rebills';
import { CliConfig } from '../config/cli.config';
import { merchantOption, publicIdFor } from '../merchants/merchant-option';
import { CliError, printJson } from '../output';
import { Guarded } from '../operators/guarded';

const STATES: readonly RebillState[] = ['active', 'suspended', 'cancelled', 'completed'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One rebill as the list prints it. */
function summaryOf(r: RebillRow, merchantId: string) {
  return {
    id: r.id.toUpperCase(),
    merchantId,
    reference: r.reference,
    state: r.state,
    amount: Number(r.amount),
    period: r.period,
    frequency: r.frequency,
    dateStart: r.date_start,
    dateEnd: r.date_end,
    nextCycle: r.next_cycle,
    nextAttempt: r.next_attempt,
    nextDueAt: r.next_due_at ? new Date(r.next_due_at).toISOString() : null,
    charging: r.open_transaction_id ? r.open_transaction_id.toUpperCase() : null,
    suspendedReason: r.suspended_reason,
    cardExpiresBeforeEnd: cardExpiresBeforeEnd(r),
    createdAt: new Date(r.created_at).toISOString(),
  };
}

@Guarded('viewer', 'rebill:list')
@Command({ name: 'rebill:list', description: "A merchant's rebills, newest first (JSON lines of the schedule and where it stands)" })
export class RebillListCommand extends CommandRunner {
  constructor(
    private readonly rebills: RebillsRepository,
    private readonly merchants: MerchantsRepository,
  ) {
    super();
  }

  async run(_args: string[], o: { merchant?: string; status?: string; limit?: string }): Promise<void> {
    const merchantId = await merchantOption(this.merchants, o.merchant);
    if (o.status !== undefined && !STATES.includes(o.status as RebillState))
      throw new CliError(`--status must be one of ${STATES.join(', ')}`);
    if (o.limit !== undefined && !/^\d{1,5}$/.test(o.limit)) throw new CliError('--limit must be a whole number up to 99999');
    const publicId = await publicIdFor(this.merchants, merchantId);
    const rows = await this.rebills.list({ merchantId, state: o.status as RebillState | undefined, limit: Number(o.limit ?? 100) });
    printJson(rows.map((r) => summaryOf(r, publicId)));
  }

  @Option({ flags: '--merchant <id>', description: 'the merchant, by id (as merchant:create printed it, or its UUID)', required: true })
  parseMerchant(v: string): string {
    return v;
  }

  @Option({ flags: '--status <state>', description: 'only rebills in this state: active, suspended, cancelled or completed' })
  parseStatus(v: string): string {
    return v;
  }

  @Option({ flags: '--limit <n>', description: 'at most this many (default 100)' })
  parseLimit(v: string): string {
    return v;
  }
}

@Guarded('viewer', 'rebill:show')
@Command({ name: 'rebill:show', description: 'One rebill with every charge so far, as report answers it to the merchant' })
export class RebillShowCommand extends CommandRunner {
  constructor(
    private readonly rebills: RebillsRepository,
    private readonly merchants: MerchantsRepository,
  ) {
    super();
  }

  async run(_args: string[], o: { id?: string }): Promise<void> {
    if (!o.id || !UUID.test(o.id)) throw new CliError('--id must be the rebill id (its transactionId)');
    const row = await this.rebills.find(undefined, o.id);
    if (!row) throw new CliError(`no rebill ${o.id}`);
    const view = (await findRebillView(this.rebills, undefined, o.id))!;
    const cycles = await this.rebills.chargesOf(row.id);
    printJson({
      ...summaryOf(row, await publicIdFor(this.merchants, row.merchant_id)),
      response: toTransactionResponse(view, 'report'),
      // Every try, dunning retries included (the response shows each cycle's latest).
      charges: cycles.map((c) => ({
        cycle: c.cycle,
        attempt: c.attempt,
        date: c.cycle_date,
        transactionId: c.transaction_id.toUpperCase(),
        merchantInitiated: c.merchant_initiated,
        status: c.status,
        errorCode: c.error_code,
        returnCode: c.processor?.returnCode ?? '',
      })),
    });
  }

  @Option({ flags: '--id <id>', description: 'the rebill id (the transactionId its creation answered)', required: true })
  parseId(v: string): string {
    return v;
  }
}

@Guarded('operator', 'rebill:run-due')
@Command({
  name: 'rebill:run-due',
  description:
    'Charge every rebill cycle (and dunning retry) due as of a time, earliest first, and wait for the outcomes: catch-up after an outage, or moving time in a test',
})
export class RebillRunDueCommand extends CommandRunner {
  constructor(
    private readonly lifecycle: RebillLifecycle,
    private readonly config: CliConfig,
  ) {
    super();
  }

  async run(_args: string[], o: { asOf?: string; timeoutS?: string; batch?: string }): Promise<void> {
    const asOf = o.asOf === undefined ? new Date() : new Date(o.asOf);
    if (Number.isNaN(asOf.getTime())) throw new CliError('--as-of must be an ISO 8601 time, e.g. 2027-01-01T00:00:00Z');
    // A time to come would charge every merchant's customers before their dates: only outside production (tests).
    if (asOf.getTime() > Date.now() + 60_000 && this.config.base.nodeEnv === 'production')
      throw new CliError('--as-of is in the future: that would charge cards before their dates, which production refuses');
    if (o.timeoutS !== undefined && !/^\d{1,5}$/.test(o.timeoutS)) throw new CliError('--timeout-s must be whole seconds');
    if (o.batch !== undefined && !/^\d{1,4}$/.test(o.batch)) throw new CliError('--batch must be a whole number up to 9999');
    // The charges go to the tokenizers on the queue, exactly as the tokenizers' own scheduler sends them.
    // Loaded here: the transport (BullMQ, Nest microservices) is this command's alone, and every other
    // command starts faster without it.
    const { queueClient } = await import('@app/boot/queue-client');
    const proxy = queueClient(this.config.base);
    const client = new TypedClient(proxy);
    try {
      const runner = new RebillRunner(this.lifecycle, queueCharges(client), {
        batch: Number(o.batch ?? 500),
        resendAfterS: 30,
      });
      const counts = await runner.runDue(asOf, Number(o.timeoutS ?? 120) * 1000);
      printJson({ asOf: asOf.toISOString(), ...counts });
      if (counts.open)
        throw new CliError(
          `${counts.open} charge(s) still undecided: the tokenizers did not answer in time (they are recorded and will be decided)`,
        );
    } finally {
      await proxy.close();
    }
  }

  @Option({ flags: '--as-of <time>', description: 'charge what is due at this ISO 8601 time (default: now)' })
  parseAsOf(v: string): string {
    return v;
  }

  @Option({ flags: '--timeout-s <seconds>', description: 'how long to wait for the outcomes (default 120)' })
  parseTimeout(v: string): string {
    return v;
  }

  @Option({ flags: '--batch <n>', description: 'charges opened per statement (default 500)' })
  parseBatch(v: string): string {
    return v;
  }
}
