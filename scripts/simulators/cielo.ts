/**
 * Cielo E-commerce API 3.0 simulator (`npm run simulator -- cielo`): the transactional paths
 * (`POST /1/sales/`, `PUT /1/sales/{PaymentId}/capture|void`) and the query paths
 * (`GET /1/sales/{PaymentId}`, `GET /1/sales?merchantOrderId=`, `GET /1/sales/acquirerTid/{Tid}`)
 * on one port. Options: `--merchant-id <guid> --merchant-key <key>` (only that pair is let in;
 * any GUID and non-empty key otherwise), `--void-spacing-ms <n>` (Cielo's 5 s between two voids of
 * one sale; 0 = not enforced), `--verbose` (one line per request on stderr). See docs/simulators/cielo.md.
 */
import { SimAnswer, Simulator, SimRequest } from './faults';
import { isoLocal, saleBody } from './cielo/answers';
import { captureSale, createSale, voidSale } from './cielo/operations';
import { ledgerEntry, SaleBook } from './cielo/sales';
import { validateSale } from './cielo/validate';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SALES = /^\/1\/sales\/?$/;
const UPDATE = /^\/1\/sales\/([^/]+)\/(capture|void)\/?$/;
const BY_TID = /^\/1\/sales\/acquirerTid\/([^/]+)\/?$/i;
const ONE = /^\/1\/sales\/([^/]+)\/?$/;

export interface CieloOptions {
  merchantId?: string;
  merchantKey?: string;
  voidSpacingMs: number;
  verbose: boolean;
}

export function cieloSimulator(args: Map<string, string>): Simulator {
  return new CieloSimulator({
    merchantId: args.get('merchant-id'),
    merchantKey: args.get('merchant-key'),
    voidSpacingMs: Number(args.get('void-spacing-ms') ?? 5_000),
    verbose: args.has('verbose') && args.get('verbose') !== 'false',
  });
}

export class CieloSimulator implements Simulator {
  readonly name = 'cielo';
  private readonly book = new SaleBook();

  constructor(private readonly opts: CieloOptions) {}

  handle(req: SimRequest): SimAnswer {
    const out = this.route(req);
    if (this.opts.verbose)
      process.stderr.write(`cielo ${req.method} ${req.path} -> ${out.status}${req.fault ? ` (${req.fault.mode})` : ''}\n`);
    return out;
  }

  ledger() {
    return { sales: this.book.all().map(ledgerEntry) };
  }

  reset(): void {
    this.book.clear();
  }

  private route(req: SimRequest): SimAnswer {
    const merchantId = this.merchantOf(req);
    if (!merchantId) return { status: 401 };
    const base = `http://${req.headers.host ?? '127.0.0.1'}`;
    const now = Date.now();
    const { method, path } = req;
    if (method === 'POST' && SALES.test(path)) return this.create(req, merchantId, base, now);
    if (method === 'GET' && SALES.test(path)) return this.byOrderId(req, merchantId);
    let m = UPDATE.exec(path);
    if (m && method === 'PUT') return this.update(m[1], m[2], req, merchantId, base, now);
    m = BY_TID.exec(path);
    if (m && method === 'GET') return this.found(this.book.byTidOf(merchantId, decodeURIComponent(m[1])), base);
    m = ONE.exec(path);
    if (m && method === 'GET') return this.found(this.book.get(merchantId, decodeURIComponent(m[1])), base);
    return m || UPDATE.test(path) || SALES.test(path) ? { status: 405 } : { status: 404 };
  }

  /** The MerchantId the request is let in as; undefined → 401 (no body, as Cielo). */
  private merchantOf(req: SimRequest): string | undefined {
    const id = header(req, 'merchantid');
    const key = header(req, 'merchantkey');
    if (!id || !key || !GUID.test(id)) return undefined;
    const merchantId = id.toLowerCase();
    const { merchantId: only, merchantKey } = this.opts;
    if (only && (merchantId !== only.toLowerCase() || key !== merchantKey)) return undefined;
    return merchantId;
  }

  private create(req: SimRequest, merchantId: string, base: string, now: number): SimAnswer {
    const checked = validateSale(req.body, req.malformed, new Date(now));
    if ('errors' in checked) return { status: 400, body: checked.errors };
    const sale = createSale(this.book, merchantId, checked.sale, now);
    // Cielo's own faults: the create answers NotFinished (0) or Pending (12); queries show the sale as it ended.
    const provisional = req.fault?.mode === 'status-0' ? 0 : req.fault?.mode === 'status-12' ? 12 : undefined;
    return { status: 201, body: saleBody(sale, base, provisional) };
  }

  private update(paymentId: string, kind: string, req: SimRequest, merchantId: string, base: string, now: number): SimAnswer {
    const sale = this.book.get(merchantId, decodeURIComponent(paymentId));
    if (!sale) return { status: 404 };
    const raw = req.query.get('amount') ?? req.query.get('Amount');
    const amount = raw === null || raw === '' ? undefined : /^\d+$/.test(raw) ? Number(raw) : NaN;
    return kind === 'capture' ? captureSale(sale, amount, base, now) : voidSale(sale, amount, base, now, this.opts.voidSpacingMs);
  }

  private byOrderId(req: SimRequest, merchantId: string): SimAnswer {
    const orderId = req.query.get('merchantOrderId') ?? req.query.get('merchantorderid') ?? req.query.get('MerchantOrderId');
    const sales = orderId ? this.book.byOrderId(merchantId, orderId) : [];
    if (sales.length === 0) return { status: 404 };
    const payments = sales.map((s) => ({ PaymentId: s.paymentId, ReceveidDate: isoLocal(s.receivedAt) }));
    return { status: 200, body: { ReasonCode: 0, ReasonMessage: 'Successful', Payments: payments } };
  }

  private found(sale: ReturnType<SaleBook['get']>, base: string): SimAnswer {
    return sale ? { status: 200, body: saleBody(sale, base) } : { status: 404 };
  }
}

function header(req: SimRequest, name: string): string | undefined {
  const v = req.headers[name];
  const s = (Array.isArray(v) ? v[0] : v)?.trim();
  return s ? s : undefined;
}
