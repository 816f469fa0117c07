import { Agent, request } from 'node:http';
import { startBaseline } from '../lib/baseline';
import { seedConsoleVolume, SeededVolume } from '../lib/console-volume';
import { Figure } from '../lib/scenario';
import { BenchStack } from '../lib/stack';

/** The issue's ceiling: every console page answers in under 100 ms at the p99 on this volume. */
const P99_MS = 100;

interface Page {
  name: string;
  path: string;
}

interface Timed {
  status: number;
  ms: number;
  body: string;
  cookies: string[];
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function get(url: string, cookie: string, method = 'GET', form?: string): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      url,
      {
        method,
        agent,
        headers: {
          cookie,
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(form) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ms: performance.now() - started,
            body: Buffer.concat(chunks).toString('utf8'),
            cookies: (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(form);
  });
}

/** Signs the stack's admin in as a person would: the form's CSRF token and cookie, then the token; returns the Cookie header. */
async function signIn(stack: BenchStack): Promise<string> {
  const form = await get(`${stack.consoleUrl}/console/sign-in`, '');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1];
  if (form.status !== 200 || !csrf) throw new Error(`console sign-in form: ${form.status}`);
  const jar = form.cookies.join('; ');
  const body = new URLSearchParams({ _csrf: csrf, token: stack.env.GATEWAY_OPERATOR_TOKEN as string }).toString();
  const signed = await get(`${stack.consoleUrl}/console/sign-in`, jar, 'POST', body);
  if (signed.status !== 303 || !signed.cookies.length) throw new Error(`console sign-in: ${signed.status}`);
  return [...form.cookies, ...signed.cookies].join('; ');
}

const quantile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;

/** One request at a time (an operator's browser), `n` of them after `warmup` uncounted; latencies sorted. */
async function timed(url: string, cookie: string, warmup: number, n: number): Promise<{ sorted: number[]; failed: number; bytes: number }> {
  let failed = 0;
  let bytes = 0;
  const ms: number[] = [];
  for (let i = 0; i < warmup + n; i++) {
    const r = await get(url, cookie);
    if (i < warmup) continue;
    if (r.status !== 200) failed++;
    bytes = Buffer.byteLength(r.body);
    ms.push(r.ms);
  }
  return { sorted: ms.sort((a, b) => a - b), failed, bytes };
}

const cursorText = (c: { createdAt: string; id: string }) => Buffer.from(JSON.stringify([c.createdAt, c.id])).toString('base64url');

function pages(v: SeededVolume): Page[] {
  const q = (o: Record<string, string>) => `/console/deliveries?${new URLSearchParams(o).toString()}`;
  const from = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 16);
  const to = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 16);
  return [
    { name: 'overview', path: '/console/overview' },
    { name: 'deliveries, first page', path: '/console/deliveries' },
    { name: 'deliveries, deep page (half-way)', path: q({ after: cursorText(v.deepCursor) }) },
    { name: 'deliveries, big merchant', path: q({ merchant: v.bigMerchant }) },
    { name: 'deliveries, small merchant', path: q({ merchant: v.smallMerchant }) },
    { name: 'deliveries, state failed', path: q({ state: 'failed' }) },
    { name: 'deliveries, host', path: q({ host: v.host }) },
    { name: 'deliveries, transaction', path: q({ transaction: v.transactionId }) },
    { name: 'deliveries, event', path: q({ event: 'transaction.status_changed' }) },
    { name: 'deliveries, one day 2 days ago', path: q({ from, to }) },
    { name: `delivery detail (${v.manyAttempts.attempts} attempts)`, path: `/console/deliveries/${v.manyAttempts.id}` },
  ];
}

/**
 * The console on real volumes (issue 16): the stack's database seeded with `deliveries` deliveries
 * and about five times as many attempts (bench/lib/console-volume.ts), then each page requested
 * `requests` times, one at a time, by a signed-in operator. The baseline: the bare Node server
 * answering a body of the page's size, requested the same way in the same run.
 */
export async function benchConsole(
  stack: BenchStack,
  deliveries: number,
  requests: number,
  warmup: number,
): Promise<{ figures: Figure[]; note: string }> {
  process.stdout.write(`console: seeding ${deliveries} deliveries…\n`);
  const v = await seedConsoleVolume(stack.env.DATABASE_URL as string, { deliveries, merchants: 200, recentShare: 0.1 });
  process.stdout.write(`console: seeded ${v.deliveries} deliveries, ${v.attempts} attempts in ${v.seconds.toFixed(0)} s\n`);
  const cookie = await signIn(stack);
  const note =
    `Console volume: ${v.deliveries} deliveries and ${v.attempts} attempts of 200 merchants seeded in ${v.seconds.toFixed(0)} s; ` +
    `each page ${requests} requests one at a time after ${warmup} uncounted, by a signed-in operator.`;
  const figures: Figure[] = [];
  for (const p of pages(v)) {
    const g = await timed(stack.consoleUrl + p.path, cookie, warmup, requests);
    const baseline = await startBaseline('x'.repeat(g.bytes));
    let b: Awaited<ReturnType<typeof timed>>;
    try {
      b = await timed(baseline.url + p.path, '', warmup, requests);
    } finally {
      await baseline.stop();
    }
    const p99 = quantile(g.sorted, 0.99);
    const f: Figure = {
      name: `console ${p.name}`,
      unit: 'ms p99',
      value: p99,
      baseline: quantile(b.sorted, 0.99),
      ceiling: P99_MS,
      failures: g.failed,
      detail: `p50 ${quantile(g.sorted, 0.5).toFixed(1)} ms, p95 ${quantile(g.sorted, 0.95).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms over ${requests} requests (${g.bytes} bytes); baseline p99 ${quantile(b.sorted, 0.99).toFixed(1)} ms`,
    };
    figures.push(f);
    process.stdout.write(`${f.name}: ${f.detail}${g.failed ? `  !! ${g.failed} not 200` : ''}\n`);
  }
  agent.destroy();
  return { figures, note };
}
