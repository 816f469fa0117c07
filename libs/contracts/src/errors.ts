import type { DomainErrorPayload, ErrorCode } from './error-codes';
import type { SplitErrorCode } from './split';

export interface FieldProblem {
  code: ErrorCode | SplitErrorCode;
  parameter: string;
  message: string;
}

/**
 * A failure the domain knows how to name (bad field, unknown token, state conflict, dependency
 * down). Thrown anywhere; only the API's exception filter turns it into HTTP and the wire body.
 * Messages are sentences a person can act on and never contain card data.
 */
export class DomainError extends Error {
  override name = 'DomainError';

  constructor(
    readonly kind: DomainErrorPayload['kind'] | 'auth' | 'too_large' | 'media_type' | 'rate_limited',
    readonly code: ErrorCode,
    message: string,
    readonly parameter?: string,
    readonly problems: FieldProblem[] = [],
  ) {
    super(message);
  }

  static validation(code: ErrorCode, parameter: string, message: string): DomainError {
    return new DomainError('validation', code, message, parameter, [{ code, parameter, message }]);
  }

  /**
   * Several field problems at once: the first is the headline, all are listed. `code` is the
   * three-digit headline code when the problems carry other codes (the split's SPLIT_*).
   */
  static fields(problems: FieldProblem[], code?: ErrorCode): DomainError {
    const [first] = problems;
    const message =
      problems.length === 1 ? first.message : `${first.message} (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})`;
    return new DomainError('validation', code ?? (first.code as ErrorCode), message, first.parameter, problems);
  }

  static fromPayload(p: DomainErrorPayload): DomainError {
    return p.kind === 'validation' && p.parameter
      ? DomainError.validation(p.code, p.parameter, p.message)
      : new DomainError(p.kind, p.code, p.message, p.parameter);
  }

  toPayload(): DomainErrorPayload {
    // rate_limited is the api's own answer and never crosses to a worker; retry-later is its nearest kind.
    const kind =
      this.kind === 'auth' || this.kind === 'too_large' || this.kind === 'media_type'
        ? 'validation'
        : this.kind === 'rate_limited'
          ? 'unavailable'
          : this.kind;
    return { kind, code: this.code, message: this.message, parameter: this.parameter };
  }
}
