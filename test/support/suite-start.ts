import { cleanLeftovers } from './leftovers';

/**
 * Before each integration suite (setupFilesAfterEnv): whatever an earlier suite of this jest worker
 * left running (a failure before its afterAll) is ended first. Left alone, its apps would keep
 * consuming the lane's queues and decide the next suite's jobs.
 */
beforeAll(async () => {
  const cleaned = await cleanLeftovers(process.env.TEST_LEFTOVERS_DIR, true);
  if (cleaned.length)
    process.stdout.write(`\nbefore ${expect.getState().testPath}: ended what an earlier suite left\n  ${cleaned.join('\n  ')}\n`);
});
