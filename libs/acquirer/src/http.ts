import { Agent, Dispatcher, request } from 'undici';
import { AcquirerUnavailableError } from './acquirer.connector';

export interface HttpSettings {
  connectTimeoutMs: number;
  responseTimeoutMs: number;
}

export interface HttpAnswer {
  status: number;
  /** Parsed JSON, or undefined for an empty or non-JSON body. */
  body: unknown;
}

/** The request may have reached the acquirer but no answer came back (a timeout, a reset): ask before acting again. */
export class AnswerLostError extends Error {
  constructor(acquirer: string, why: string) {
    super(`${acquirer}: no answer (${why})`);
    this.name = 'AnswerLostError';
  }
}

/** Connect-time failures: the request never left, so the acquirer cannot have acted on it. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_INVALID_ARG',
]);

/** One keep-alive pool per acquirer with the connect and response limits (undici). */
export function acquirerAgent(settings: HttpSettings): Agent {
  return new Agent({
    connect: { timeout: settings.connectTimeoutMs },
    headersTimeout: settings.responseTimeoutMs,
    bodyTimeout: settings.responseTimeoutMs,
    keepAliveTimeout: 30_000,
    connections: 64,
  });
}

/**
 * One call to an acquirer. Throws AcquirerUnavailableError when it never left (refused, no route,
 * connect timeout) and AnswerLostError when it may have been received (timeout, reset, a body that
 * is cut). Never puts the request's headers or body in an error: they hold secrets and card data.
 */
export async function callAcquirer(
  agent: Dispatcher,
  acquirer: string,
  url: string,
  init: { method: 'GET' | 'POST' | 'PUT'; headers: Record<string, string>; body?: unknown; timeoutMs: number },
): Promise<HttpAnswer> {
  const text = init.body === undefined ? undefined : JSON.stringify(init.body);
  const headers = { ...init.headers, ...(text === undefined && init.method !== 'GET' ? { 'content-length': '0' } : {}) };
  let res: Dispatcher.ResponseData;
  try {
    res = await request(url, {
      method: init.method,
      headers,
      body: text,
      dispatcher: agent,
      headersTimeout: init.timeoutMs,
      bodyTimeout: init.timeoutMs,
    });
  } catch (e) {
    const code = (e as { code?: string }).code ?? '';
    if (NOT_SENT.has(code)) throw new AcquirerUnavailableError(acquirer, `${acquirer}: not reached (${code})`);
    throw new AnswerLostError(acquirer, code || (e as Error).name);
  }
  let raw: string;
  try {
    raw = await res.body.text();
  } catch (e) {
    throw new AnswerLostError(acquirer, (e as { code?: string }).code ?? 'body cut');
  }
  let body: unknown;
  try {
    body = raw ? JSON.parse(raw) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, body };
}
