import 'reflect-metadata';
import { CommandFactory } from 'nest-commander';
import { safeError } from '@app/platform/safe-error';
import { CliModule } from './cli.module';
import { runRemotely, runsRemotely } from './remote';

/** `npm run cli -- <command>`: JSON on stdout, progress and errors on stderr, exit 1 on failure. */
async function main(): Promise<void> {
  // GATEWAY_ADMIN_URL: the command runs on the admin app, with this operator's token; only the
  // break-glass commands run here, with the database login they need.
  const argv = process.argv.slice(2);
  if (runsRemotely(argv, process.env)) {
    process.exitCode = await runRemotely(argv, process.env);
    return;
  }
  const fail = (e: Error) => {
    process.stderr.write(JSON.stringify({ error: safeError(e).message }) + '\n');
    process.exit(1);
  };
  // abortOnError false: a failure while the module starts (Postgres unreachable, the wrong database
  // role in production) reaches the catch below and is said, instead of Nest's silent exit 1.
  const app = await CommandFactory.runWithoutClosing(CliModule, {
    logger: false,
    abortOnError: false,
    errorHandler: fail,
    serviceErrorHandler: fail,
    cliName: 'gateway',
  });
  await app.close();
}

main().catch((e) => {
  process.stderr.write(JSON.stringify({ error: safeError(e).message }) + '\n');
  process.exit(1);
});
