import { AppHandle, post, startApp } from '../support/stack';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Schema = any;

/**
 * /docs is built from the classes that validate the requests: every field has a type, its
 * required-ness and an example, and a request assembled from those examples passes validation
 * (it then fails authentication only: the example credentials are not a merchant's).
 */
describe('the OpenAPI document at /docs', () => {
  let api: AppHandle;
  let doc: Schema;

  beforeAll(async () => {
    api = await startApp('api');
    const res = await fetch(`${api.url}/docs-json`);
    expect(res.status).toBe(200);
    doc = await res.json();
  }, 60_000);

  afterAll(() => api?.stop());

  const resolve = (s: Schema): Schema => (s?.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s);

  /** A value for a schema: its example, or one built from its properties' examples. */
  function exampleOf(s: Schema): unknown {
    const schema = resolve(s);
    if (schema.example !== undefined) return schema.example;
    if (schema.type === 'array') return [exampleOf(schema.items)];
    if (schema.oneOf) return exampleOf(schema.oneOf[0]);
    if (schema.allOf) return exampleOf(schema.allOf[0]);
    const out: Record<string, unknown> = {};
    for (const [name, prop] of Object.entries<Schema>(schema.properties ?? {})) {
      const v = exampleOf(prop);
      if (v !== undefined) out[name] = v;
    }
    return Object.keys(out).length ? out : undefined;
  }

  const requests: [string, string, string][] = [
    ['/v1/receiver', 'sale', 'SaleRequest'],
    ['/v1/receiver', 'authorize', 'AuthorizeRequest'],
    ['/v1/receiver', 'capture', 'CaptureRequest'],
    ['/v1/receiver', 'cancel', 'CancelRequest'],
    ['/v1/receiver', 'report', 'ReportRequest'],
    ['/v1/token/add', 'tokencard', 'TokencardRequest'],
    ['/v1/token/retrieve', 'retrieve-token', 'RetrieveTokenRequest'],
  ];

  it('lists every operation of every endpoint', () => {
    const receiver = doc.paths['/v1/receiver'].post.requestBody.content['application/json'].schema.oneOf.map((r: Schema) =>
      r.$ref.split('/').pop(),
    );
    expect(receiver).toEqual(['SaleRequest', 'AuthorizeRequest', 'CaptureRequest', 'CancelRequest', 'ReportRequest', 'RebillRequest']);
    expect(doc.paths['/v1/token/add'].post.requestBody.content['application/json'].schema.$ref).toMatch(/TokencardRequest$/);
    expect(doc.paths['/v1/token/retrieve'].post.requestBody.content['application/json'].schema.$ref).toMatch(/RetrieveTokenRequest$/);
    for (const path of ['/v1/receiver', '/v1/token/add', '/v1/token/retrieve']) {
      expect(doc.paths[path].post.parameters.map((p: Schema) => p.name)).toContain('Idempotency-Key');
    }
  });

  it('gives every field a type, and every leaf field an example', () => {
    const missing: string[] = [];
    const walk = (s: Schema, at: string, seen: Set<string>) => {
      const schema = resolve(s);
      const name = s?.$ref ?? '';
      if (name && seen.has(name)) return;
      const next = new Set(seen).add(name);
      for (const [field, prop] of Object.entries<Schema>(schema.properties ?? {})) {
        const p = resolve(prop);
        const path = `${at}.${field}`;
        if (!p.type && !p.oneOf && !p.$ref && !p.allOf && !p.properties) missing.push(`${path}: no type`);
        if (p.properties || prop.$ref || p.type === 'array') walk(p.type === 'array' ? p.items : prop, path, next);
        // A token replaces the card fields: an example of it would make the example body contradict itself.
        else if (p.example === undefined && !['cardToken', 'tokenCard'].includes(field)) {
          missing.push(`${path}: no example`);
        }
      }
    };
    for (const [, , name] of requests) walk({ $ref: `#/components/schemas/${name}` }, name, new Set());
    expect(missing).toEqual([]);
  });

  it('marks what is required, with the limits the gateway checks', () => {
    const payment = doc.components.schemas.PaymentDto;
    expect(payment.required).toEqual(expect.arrayContaining(['acquirer', 'method', 'amount', 'currency', 'country']));
    expect(payment.properties.softDescriptor).toMatchObject({ type: 'string', maxLength: 22 });
    expect(payment.properties.numberOfPayments.oneOf[0]).toMatchObject({ type: 'integer', minimum: 1, maximum: 12 });
    expect(payment.properties.cardNumber).toMatchObject({ type: 'string', pattern: '^\\d{12,19}$' });
    expect(doc.components.schemas.OrderDto.required).toEqual(['reference', 'totalAmount']);
    expect(doc.components.schemas.VerificationDto.required).toEqual(['merchantId', 'merchantKey']);
  });

  it.each(requests)('%s %s: a request built from the examples passes validation', async (path, operation, name) => {
    const body = exampleOf({ $ref: `#/components/schemas/${name}` }) as Record<string, Record<string, Record<string, unknown>>>;
    const op = body['transaction-request'][operation];
    if (operation === 'report') delete op.reference; // transactionId or reference, not both
    if (op.payment) (op.payment as Record<string, unknown>).split = [{ recipient: 'r1', percentage: '10' }];
    const res = await post(api.url, path, body);
    expect({ status: res.status, error: res.json?.result?.error?.code }).toEqual({ status: 401, error: '010' });
  });
});
