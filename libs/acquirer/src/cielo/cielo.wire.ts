/**
 * Cielo E-commerce API 3.0 on the wire: what the connector sends and how it reads the answers
 * (PascalCase answers; members read without regard to case, as Cielo itself does).
 */
import type { AcquirerBook, AcquirerResult, AuthorizeCommand } from '../acquirer.connector';

/** Payment.Status values (Cielo's reference). */
export const CieloStatus = {
  NotFinished: 0,
  Authorized: 1,
  PaymentConfirmed: 2,
  Denied: 3,
  Voided: 10,
  Refunded: 11,
  Pending: 12,
  Aborted: 13,
  Scheduled: 20,
} as const;

/** The gateway's brand names (libs/card) as Cielo spells them. */
const BRANDS: Record<string, string> = {
  visa: 'Visa',
  mastercard: 'Master',
  master: 'Master',
  amex: 'Amex',
  elo: 'Elo',
  diners: 'Diners',
  discover: 'Discover',
  jcb: 'JCB',
  aura: 'Aura',
  hipercard: 'Hipercard',
  hiper: 'Hiper',
};

/** MerchantOrderId: the gateway's transaction id, letters and digits only (32 characters, within Cielo's 50). */
export const cieloOrderId = (transactionId: string) => transactionId.replace(/-/g, '').toLowerCase();

/** A member of a Cielo JSON object, whatever the case of its name. */
export function member(obj: unknown, name: string): unknown {
  if (!obj || typeof obj !== 'object') return undefined;
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(obj as Record<string, unknown>)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');
const num = (v: unknown) => (typeof v === 'number' ? v : Number(v ?? 0) || 0);

export function saleRequest(cmd: AuthorizeCommand): Record<string, unknown> {
  const merchantInitiated = cmd.initiator === 'merchant';
  return {
    MerchantOrderId: cieloOrderId(cmd.transactionId),
    Customer: { Name: cmd.holder.slice(0, 255) },
    Payment: {
      Type: 'CreditCard',
      Amount: cmd.amount,
      Installments: cmd.instalments,
      Interest: 'ByMerchant',
      Capture: cmd.capture,
      // Cielo takes letters and digits only, 13 at most.
      ...(cmd.softDescriptor ? { SoftDescriptor: cmd.softDescriptor.replace(/[^A-Za-z0-9]/g, '').slice(0, 13) } : {}),
      // A recurring charge of a card on file (a rebill's later cycle) says so.
      ...(merchantInitiated ? { Recurrent: true } : {}),
      CreditCard: {
        CardNumber: cmd.pan,
        Holder: cmd.holder.slice(0, 25),
        ExpirationDate: `${String(cmd.expMonth).padStart(2, '0')}/${cmd.expYear}`,
        // A card on file charged by the merchant (a rebill's later cycle) goes without its security code.
        ...(cmd.securityCode && !merchantInitiated ? { SecurityCode: cmd.securityCode } : {}),
        Brand: BRANDS[(cmd.brand ?? '').toLowerCase()] ?? 'Visa',
        CardOnFile: merchantInitiated ? { Usage: 'Used', Reason: 'Recurring' } : { Usage: 'First', Reason: 'Unscheduled' },
      },
    },
  };
}

/** A sale as Cielo answered it (create or query) in the gateway's terms. */
export function resultOfSale(sale: unknown): AcquirerResult {
  const p = member(sale, 'Payment');
  const status = num(member(p, 'Status'));
  const outcome: AcquirerResult['outcome'] =
    status === CieloStatus.Authorized || status === CieloStatus.PaymentConfirmed
      ? 'approved'
      : status === CieloStatus.NotFinished || status === CieloStatus.Pending
        ? 'timeout'
        : 'declined';
  return {
    outcome,
    returnCode: str(member(p, 'ReturnCode')),
    returnMessage: str(member(p, 'ReturnMessage')) || `Cielo status ${status}`,
    authorizationCode: str(member(p, 'AuthorizationCode')) || undefined,
    tid: str(member(p, 'Tid')),
    nsu: str(member(p, 'ProofOfSale')),
    saleRef: str(member(p, 'PaymentId')) || undefined,
  };
}

/** A capture's or void's answer. */
export function resultOfUpdate(answer: unknown, tid: string, saleRef: string | undefined): AcquirerResult {
  const status = num(member(answer, 'Status'));
  const reason = member(answer, 'ReasonCode');
  const ok = reason === undefined || num(reason) === 0;
  return {
    outcome: ok && status !== CieloStatus.Denied ? 'approved' : 'declined',
    returnCode: str(member(answer, 'ReturnCode') ?? member(answer, 'ProviderReturnCode')) || (ok ? '00' : str(reason)),
    returnMessage: str(member(answer, 'ReturnMessage') ?? member(answer, 'ReasonMessage')) || (ok ? 'Successful' : 'Refused'),
    authorizationCode: str(member(answer, 'AuthorizationCode')) || undefined,
    tid: str(member(answer, 'Tid')) || tid,
    nsu: str(member(answer, 'ProofOfSale')),
    saleRef,
  };
}

/** Cielo's 400: a JSON array of `{Code, Message}`; the first names the problem. */
export function refusal(body: unknown, status: number, tid = ''): AcquirerResult {
  const first: unknown = Array.isArray(body) ? (body as unknown[])[0] : body;
  const code = member(first, 'Code');
  return {
    outcome: 'declined',
    returnCode: code === undefined ? String(status) : str(code),
    returnMessage:
      str(member(first, 'Message')) ||
      (status === 401 ? "Cielo refused the merchant's credentials (MerchantId, MerchantKey)" : `HTTP ${status}`),
    tid,
    nsu: '',
  };
}

/** The sale's amounts as reconciliation compares them. */
export function bookOfSale(sale: unknown): AcquirerBook {
  const p = member(sale, 'Payment');
  const status = num(member(p, 'Status'));
  return {
    tid: str(member(p, 'Tid')),
    approved: [CieloStatus.Authorized, CieloStatus.PaymentConfirmed, CieloStatus.Voided, CieloStatus.Refunded].includes(status as 1),
    captured: num(member(p, 'CapturedAmount')),
    cancelled: num(member(p, 'VoidedAmount')),
    amount: num(member(p, 'Amount')),
  };
}

/** The PaymentIds a query by MerchantOrderId lists (`Payments` today, `Payment` in the older manual). */
export function paymentIdsOf(body: unknown): string[] {
  const list = member(body, 'Payments') ?? member(body, 'Payment');
  return Array.isArray(list) ? list.map((p) => str(member(p, 'PaymentId'))).filter(Boolean) : [];
}
