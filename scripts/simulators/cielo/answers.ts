/** The shapes Cielo answers with (PascalCase), built from a sale record. */
import { SaleRecord } from './sales';

export interface Link {
  Method: 'GET' | 'PUT';
  Rel: string;
  Href: string;
}

/** Cielo's dates: Brasília time (UTC-3, no daylight saving since 2019), `YYYY-MM-DD HH:mm:ss`. */
export function cieloDate(ms: number): string {
  return new Date(ms - 3 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
}

/** The query-by-order answer's date (`ReceveidDate`, sic): `YYYY-MM-DDTHH:mm:ss.fff`. */
export function isoLocal(ms: number): string {
  return new Date(ms - 3 * 3_600_000).toISOString().slice(0, 23);
}

/** What can still be done with the sale, as links to this simulator (one host answers both APIs). */
export function links(s: SaleRecord, base: string): Link[] {
  const href = `${base}/1/sales/${s.paymentId}`;
  const out: Link[] = [{ Method: 'GET', Rel: 'self', Href: href }];
  if (s.status === 1) out.push({ Method: 'PUT', Rel: 'capture', Href: `${href}/capture` });
  if (s.status === 1 || (s.status === 2 && s.voidedAmount < s.capturedAmount))
    out.push({ Method: 'PUT', Rel: 'void', Href: `${href}/void` });
  return out;
}

/** The whole sale, as the create answers it and the query shows it. */
export function saleBody(s: SaleRecord, base: string, provisional?: number) {
  const final = provisional === undefined;
  const status = final ? s.status : provisional;
  return {
    MerchantOrderId: s.merchantOrderId,
    ...(s.acquirerOrderId ? { AcquirerOrderId: s.acquirerOrderId } : {}),
    Customer: s.customerName ? { Name: s.customerName } : {},
    Payment: {
      ServiceTaxAmount: s.serviceTaxAmount,
      Installments: s.installments,
      Interest: s.interest,
      Capture: s.captureRequested,
      Authenticate: false,
      Recurrent: s.recurrent,
      CreditCard: {
        CardNumber: s.card.maskedNumber,
        Holder: s.card.holder,
        ExpirationDate: s.card.expirationDate,
        SaveCard: false,
        Brand: s.card.brand,
        ...(s.card.cardOnFile ? { CardOnFile: s.card.cardOnFile } : {}),
      },
      Tid: s.tid,
      ...(final ? { ProofOfSale: s.proofOfSale } : {}),
      ...(final && s.authorizationCode ? { AuthorizationCode: s.authorizationCode } : {}),
      ...(s.softDescriptor ? { SoftDescriptor: s.softDescriptor } : {}),
      Provider: 'Simulado',
      PaymentId: s.paymentId,
      Type: 'CreditCard',
      Amount: s.amount,
      ReceivedDate: cieloDate(s.receivedAt),
      ...(final ? amounts(s) : {}),
      Currency: 'BRL',
      Country: 'BRA',
      ExtraDataCollection: [],
      Status: status,
      IsSplitted: false,
      ...(final ? { ReturnCode: s.returnCode, ReturnMessage: s.returnMessage } : {}),
      Links: final ? links(s, base) : links({ ...s, status: 0 }, base),
    },
  };
}

function amounts(s: SaleRecord) {
  return {
    ...(s.capturedAt !== undefined ? { CapturedAmount: s.capturedAmount, CapturedDate: cieloDate(s.capturedAt) } : {}),
    ...(s.voidedAt !== undefined ? { VoidedAmount: s.voidedAmount, VoidedDate: cieloDate(s.voidedAt) } : {}),
  };
}

/** A capture's or void's answer: the sale's status after it and the acquirer's return. */
export function updateBody(s: SaleRecord, base: string, returnCode: string) {
  return {
    Status: s.status,
    ReasonCode: 0,
    ReasonMessage: 'Successful',
    ProviderReturnCode: returnCode,
    ProviderReturnMessage: 'Operation Successful',
    ReturnCode: returnCode,
    ReturnMessage: 'Operation Successful',
    Tid: s.tid,
    ProofOfSale: s.proofOfSale,
    AuthorizationCode: s.authorizationCode,
    Links: links(s, base),
  };
}
