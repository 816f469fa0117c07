/**
 * e.Rede's return codes as its API answers them (returnCode is a string; messages as e.Rede
 * words them). Only the codes the simulator can produce are listed.
 */
export const CODES = {
  '00': 'Success.',
  '1': 'expirationYear: Invalid parameter size',
  '2': 'expirationYear: Invalid parameter format',
  '3': 'expirationYear: Required parameter missing',
  '15': 'securityCode: Invalid parameter size',
  '16': 'securityCode: Invalid parameter format',
  '31': 'softdescriptor: Invalid parameter size',
  '33': 'expirationMonth: Invalid parameter format',
  '35': 'expirationMonth: Required parameter missing',
  '36': 'cardNumber: Invalid parameter size',
  '37': 'cardNumber: Invalid parameter format',
  '38': 'cardNumber: Required parameter missing',
  '39': 'reference: Invalid parameter size',
  '40': 'reference: Invalid parameter format',
  '41': 'reference: Required parameter missing',
  '42': 'reference: Order number already exists',
  '49': 'The value of the transaction exceeds the authorized',
  '50': 'installments: Invalid parameter format',
  '54': 'installments: Parameter not allowed for this transaction',
  '55': 'cardHolderName: Invalid parameter size',
  '57': 'affiliation: Invalid merchant',
  '59': 'cardHolderName: Invalid parameter format',
  '61': 'subscription: Invalid parameter format',
  '65': 'token: Invalid token',
  '70': 'amount: Invalid parameter size',
  '71': 'amount: Invalid parameter format',
  '73': 'amount: Required parameter missing',
  '76': 'kind: Invalid parameter format',
  '78': 'Transaction does not exist',
  '105': 'Unauthorized. Restricted card.',
  '109': 'Unauthorized. Nonexistent card.',
  '111': 'Unauthorized. Insufficient funds.',
  '112': 'Unauthorized. Expiry date expired.',
  '119': 'Unauthorized. Invalid security code.',
  '151': 'installments: Greater than allowed',
  '158': 'capture: Type not allowed for this transaction',
  '167': 'Invalid request JSON',
  '169': 'Invalid Content-Type',
  '171': 'Operation not allowed for this transaction',
  '174': 'Zero dollar transaction success.',
  '353': 'Transaction not found',
  '355': 'Transaction already canceled.',
  '357': 'Sum of amount refunds greater than the transaction amount',
  '359': 'Refund successful.',
  '365': 'Partial refund not available.',
  '3119': 'Capture: Invalid parameter format',
} as const;

export type Code = keyof typeof CODES;

/** `{ returnCode, returnMessage }` for a code. */
export function ret(code: Code): { returnCode: string; returnMessage: string } {
  return { returnCode: code, returnMessage: CODES[code] };
}
