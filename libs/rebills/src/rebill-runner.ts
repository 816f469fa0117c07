import { lastValueFrom } from 'rxjs';
import { AuthorizeRequest, Patterns } from '@app/contracts';
import type { TypedClient } from '@app/messaging/typed-client';
import { withJobId } from '@app/messaging/job-envelope';
import type { AdvanceResult, RebillsRepository } from '@app/persistence';
import { chargeRequest } from './charges';
import { RebillLifecycle } from './rebill-lifecycle';

/** Sends one charge's authorization (card.authorize, job id = the charge's transaction id) and waits for its decision. */
export type SendCharge = (req: AuthorizeRequest) => Promise<unknown>;

/** Sends charges on the queue as card.authorize jobs whose id is the charge's: a charge sent twice is one job. */
export const queueCharges =
  (client: TypedClient): SendCharge =>
  (req) =>
    lastValueFrom(client.send(Patterns.CardAuthorize, withJobId(req, req.transactionId)));

export interface RunnerOptions {
  /** Charges opened per statement (and sent at once). */
  batch: number;
  /** An open charge still undecided after this long has its authorization sent again (same job id). */
  resendAfterS: number;
}

export interface PassCounts {
  opened: number;
  advanced: number;
  resent: number;
  /** Of the charges sent in this pass, how many the tokenizer did not answer (decided later, or re-sent). */
  unanswered: number;
}

/**
 * The rebill scheduler's pass, shared by every tokenizer (on a timer, at the present time) and by
 * `rebill:run-due --as-of` (at a given time). Postgres is the record: a pass
 * 1. moves on the rebills whose open charge was decided but not followed up (a tokenizer died
 *    between recording the decision and moving the rebill on);
 * 2. sends again the authorization of charges left undecided for long (their job was lost; the
 *    same job id and acquirer operation key make a repeat the same charge);
 * 3. opens the next charge of each due rebill (oldest due first) and sends it on the queue.
 * However many runners run, a charge is opened once (row lock and the charge id), and a rebill
 * moves on once per decided charge (compare-and-set), so no cycle is charged twice or skipped.
 */
export class RebillRunner {
  private readonly rebills: RebillsRepository;

  constructor(
    private readonly lifecycle: RebillLifecycle,
    private readonly send: SendCharge,
    private readonly opts: RunnerOptions,
  ) {
    this.rebills = lifecycle.repository;
  }

  async pass(asOf: Date): Promise<PassCounts> {
    const counts: PassCounts = { opened: 0, advanced: 0, resent: 0, unanswered: 0 };
    counts.advanced = await this.advanceDecided();
    const stale = await this.rebills.findUndecidedOpen(this.opts.resendAfterS, this.opts.batch);
    counts.resent = stale.length;
    const opened = await this.lifecycle.openDue(asOf, this.opts.batch);
    counts.opened = opened.length;
    // A re-sent job usually still exists (its reply goes to whoever sent it first): not waited for.
    for (const c of stale) this.send(chargeRequest(c)).catch(() => undefined);
    const answers = await Promise.allSettled(opened.map((c) => this.send(chargeRequest(c))));
    counts.unanswered = answers.filter((a) => a.status === 'rejected').length;
    // A tokenizer moves its rebill on before answering; one that could not is moved on here.
    counts.advanced += await this.advanceDecided();
    return counts;
  }

  /**
   * Charges everything due at `asOf`, including the cycles that fall due as earlier ones are
   * charged (catch-up), and waits for their decisions, up to `timeoutMs`.
   */
  async runDue(asOf: Date, timeoutMs: number): Promise<PassCounts & { open: number }> {
    const total: PassCounts = { opened: 0, advanced: 0, resent: 0, unanswered: 0 };
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const c = await this.pass(asOf);
      for (const k of Object.keys(total) as (keyof PassCounts)[]) total[k] += c[k];
      if (c.opened || c.advanced) continue;
      const open = await this.rebills.countOpen();
      if (!open || Date.now() >= deadline) return { ...total, open };
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private async advanceDecided(): Promise<number> {
    let n = 0;
    for (;;) {
      const decided = await this.rebills.findDecidedOpen(this.opts.batch);
      if (!decided.length) return n;
      const results = await Promise.all(decided.map((d) => this.lifecycle.advance(d.rebill_id, d.transaction_id)));
      const moved = results.filter((r): r is AdvanceResult => r !== undefined).length;
      n += moved;
      // Locked by someone else (who is moving them on): leave them to that holder.
      if (!moved) return n;
    }
  }
}
