import type { INestApplication, LoggerService } from '@nestjs/common';
import { safeErrorText } from './safe-error';

/**
 * Graceful stop on SIGTERM/SIGINT. Nest's own shutdown hooks close the database before the
 * servers, which would fail whatever is still in flight; here the intake stops first (`drain`:
 * the HTTP server finishing its requests, or the queue workers finishing their jobs), and only
 * then does the app close its connections.
 */
export function drainOnSignals(app: INestApplication, logger: LoggerService, drain: () => Promise<unknown>): void {
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal}: draining in-flight work`);
    try {
      await drain();
      await app.close();
      logger.log('stopped cleanly');
      process.exit(0);
    } catch (e) {
      logger.error(`unclean stop: ${safeErrorText(e)}`);
      process.exit(1);
    }
  };
  // stop() catches what drain() and close() throw itself; `void` only tells the listener not to wait.
  process.once('SIGTERM', (signal) => void stop(signal));
  process.once('SIGINT', (signal) => void stop(signal));
}
