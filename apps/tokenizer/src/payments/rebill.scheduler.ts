import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { TypedClient } from '@app/messaging';
import { queueCharges, RebillLifecycle, RebillRunner } from '@app/rebills';
import { PeriodicPass, safeErrorText } from '@app/platform';
import { TokenizerConfig } from '../config/tokenizer.config';

export const REBILL_CLIENT = Symbol('REBILL_CLIENT');

/**
 * Charges the rebill cycles that fall due, every REBILL_POLL_MS, in every tokenizer that has it
 * on (see RebillRunner for why any number of them charge each cycle once). A charge goes on the
 * queue as a card.authorize job, so every tokenizer replica takes a share of a busy minute.
 */
@Injectable()
export class RebillScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RebillScheduler.name);
  private readonly periodic = new PeriodicPass(() => this.tick());
  private readonly runner: RebillRunner;

  constructor(
    lifecycle: RebillLifecycle,
    private readonly config: TokenizerConfig,
    @Inject(REBILL_CLIENT) client: TypedClient,
  ) {
    this.runner = new RebillRunner(lifecycle, queueCharges(client), {
      batch: config.rebillBatch,
      resendAfterS: config.rebillResendAfterS,
    });
  }

  onApplicationBootstrap(): void {
    if (this.config.rebillPollMs > 0) this.periodic.start(this.config.rebillPollMs);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.periodic.stop();
  }

  /** One pass now (tests). */
  sweep(): Promise<number> {
    return this.periodic.run();
  }

  private async tick(): Promise<number> {
    let opened = 0;
    try {
      // A busy minute is worked off in full batches, back to back.
      for (;;) {
        const c = await this.runner.pass(new Date());
        opened += c.opened;
        if (c.opened || c.resent || c.unanswered) this.logger.log(c, 'rebill pass');
        if (c.opened < this.config.rebillBatch) return opened;
      }
    } catch (e) {
      // Postgres or Redis down: the next pass tries again.
      this.logger.warn(`rebill pass failed: ${safeErrorText(e)}`);
      return opened;
    }
  }
}
