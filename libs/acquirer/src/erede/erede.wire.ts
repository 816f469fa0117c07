/** e.Rede REST v1 on the wire: what the connector sends and how it reads the answers. */
import type { AcquirerBook, AcquirerResult, AuthorizeCommand } from '../acquirer.connector';

/**
 * `reference`: e.Rede takes up to 16 characters. The gateway's transaction id is 32 hex digits with
 * a version digit (the 13th) that never varies: the reference is the 16 hex digits around it, 64
 * bits, so the same id always gives the same reference and two of one merchant's sales share one
 * with a chance of about n²/2^65 (n = 10 million: 3 in a million).
 */
export function eredeReference(transactionId: string): string {
  const hex = transactionId.replace(/-/g, '').toLowerCase();
  return hex.slice(0, 12) + hex.slice(13, 17);
}

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');
const num = (v: unknown) => (typeof v === 'number' ? v : Number(v ?? 0) || 0);
const obj = (v: unknown) => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});

export function transactionRequest(cmd: AuthorizeCommand): Record<string, unknown> {
  const merchantInitiated = cmd.initiator === 'merchant';
  return {
    capture: cmd.capture,
    kind: 'credit',
    reference: eredeReference(cmd.transactionId),
    amount: cmd.amount,
    installments: cmd.instalments,
    cardHolderName: cmd.holder.slice(0, 30),
    cardNumber: cmd.pan,
    expirationMonth: cmd.expMonth,
    expirationYear: cmd.expYear,
    ...(cmd.securityCode && !merchantInitiated ? { securityCode: cmd.securityCode } : {}),
    ...(cmd.softDescriptor ? { softDescriptor: cmd.softDescriptor.replace(/[^A-Za-z0-9 ]/g, '').slice(0, 18) } : {}),
    // A rebill's later cycle: a recurring charge of a card on file, started by the merchant.
    subscription: merchantInitiated,
    origin: 1,
  };
}

/** A create's answer (201 approved, anything else with returnCode and returnMessage). */
export function resultOfCreate(body: unknown): AcquirerResult {
  const b = obj(body);
  const returnCode = str(b.returnCode);
  return {
    outcome: returnCode === '00' ? 'approved' : 'declined',
    returnCode,
    returnMessage: str(b.returnMessage),
    authorizationCode: str(b.authorizationCode) || undefined,
    tid: str(b.tid),
    nsu: str(b.nsu),
  };
}

/** A transaction as GET answers it, in the gateway's terms. */
export function resultOfTransaction(body: unknown): AcquirerResult {
  const a = obj(obj(body).authorization);
  const returnCode = str(a.returnCode);
  return {
    outcome: returnCode === '00' ? 'approved' : 'declined',
    returnCode,
    returnMessage: str(a.returnMessage),
    authorizationCode: str(a.authorizationCode) || undefined,
    tid: str(a.tid),
    nsu: str(a.nsu),
  };
}

/** A capture's or refund's answer: capture `00`, refund `359` (accepted) or `360` (being processed). */
export function resultOfFollowUp(body: unknown, status: number, tid: string): AcquirerResult {
  const b = obj(body);
  const returnCode = str(b.returnCode) || String(status);
  const ok = status < 300 && ['00', '359', '360'].includes(returnCode);
  return {
    outcome: ok ? 'approved' : 'declined',
    returnCode,
    returnMessage: str(b.returnMessage) || `HTTP ${status}`,
    authorizationCode: str(b.authorizationCode) || undefined,
    tid: str(b.tid) || tid,
    nsu: str(b.nsu),
  };
}

export function bookOfTransaction(body: unknown): AcquirerBook {
  const b = obj(body);
  const a = obj(b.authorization);
  const refunds = Array.isArray(b.refunds) ? b.refunds : [];
  return {
    tid: str(a.tid),
    approved: str(a.returnCode) === '00',
    captured: num(obj(b.capture).amount),
    cancelled: refunds.reduce<number>((sum, r) => sum + (str(obj(r).status).toLowerCase() === 'denied' ? 0 : num(obj(r).amount)), 0),
    amount: num(a.amount),
  };
}
