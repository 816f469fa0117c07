import { ApiProperty } from '@nestjs/swagger';
import { DomainError, ErrorCodes } from '@app/contracts';
import { Check, isPlainObject, Nested, present, Text, textOf } from './wire-fields';
import { validated } from './validate';

export class VerificationDto {
  @Text({ required: true, max: 64, description: 'The merchant id issued by merchant:create (10 digits).', example: '4920185736' })
  merchantId!: string;

  @Text({ required: true, max: 256, description: 'The merchant key (shown once when issued or rotated).', example: 'mk_3Jq…' })
  merchantKey!: string;
}

/** The envelope's fixed members; the operation's own member is validated by its own class. */
export class EnvelopeHeaderDto {
  @Check(
    { type: 'string', enum: ['1.0.0'] },
    (v) => (v === '1.0.0' ? null : { code: ErrorCodes.InvalidVersion, text: 'must be "1.0.0"' }),
    { required: true, example: '1.0.0' },
  )
  version!: string;

  @Nested(() => VerificationDto, { required: true })
  verification!: VerificationDto;
}

export interface Envelope {
  merchantId: string;
  merchantKey: string;
  /** The operation key as the merchant sent it (e.g. `tokencard` or `tokenCard`). */
  operation: string;
  body: Record<string, unknown>;
}

export const ROOT = 'transaction-request';
const RESERVED = new Set(['version', 'verification']);

/**
 * One root object, version "1.0.0", verification, and exactly one operation key, among those
 * `operations` lists for this endpoint (aliases included).
 */
export function readEnvelope(body: unknown, operations: readonly string[]): Envelope {
  if (!isPlainObject(body)) {
    throw new DomainError('validation', ErrorCodes.InvalidEnvelope, `The body must be a JSON object with a "${ROOT}" member.`, ROOT);
  }
  const root = body[ROOT];
  if (!isPlainObject(root)) throw new DomainError('validation', ErrorCodes.InvalidEnvelope, `The body must have a "${ROOT}" object.`, ROOT);
  if (!present(root.version)) throw DomainError.validation(ErrorCodes.MissingField, 'version', 'version is required and must be "1.0.0".');
  const header = validated(EnvelopeHeaderDto, { version: root.version, verification: root.verification });

  const ops = Object.keys(root).filter((k) => !RESERVED.has(k));
  const expected = operations.map((o) => `"${o}"`).join(' or ');
  if (ops.length !== 1) {
    const message =
      ops.length === 0
        ? `The request must carry one operation (${expected}).`
        : `The request must carry exactly one operation, found ${ops.length}.`;
    throw new DomainError('validation', ErrorCodes.InvalidEnvelope, message, ROOT);
  }
  const [operation] = ops;
  if (!operations.includes(operation)) {
    // The unknown key's name is echoed only when it is short and plain: it is merchant input.
    const shown = /^[A-Za-z_-]{1,32}$/.test(operation) ? `"${operation}"` : 'the given key';
    throw new DomainError(
      'validation',
      ErrorCodes.InvalidEnvelope,
      `Unsupported operation ${shown} on this path; expected ${expected}.`,
      shown === 'the given key' ? ROOT : operation,
    );
  }
  const opBody = root[operation];
  if (!isPlainObject(opBody)) throw DomainError.validation(ErrorCodes.InvalidField, operation, `${operation} must be an object.`);
  // Text fields may arrive as JSON numbers: the credentials are compared as the text they read as.
  return {
    merchantId: textOf(header.verification.merchantId)!,
    merchantKey: textOf(header.verification.merchantKey)!,
    operation,
    body: opBody,
  };
}

type Ctor = new () => object;
const docClasses = new Map<string, Ctor>();

/**
 * The whole request of one operation as /docs shows it: `{"transaction-request": {version,
 * verification, <operation>: <its class>}}`. Built from the same classes that validate it.
 */
export function envelopeDoc(operation: string, body: Ctor): Ctor {
  const name = `${operation.replace(/(^|-)(\w)/g, (_m, _d, c: string) => c.toUpperCase())}Request`;
  const known = docClasses.get(name);
  if (known) return known;
  const inner = { [`${name}Envelope`]: class extends EnvelopeHeaderDto {} }[`${name}Envelope`];
  ApiProperty({ type: body, required: true })(inner.prototype, operation);
  const outer = { [name]: class {} }[name];
  ApiProperty({ type: inner, required: true, name: ROOT })(outer.prototype, 'transactionRequest');
  docClasses.set(name, outer);
  return outer;
}
