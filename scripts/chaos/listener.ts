import { createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Random } from './random';

/** One request the listener received. */
export interface Arrival {
  transactionId: string;
  statusVersion: number;
  status: string;
  /** What the listener answered: 200 (acknowledged) or 500 (the planned failures). */
  answered: number;
  signatureValid: boolean;
  /** The URL's TransactionID and merchant are the body's transaction's and the signer's. */
  consistent: boolean;
  /** The body held a card number or the security code of the run. */
  leaked: boolean;
  at: number;
}

/**
 * A merchant's listener as the chaos run wants it: it fails a share of deliveries (500), answers
 * another share slowly, and checks every request's Standard Webhooks signature against the
 * merchant's secret (named in the URL's `m` parameter). What it saw is kept for the checks.
 */
export class ChaosListener {
  readonly arrivals: Arrival[] = [];
  private readonly keys = new Map<string, Buffer>();

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(opts: {
    seed: number;
    failShare: number;
    slowShare: number;
    slowMs: number;
    /** Whether a body leaks card data (the run's card numbers and security code). */
    leaks: (text: string) => boolean;
  }): Promise<ChaosListener> {
    const random = new Random(opts.seed ^ 0x5eed);
    // Each change fails at most once (by its webhook-id): the planned failures exercise the retries
    // without a chain of them outlasting the run's wait for the deliveries.
    const failedOnce = new Set<string>();
    let self!: ChaosListener;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const url = new URL(req.url ?? '/', 'http://listener');
        const roll = random.next();
        const webhookId = String(req.headers['webhook-id'] ?? '');
        const answered = roll < opts.failShare && !failedOnce.has(webhookId) ? 500 : 200;
        if (answered === 500) failedOnce.add(webhookId);
        const slow = roll >= opts.failShare && roll < opts.failShare + opts.slowShare;
        self.record(
          url.searchParams.get('m') ?? '',
          url.searchParams.get('TransactionID') ?? '',
          req.headers,
          raw,
          answered,
          opts.leaks(raw),
        );
        const answer = () => res.writeHead(answered, { 'content-type': 'text/plain' }).end(answered === 200 ? 'ok' : 'planned failure');
        if (slow) setTimeout(answer, opts.slowMs);
        else answer();
      });
    });
    server.keepAliveTimeout = 5_000;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    self = new ChaosListener(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
    return self;
  }

  /** The urlReturn for a merchant's sales; the listener verifies their signatures with `webhookSecret`. */
  urlFor(merchantId: string, webhookSecret: string): string {
    this.keys.set(merchantId, Buffer.from(webhookSecret.replace(/^whsec_/, ''), 'base64'));
    return `${this.baseUrl}?m=${merchantId}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private record(
    merchantId: string,
    transactionId: string,
    headers: NodeJS.Dict<string | string[]>,
    raw: string,
    answered: number,
    leaked: boolean,
  ): void {
    let data: { statusVersion?: string; status?: string; transactionId?: string } = {};
    try {
      data = (JSON.parse(raw) as { data?: typeof data }).data ?? {};
    } catch {
      // recorded with version NaN: a check names it
    }
    this.arrivals.push({
      transactionId: transactionId.toLowerCase(),
      statusVersion: Number(data.statusVersion),
      status: String(data.status ?? ''),
      answered,
      signatureValid: this.verify(this.keys.get(merchantId), headers, raw),
      consistent: (data.transactionId ?? '').toLowerCase() === transactionId.toLowerCase() && this.keys.has(merchantId),
      leaked,
      at: Date.now(),
    });
  }

  private verify(key: Buffer | undefined, headers: NodeJS.Dict<string | string[]>, raw: string): boolean {
    const id = headers['webhook-id'];
    const timestamp = headers['webhook-timestamp'];
    const signatures = headers['webhook-signature'];
    if (!key || typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
    if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
    const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${raw}`).digest();
    return signatures.split(' ').some((entry) => {
      const [version, signature] = entry.split(',');
      const given = Buffer.from(signature ?? '', 'base64');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
  }
}
