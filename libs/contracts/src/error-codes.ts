/**
 * The one table of wire error codes (docs/merchants/errors.md). Codes are three digits; `9xx` are field
 * validation errors. Never renumber a code: merchant integrations branch on them.
 */
export const ErrorCodes = {
  AuthenticationFailed: '010',
  OperatorRoleRefused: '011',
  AcquirerNotAvailable: '030',
  AlreadyCancelled: '034',
  TransactionNotFound: '035',
  AlreadyCaptured: '036',
  InvalidState: '037',
  OperationInProgress: '038',
  TokenNotFound: '040',
  AcquirerTimeout: '100',
  NotProcessed: '101',
  AcquirerUnavailable: '102',
  IdempotencyConflict: '409',
  ServiceUnavailable: '503',
  RateLimited: '429',
  PayloadTooLarge: '413',
  UnsupportedMediaType: '415',
  InternalError: '500',
  MalformedBody: '900',
  InvalidEnvelope: '901',
  InvalidVersion: '902',
  MissingField: '903',
  InvalidField: '904',
  InvalidCardNumber: '910',
  CardExpired: '911',
  FlagMismatch: '912',
  InvalidSecurityCode: '913',
  UnsupportedBrand: '914',
  InvalidSplit: '920',
} as const;
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** Human descriptions, also served in the README table and the OpenAPI document. */
export const ErrorCodeDescriptions: Record<ErrorCode, string> = {
  '010': 'Authentication failed: unknown merchantId or wrong merchantKey.',
  '011': "Operator endpoints (/admin): the operator's role does not allow this action.",
  '030':
    "payment.acquirer names an acquirer this merchant cannot use: a production merchant's sale needs an acquirer the gateway connects to (26 Cielo, 27 e.Rede) and the merchant's own account at it. Nothing was recorded or charged.",
  '034': 'The transaction is already cancelled.',
  '035': 'Transaction not found.',
  '036': 'The transaction is already captured.',
  '037': 'The transaction is not in a state that allows this operation.',
  '038':
    'The capture or cancel could not start in time (another one on the transaction was still in progress, or the gateway was busy); nothing was done. Safe to retry, with the same Idempotency-Key.',
  '040': 'Token not found.',
  '100': 'The acquirer did not answer in time; the authorization was reversed.',
  '101':
    'The sale was not completed: its authorization request was lost before a decision, or its rebill was cancelled before it reached the acquirer; any authorization was reversed.',
  '102':
    'The acquirer could not be reached (or is failing and the gateway stopped calling it for a while); nothing was charged. Retry the sale later.',
  '409': 'Idempotency-Key reused with a different request body.',
  '503': 'A dependency is unavailable; retry later.',
  '429':
    "Too many requests: the merchant's write or read budget is spent for now; nothing was done. Retry after the Retry-After header's seconds.",
  '413': 'Request body larger than 64 KiB.',
  '415': 'Content-Type must be application/json.',
  '500': 'Internal error.',
  '900': 'The body is not valid JSON.',
  '901': 'The envelope is not a transaction-request with exactly one operation.',
  '902': 'Unsupported version: must be "1.0.0".',
  '903': 'A required field is missing.',
  '904': 'A field has an invalid value.',
  '910': 'The card number is not a valid card number.',
  '911': 'The card is expired.',
  '912': 'The flag does not match the brand of the card number.',
  '913': 'The security code must be 3 or 4 digits.',
  '914': 'The card brand is not supported.',
  '920': 'The split is invalid; errors[] lists each problem with its SPLIT_* code and field.',
};

/**
 * A domain failure that crosses process boundaries (tokenizer → api). Carried as the `err` of a
 * reply; only the API maps it to HTTP.
 */
export interface DomainErrorPayload {
  kind: 'validation' | 'not_found' | 'conflict' | 'unavailable';
  code: ErrorCode;
  message: string;
  parameter?: string;
}
