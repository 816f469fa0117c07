import { STATUS_CODES } from 'node:http';
import { DomainError, ErrorCode, ErrorCodes, FieldProblem } from '@app/contracts';

const STATUS_BY_KIND: Record<DomainError['kind'], number> = {
  validation: 400,
  auth: 401,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  media_type: 415,
  rate_limited: 429,
  unavailable: 503,
};

const ACTIONS: Record<number, string> = {
  400: 'Correct the named field and send the request again.',
  401: 'Check the merchant credentials.',
  403: 'Ask an admin for an operator role that allows this action.',
  404: 'Check the identifier; it is unknown for this merchant.',
  409: 'Read the current state with report before retrying.',
  413: 'Send a body of at most 64 KiB.',
  415: 'Send Content-Type: application/json.',
  429: 'Wait the seconds in the Retry-After header, then send the request again (with the same Idempotency-Key).',
  503: 'Retry later with the same Idempotency-Key.',
  500: 'Retry later; contact support if it persists.',
};

export interface WireError {
  httpStatus: number;
  body: {
    transactionId: string;
    status: { code: string; message: string };
    result: {
      error: {
        code: string;
        action: string;
        message: string;
        details: string;
        moreInfo: string;
        parameter: string;
        errors: FieldProblem[];
      };
    };
  };
}

/** docs/merchants/errors.md: the one error body every failure answers with. */
export function wireError(
  httpStatus: number,
  code: ErrorCode,
  details: string,
  parameter = '',
  problems: FieldProblem[] = [],
  transactionId = '',
): WireError {
  const reason = STATUS_CODES[httpStatus] ?? 'Error';
  return {
    httpStatus,
    body: {
      transactionId,
      status: { code: String(httpStatus), message: reason },
      result: {
        error: {
          code,
          action: ACTIONS[httpStatus] ?? ACTIONS[500],
          message: reason,
          details,
          moreInfo: `See the error code table in the README (code ${code}).`,
          parameter,
          errors: problems,
        },
      },
    },
  };
}

export function fromDomainError(e: DomainError): WireError {
  return wireError(STATUS_BY_KIND[e.kind] ?? 500, e.code, e.message, e.parameter ?? '', e.problems);
}

export function unavailable(details = 'A dependency is unavailable; retry later.'): WireError {
  return wireError(503, ErrorCodes.ServiceUnavailable, details);
}

export function internal(): WireError {
  return wireError(500, ErrorCodes.InternalError, 'Internal error.');
}
