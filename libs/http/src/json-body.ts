import type { FastifyInstance } from 'fastify';
import { DomainError, ErrorCodes } from '@app/contracts';
import { render, segmentsAt } from './json-path';
import { asText, scan } from './json-scan';
import { firstInvalidUtf8 } from './utf8';
import { walk } from './json-walk';

/**
 * The one way a JSON body enters the api (issue 13: no 5xx from any body). It runs as Fastify's
 * application/json parser, so before any handler, hashing or recursive code sees the body:
 *
 * 1. the bytes must be UTF-8 (a leading BOM is stripped, as TextDecoder does by default);
 * 2. a linear scan of the text, before JSON.parse, refuses nesting deeper than MAX_DEPTH and
 *    number literals a double cannot keep exactly (9007199254740993 would become ...992);
 * 3. JSON.parse;
 * 4. one iterative walk refuses C0 control characters and lone surrogates in any string (values
 *    and member names: Postgres refuses both with a 500), unsafe integers, non-finite numbers and
 *    the member names `__proto__`, `constructor` and `prototype` (prototype poisoning).
 *
 * Every refusal is a 400 naming the field as the merchant knows it (`order.reference`, not
 * `transaction-request.sale.order.reference`); no message repeats the offending value.
 */

const NOT_JSON = 'The request body is not valid JSON.';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Parses a JSON request body or throws the DomainError (400) naming what is wrong with it. */
export function parseJsonBody(raw: Uint8Array): unknown {
  if (raw.length === 0) throw malformed('The request body is empty; it must be a JSON document.');
  let text: string;
  try {
    text = decoder.decode(raw);
  } catch {
    throw invalidUtf8(raw);
  }
  const fractions = scan(text);
  if (fractions.length) text = asText(text, fractions);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON.parse's own message can quote the body (a card number): never passed on.
    throw malformed(NOT_JSON);
  }
  // Text decoded from valid UTF-8 holds no lone surrogate, and JSON.parse refuses raw control
  // characters in strings: only an escape (\u0000, \ud800, \n...) can bring either in.
  walk(value, text.includes('\\'));
  return value;
}

/**
 * Fastify's application/json parser, replacing the framework's: the body as a buffer (the same
 * bodyLimit), parsed by parseJsonBody. The depth bound holds before anything recursive (the
 * idempotency fingerprint serializes the parsed body) sees it.
 */
export function registerJsonBodyParser(fastify: FastifyInstance, bodyLimit = fastify.initialConfig.bodyLimit): void {
  if (fastify.hasContentTypeParser('application/json')) fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (_req, body, done) => {
    let value: unknown;
    try {
      value = parseJsonBody(body as Buffer);
    } catch (e) {
      // A throw here would escape Fastify's stream callback and end the process.
      done(e as Error, undefined);
      return;
    }
    done(null, value);
  });
}

function malformed(message: string): DomainError {
  return new DomainError('validation', ErrorCodes.MalformedBody, message);
}

/** Names the field holding the first byte that is not UTF-8. */
function invalidUtf8(raw: Uint8Array): DomainError {
  const at = firstInvalidUtf8(raw);
  const before = at > 0 ? decoder.decode(raw.subarray(0, at)) : '';
  const param = render(segmentsAt(before, before.length));
  return DomainError.validation(ErrorCodes.InvalidField, param, `${param} is not valid UTF-8 text; the body must be UTF-8.`);
}
