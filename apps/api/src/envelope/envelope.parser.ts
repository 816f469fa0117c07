import { DomainError, ErrorCodes } from '@app/contracts';
import { isObject, JsonObject, requiredObject, requiredString } from './scalars';

export interface Envelope {
  merchantId: string;
  merchantKey: string;
  /** The operation key as the merchant sent it (e.g. `tokencard` or `tokenCard`). */
  operation: string;
  body: JsonObject;
}

const ROOT = 'transaction-request';
const RESERVED = new Set(['version', 'verification']);

/**
 * WIRE.md 1: one root object, version "1.0.0", verification, and exactly one operation key.
 * `operations` lists the keys this endpoint understands (aliases included).
 */
export function parseEnvelope(body: unknown, operations: readonly string[]): Envelope {
  if (!isObject(body)) {
    throw new DomainError('validation', ErrorCodes.InvalidEnvelope, `The body must be a JSON object with a "${ROOT}" member.`, ROOT);
  }
  const root = body[ROOT];
  if (!isObject(root)) {
    throw new DomainError('validation', ErrorCodes.InvalidEnvelope, `The body must have a "${ROOT}" object.`, ROOT);
  }
  const version = root.version;
  if (version === undefined || version === null || version === '') {
    throw DomainError.validation(ErrorCodes.MissingField, 'version', 'version is required and must be "1.0.0".');
  }
  if (version !== '1.0.0') {
    throw DomainError.validation(ErrorCodes.InvalidVersion, 'version', 'version must be "1.0.0".');
  }
  const verification = requiredObject(root, 'verification', 'verification');
  const merchantId = requiredString(verification, 'merchantId', 'verification.merchantId', { max: 64 });
  const merchantKey = requiredString(verification, 'merchantKey', 'verification.merchantKey', { max: 256 });

  const ops = Object.keys(root).filter((k) => !RESERVED.has(k));
  if (ops.length !== 1) {
    const expected = operations.map((o) => `"${o}"`).join(' or ');
    const message =
      ops.length === 0 ? `The request must carry one operation (${expected}).` : `The request must carry exactly one operation, found ${ops.length}.`;
    throw new DomainError('validation', ErrorCodes.InvalidEnvelope, message, ROOT);
  }
  const [operation] = ops;
  if (!operations.includes(operation)) {
    // The unknown key's name is echoed only when it is short and plain: it is merchant input.
    const shown = /^[A-Za-z_-]{1,32}$/.test(operation) ? `"${operation}"` : 'the given key';
    throw new DomainError('validation', ErrorCodes.InvalidEnvelope, `Unsupported operation ${shown} on this path; expected ${operations.map((o) => `"${o}"`).join(' or ')}.`, operation.slice(0, 32));
  }
  const opBody = root[operation];
  if (!isObject(opBody)) {
    throw DomainError.validation(ErrorCodes.InvalidField, operation, `${operation} must be an object.`);
  }
  return { merchantId, merchantKey, operation, body: opBody };
}
