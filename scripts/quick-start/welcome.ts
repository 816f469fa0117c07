import { join } from 'node:path';
import type { LaunchedApp } from '../lib/launcher';
import { databaseName, redactUrl, roleUrl } from '../lib/database';
import type { RunningSimulator } from '../lib/simulators';
import type { DevOperator, SandboxMerchant } from './dev-state';
import { say, shortPath } from './output';

/** What the developer needs once everything is up: the sandbox merchant, the processes, where each surface answers. */
export function printWelcome(
  merchant: SandboxMerchant,
  operator: DevOperator | undefined,
  dataDir: string,
  apps: LaunchedApp[],
  env: NodeJS.ProcessEnv,
  simulators: RunningSimulator[],
  prometheus?: string,
): void {
  const apiHost = env.HOST && env.HOST !== '0.0.0.0' && env.HOST !== '::' ? env.HOST : '127.0.0.1';
  const apis = apps.filter((a) => a.name === 'api');
  const base = `http://${apiHost}:${apis[0].port}`;
  say('');
  say(`Sandbox merchant (saved in ${shortPath(join(dataDir, 'sandbox-merchant.json'))}):`);
  say(`  merchantId     ${merchant.merchantId}`);
  say(`  merchantKey    ${merchant.merchantKey}`);
  say(`  webhookSecret  ${merchant.webhookSecret}`);
  say('');
  say('Processes (each with /health and /metrics):');
  const width = Math.max(...apps.map((a) => a.label.length));
  for (const app of apps) say(`  ${app.label.padEnd(width)}  pid ${String(app.pid).padEnd(7)} ${app.url}`);
  say('');
  say(`API listening on ${base}`);
  if (apis.length > 1)
    say(
      `  (and on ${apis
        .slice(1)
        .map((a) => `http://${apiHost}:${a.port}`)
        .join(', ')}: put a balancer in front to share the load)`,
    );
  say(`API docs: ${base}/docs`);
  // Production merchants' sales (merchant:create --environment production) go to these.
  for (const sim of simulators) say(`Acquirer simulator (${sim.name}): ${sim.url}  (its books: ${sim.url}/__sim/ledger)`);
  if (!simulators.some((s) => s.name === 'cielo')) say(`Cielo: ${env.CIELO_API_URL ?? ''} (CIELO_API_URL, as set)`);
  if (!simulators.some((s) => s.name === 'erede')) say(`e.Rede: ${env.EREDE_API_URL ?? ''} (EREDE_API_URL, as set)`);
  if (operator) {
    say(`Development admin (saved in ${shortPath(join(dataDir, 'dev-operator.json'))}): ${operator.operator}`);
    say(`  export GATEWAY_OPERATOR_TOKEN=${operator.token}   # for npm run cli`);
  }
  const admin = apps.find((a) => a.name === 'admin');
  const consoleApp = apps.find((a) => a.name === 'console');
  if (consoleApp) {
    const consoleBase = `http://${apiHost}:${consoleApp.port}`;
    say(`Operator console: ${consoleBase}/console (sign in with your operator token); merchant portal: ${consoleBase}/portal`);
    say(`Operator dashboard: ${consoleBase}/admin/queues (Authorization: Bearer <GATEWAY_OPERATOR_TOKEN>)`);
  }
  if (prometheus) say(`Prometheus: ${prometheus} (targets: ${prometheus}/targets, alerts: ${prometheus}/alerts)`);
  if (admin) say(`Operator CLI: GATEWAY_ADMIN_URL=${admin.url} npm run cli -- <command> (runs on the admin app, as your token's role)`);
  say(
    `Break-glass commands (key rotations, retention:run): DATABASE_URL=${redactUrl(roleUrl(env.DATABASE_URL!, 'cli', {}))} npm run cli -- <command>`,
  );
  say(`Logs: ${shortPath(join(dataDir, 'logs'))}/<app>.log (a replica's: <app>-<n>.log). Ctrl-C stops everything.`);
  if (!process.env.DATABASE_URL) {
    const db = new URL(env.DATABASE_URL!);
    say(
      `From scratch: Ctrl-C, delete ${shortPath(dataDir)} and npm start again (a new database is made; drop this one with "dropdb -h ${db.hostname} -p ${db.port || 5432} -U ${db.username || 'postgres'} ${databaseName(env.DATABASE_URL!)}")`,
    );
  }
}
