import http from 'node:http';
import https from 'node:https';
import type { BlockList } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { AttemptErrorClass, WebhookSecrets } from '@app/persistence';
import { parseRetryAfter } from '@app/webhooks';
import { BlockedAddressError, guardedLookup, whyForbidden } from '@app/webhooks/delivery';
import { isIP } from 'node:net';

const MAX_RESPONSE_BYTES = 1024;

export interface SendResult {
  durationMs: number;
  httpStatus?: number;
  errorClass?: AttemptErrorClass;
  responseBody?: string;
  retryAfterMs?: number;
}

/** Limits within an attempt's: the connection (DNS and TCP), and the answer's headers, both from the attempt's start. */
export interface PhaseTimeouts {
  connectMs: number;
  firstByteMs: number;
}

/**
 * One webhook attempt: POST the stored body with Standard Webhooks headers signed now. Redirects
 * are not followed (a 3xx is a failed attempt); the listener's answer is read up to 1 KiB. An
 * attempt is given up when the connection is not made within `connectMs` (class connect), the
 * answer's status line and headers have not come within `firstByteMs` (timeout), or the whole
 * answer within `timeoutMs` (timeout): a listener that accepts and then says nothing holds a
 * slot for the first-byte limit, not the whole attempt's.
 */
export class WebhookSender {
  private readonly lookup;
  private readonly agents;

  constructor(
    private readonly allow: BlockList,
    private readonly timeoutMs: number,
    private readonly phases: PhaseTimeouts = { connectMs: timeoutMs, firstByteMs: timeoutMs },
  ) {
    this.lookup = guardedLookup(allow);
    const opts = { keepAlive: true, maxSockets: 64, lookup: this.lookup } as http.AgentOptions;
    this.agents = { http: new http.Agent(opts), https: new https.Agent(opts) };
  }

  send(webhookId: string, url: string, body: string, secrets: WebhookSecrets): Promise<SendResult> {
    const started = process.hrtime.bigint();
    const elapsed = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
    const target = new URL(url);
    const host = target.hostname.replace(/^\[|\]$/g, '');
    // An IP literal never goes through lookup: judge it here.
    const why = isIP(host) ? whyForbidden(host, this.allow) : undefined;
    if (why) return Promise.resolve({ durationMs: elapsed(), errorClass: 'ssrf_blocked', responseBody: `${host} is ${why}` });

    const headers = webhookHeaders(webhookId, new Date(), body, secrets);
    return new Promise((resolve) => {
      let settled = false;
      this.post(target, headers, body, (r) => {
        if (settled) return;
        settled = true;
        resolve({ durationMs: elapsed(), ...r });
      });
    });
  }

  /** POSTs the body and reports the attempt's outcome to `done`, which keeps the first it is given. */
  private post(target: URL, headers: http.OutgoingHttpHeaders, body: string, done: (r: Outcome) => void): void {
    const isHttps = target.protocol === 'https:';
    const req = (isHttps ? https : http).request(target, {
      method: 'POST',
      agent: isHttps ? this.agents.https : this.agents.http,
      timeout: this.timeoutMs,
      headers,
    });
    const timers = this.armTimers(req);
    req.on('timeout', () => req.destroy(timedOut('listener timed out')));
    req.on('response', (res) => {
      timers.answered();
      readAnswer(res, (r) => {
        timers.clear();
        done(r);
      });
    });
    req.on('error', (e) => {
      timers.clear();
      done({ errorClass: classify(e), responseBody: e.message.slice(0, MAX_RESPONSE_BYTES) });
    });
    req.end(body);
  }

  /**
   * The attempt's limits on `req`: the whole answer, its first byte, and (for a new socket) the connection.
   * `answered` clears the first-byte limit when the headers come; `clear` the attempt's limits when it ends.
   */
  private armTimers(req: http.ClientRequest): { answered: () => void; clear: () => void } {
    const deadline = setTimeout(() => req.destroy(timedOut('listener timed out')), this.timeoutMs);
    const firstByte = setTimeout(
      () => req.destroy(timedOut(`listener sent no answer within ${this.phases.firstByteMs} ms`)),
      this.phases.firstByteMs,
    );
    req.on('socket', (socket) => {
      // A kept-alive socket is connected already; a new one must connect (lookup included) in time.
      if (!socket.connecting) return;
      const connect = setTimeout(
        () => req.destroy(Object.assign(new Error(`no connection within ${this.phases.connectMs} ms`), { code: 'ECONNECTTIMEOUT' })),
        this.phases.connectMs,
      );
      socket.once('connect', () => clearTimeout(connect));
      socket.once('close', () => clearTimeout(connect));
    });
    return {
      answered: () => clearTimeout(firstByte),
      clear: () => {
        clearTimeout(deadline);
        clearTimeout(firstByte);
      },
    };
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

type Outcome = Omit<SendResult, 'durationMs'>;

const status = (res: http.IncomingMessage) => res.statusCode;

const timedOut = (what: string) => Object.assign(new Error(what), { code: 'ETIMEDOUT' });

/** The Standard Webhooks headers for `body`, signed at `timestamp`. */
function webhookHeaders(webhookId: string, timestamp: Date, body: string, secrets: WebhookSecrets): http.OutgoingHttpHeaders {
  // During a secret rotation's grace period the old secret signs too (space-separated list).
  const signature = [secrets.current, secrets.previous]
    .filter((s): s is string => !!s)
    .map((s) => new Webhook(s).sign(webhookId, timestamp, body))
    .join(' ');
  return {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'user-agent': 'card-gateway-webhooks/1',
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signature,
  };
}

/** Reads the listener's answer (up to MAX_RESPONSE_BYTES of its body) and reports it to `finish`. */
function readAnswer(res: http.IncomingMessage, finish: (r: Outcome) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (c: Buffer) => {
    if (size < MAX_RESPONSE_BYTES) chunks.push(c.subarray(0, MAX_RESPONSE_BYTES - size));
    size += c.length;
  });
  res.on('end', () => {
    const status = res.statusCode ?? 0;
    finish({
      httpStatus: status,
      errorClass: status >= 200 && status < 300 ? undefined : 'http_status',
      responseBody: Buffer.concat(chunks).toString('utf8'),
      retryAfterMs: parseRetryAfter(res.headers['retry-after']),
    });
  });
  res.on('error', (e) => finish({ httpStatus: status(res), errorClass: classify(e), responseBody: e.message }));
}

function classify(e: NodeJS.ErrnoException): AttemptErrorClass {
  if (e instanceof BlockedAddressError || e.code === 'ESSRFBLOCKED') return 'ssrf_blocked';
  if (e.code === 'ETIMEDOUT' || e.code === 'ESOCKETTIMEDOUT') return 'timeout';
  if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN' || e.code === 'ENODATA') return 'dns';
  if (/CERT|SSL|TLS|ERR_TLS/i.test(e.code ?? '') || /certificate|ssl|tls/i.test(e.message)) return 'tls';
  return 'connect';
}
