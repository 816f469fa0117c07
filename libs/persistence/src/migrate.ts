import { safeErrorText } from '@app/platform/safe-error';
import dataSource from './data-source';

/** `npm run migrate`: applies pending migrations; safe to run again. */
async function main(): Promise<void> {
  await dataSource.initialize();
  try {
    const ran = await dataSource.runMigrations({ transaction: 'each' });
    process.stdout.write(JSON.stringify({ migrations: ran.map((m) => m.name) }) + '\n');
  } finally {
    await dataSource.destroy();
  }
}

main().catch((e) => {
  process.stderr.write(`migration failed: ${safeErrorText(e)}\n`);
  process.exit(1);
});
