import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** One exported span, flattened from OTLP/HTTP JSON: its service, ids, name and attributes. */
export interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  status: number;
  attributes: Record<string, unknown>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const valueOf = (v: Json): unknown => v?.stringValue ?? v?.intValue ?? v?.boolValue ?? v?.doubleValue ?? v;
const attributesOf = (list: Json[] = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/** An OTLP/HTTP receiver (JSON, as the exporter sends it): every POST to /v1/traces, kept raw and flattened. */
export class OtlpReceiver {
  readonly spans: ExportedSpan[] = [];
  /** Every export body as received, for the canary scan. */
  readonly raw: string[] = [];
  private server?: Server;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (req.url === '/v1/traces') this.take(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  trace(traceId: string): ExportedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private take(body: string): void {
    this.raw.push(body);
    const doc: Json = JSON.parse(body);
    for (const rs of doc.resourceSpans ?? []) {
      const service = String(attributesOf(rs.resource?.attributes)['service.name']);
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? [])
          this.spans.push({
            service,
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            status: s.status?.code ?? 0,
            attributes: attributesOf(s.attributes),
          });
    }
  }
}
