import { safeErrorText } from '@app/platform/safe-error';
import dataSource from './data-source';
import { setRolePasswords } from './roles';

/** `npm run migrate`: applies pending migrations and sets the app roles' passwords (DB_PASSWORD_*); safe to run again. */
async function main(): Promise<void> {
  await dataSource.initialize();
  try {
    const ran = await dataSource.runMigrations({ transaction: 'each' });
    // As the owner: each app's role gets the password its variable names, when one is set
    // (servers that do not trust local connections); the output names the roles, never a password.
    const passwordsSet = await setRolePasswords(dataSource);
    process.stdout.write(JSON.stringify({ migrations: ran.map((m) => m.name), ...(passwordsSet.length ? { passwordsSet } : {}) }) + '\n');
  } finally {
    await dataSource.destroy();
  }
}

main().catch((e) => {
  process.stderr.write(`migration failed: ${safeErrorText(e)}\n`);
  process.exit(1);
});
