import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { AppName, createMerchant, eventually, Stack, startStack } from '../support/stack';
import { Listener } from '../support/listener';
import { samples, sampleValue } from '../support/metrics';
import { receiverOf, saleBody } from '../support/money';
import { exportedNames, metricNamesIn } from '../support/promql';
import { repoRoot } from '../../scripts/lib/processes';

jest.setTimeout(180_000);

const root = repoRoot();
const PROMETHEUS = join(root, 'deploy', 'prometheus');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;
interface Rule {
  alert: string;
  expr: string;
  annotations?: Record<string, string>;
}
const rules: Rule[] = (parse(readFileSync(join(PROMETHEUS, 'alerts.yml'), 'utf8')) as Obj).groups.flatMap((g: Obj) => g.rules);
const dashboard = JSON.parse(readFileSync(join(root, 'deploy', 'grafana', 'gateway-pipeline.json'), 'utf8')) as Obj;
const dashboardExprs: string[] = dashboard.panels.flatMap((p: Obj) => (p.targets ?? []).map((t: Obj) => t.expr as string));

/** promtool, in deploy/prometheus; fails with its own output. */
function promtool(...args: string[]): void {
  const r = spawnSync('promtool', args, { cwd: PROMETHEUS, encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw new Error(`promtool did not run (${r.error.message}): install Debian's prometheus package (.ci/run does)`);
  if (r.status !== 0) throw new Error(`promtool ${args.join(' ')} failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
}

/**
 * What Prometheus scrapes (docs/operations/monitoring.md) and what reads it: after one sale, with
 * its webhook delivered, the new series exist with their labels; the scrape configs and the alert
 * rules (deploy/prometheus) pass promtool's checks and unit tests; and every metric the alerts and
 * the dashboard (deploy/grafana/gateway-pipeline.json) query is one the six apps export.
 */
describe('the metrics, the alert rules and the dashboard', () => {
  let stack: Stack;
  let listener: Listener;
  /** Each app's /metrics text, after the sale and its webhook. */
  const scraped = {} as Record<AppName, string>;

  const scrape = async (name: AppName) => (await fetch(`${stack.apps[name].url}/metrics`)).text();

  beforeAll(async () => {
    listener = await new Listener().start();
    stack = await startStack({}, { withAdmin: true, envFor: { notifier: { WEBHOOK_ALLOW_NETWORKS: '127.0.0.1/32' } } });
    const shop = await createMerchant('metrics shop');
    const sale = await receiverOf(stack.baseUrl, shop)('sale', saleBody(5_000, listener.url('/events')));
    expect(sale.json).toMatchObject({ status: '8' });
    // The webhook attempt is counted once it is answered: wait for the notifier to say so.
    await eventually(
      async () => expect(sampleValue(await scrape('notifier'), 'webhook_deliveries_total', { outcome: 'succeeded' })).toBe(1),
      {
        timeoutMs: 30_000,
      },
    );
    for (const name of Object.keys(stack.apps) as AppName[]) scraped[name] = await scrape(name);
  });

  afterAll(async () => {
    await stack?.stop();
    await listener?.stop();
  });

  it("times and counts the sale's call to the acquirer, by acquirer, operation, outcome and return code", () => {
    const tokenizer = scraped.tokenizer;
    const labels = { acquirer: 'sandbox', operation: 'authorize', outcome: 'approved', app: 'tokenizer' };
    expect(sampleValue(tokenizer, 'acquirer_request_duration_seconds_count', labels)).toBe(1);
    expect(sampleValue(tokenizer, 'acquirer_responses_total', { ...labels, code: '00' })).toBe(1);
    // Each label a short, known value: nothing of the card or the transaction.
    for (const s of samples(tokenizer, 'acquirer_responses_total'))
      expect(Object.keys(s.labels).sort()).toEqual(['acquirer', 'app', 'code', 'operation', 'outcome']);
  });

  it("shows each real acquirer's breaker closed (0), and none for the sandbox, which has none", () => {
    const open = samples(scraped.tokenizer, 'acquirer_circuit_open');
    expect(open.map((s) => [s.labels.acquirer, s.value]).sort()).toEqual([
      ['cielo', 0],
      ['erede', 0],
    ]);
  });

  it("reads the outbox lag on the tokenizer, which runs the relay: 0 once the sale's events went out", async () => {
    await eventually(async () => expect(sampleValue(await scrape('tokenizer'), 'outbox_oldest_unpublished_age_seconds')).toBe(0));
    expect(sampleValue(scraped.api, 'outbox_oldest_unpublished_age_seconds')).toBeUndefined();
  });

  it('says on every app that Postgres and Redis answer', () => {
    for (const [name, text] of Object.entries(scraped)) {
      for (const dependency of ['postgres', 'redis'])
        expect([name, sampleValue(text, 'dependency_up', { dependency, app: name })]).toEqual([name, 1]);
    }
  });

  it.each([
    ['check', 'config', 'prometheus.yml'],
    ['check', 'config', 'prometheus.compose.yml'],
    ['check', 'rules', 'alerts.yml'],
    ['test', 'rules', 'alerts.test.yml'],
  ])('promtool %s %s %s passes', (...args) => promtool(...args));

  it("parses every query of the dashboard (promtool, as recording rules; Grafana's $__rate_interval as 5m)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-dashboard-'));
    try {
      const recorded = dashboardExprs.map((expr, i) => ({
        record: `dashboard:query_${i}`,
        expr: expr.replace(/\$__rate_interval/g, '5m'),
      }));
      writeFileSync(join(dir, 'dashboard.rules.json'), JSON.stringify({ groups: [{ name: 'dashboard', rules: recorded }] }));
      promtool('check', 'rules', join(dir, 'dashboard.rules.json'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
    );
    for (const p of dashboard.panels.filter((x: Obj) => x.type !== 'row'))
      expect([p.title, p.datasource.uid]).toEqual([p.title, '${datasource}']);
  });

  it('gives every alert a summary, a description and a runbook section that exists, and a test that fires it and one that does not', () => {
    const tests = (parse(readFileSync(join(PROMETHEUS, 'alerts.test.yml'), 'utf8')) as Obj).tests.flatMap((t: Obj) => t.alert_rule_test);
    const alerts = readFileSync(join(root, 'docs', 'operations', 'alerts.md'), 'utf8');
    for (const rule of rules) {
      expect([rule.alert, Object.keys(rule.annotations ?? {}).sort()]).toEqual([rule.alert, ['description', 'runbook_url', 'summary']]);
      expect(rule.annotations!.runbook_url).toBe(`docs/operations/alerts.md#${rule.alert.toLowerCase()}`);
      expect(alerts).toMatch(new RegExp(`^## ${rule.alert}$`, 'm'));
      const mine = tests.filter((t: Obj) => t.alertname === rule.alert);
      expect([rule.alert, mine.some((t: Obj) => t.exp_alerts.length > 0), mine.some((t: Obj) => t.exp_alerts.length === 0)]).toEqual([
        rule.alert,
        true,
        true,
      ]);
    }
  });

  it('queries, in every alert and every dashboard panel, only metrics the apps export', () => {
    const exported = new Set(Object.values(scraped).flatMap((text) => [...exportedNames(text)]));
    // Prometheus's own, for each target it scrapes.
    exported.add('up');
    const used = [...rules.map((r) => ['alerts.yml', r.alert, r.expr]), ...dashboardExprs.map((e) => ['gateway-pipeline.json', '', e])];
    const missing = used.flatMap(([file, alert, expr]) =>
      metricNamesIn(expr)
        .filter((name) => !exported.has(name))
        .map((name) => `${name} (${file}${alert ? ` ${alert}` : ''})`),
    );
    expect(missing).toEqual([]);
    // The check is not vacuous: each alert names at least one metric.
    for (const r of rules) expect([r.alert, metricNamesIn(r.expr).length > 0]).toEqual([r.alert, true]);
  });
});
