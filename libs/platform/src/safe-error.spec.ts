import type { IncomingMessage } from 'node:http';
import { isSafeRequestId, pathOf, requestIdOf } from './logging';
import { CARD_LIKE_CENSOR, safeError, scrubCardNumbers } from './safe-error';

describe('scrubCardNumbers', () => {
  it.each(['4111111111111111', '4111 1111 1111 1111', '4111-1111-1111-1111', '378282246310005', '6062825624254001'])(
    'censors the card-shaped %s',
    (n) => {
      expect(scrubCardNumbers(`card ${n} failed`)).toBe(`card ${CARD_LIKE_CENSOR} failed`);
    },
  );

  it.each(['1764600000001', '4111111111111112', '0a1b2c3d-1234-4321-8888-123456789012', 'order 12345', '41111111111111111111'])(
    'keeps %s (not a Luhn-valid 13-19 digit run)',
    (s) => {
      expect(scrubCardNumbers(s)).toBe(s);
    },
  );

  it('keeps UUIDs whole, whose digit groups can look like a grouped card number', () => {
    // 61374124-2924-47 is 14 Luhn-valid digits in dash-separated groups.
    for (const id of ['61374124-2924-47b7-8226-73b793cb425b', '61374124-2924-47B7-8226-73B793CB425B'])
      expect(scrubCardNumbers(`job ${id} attempt 1`)).toBe(`job ${id} attempt 1`);
    // Still a card number beside an id.
    expect(scrubCardNumbers('job 61374124-2924-47b7-8226-73b793cb425b card 4111 1111 1111 1111')).toBe(
      `job 61374124-2924-47b7-8226-73b793cb425b card ${CARD_LIKE_CENSOR}`,
    );
  });
});

describe('safeError', () => {
  it('copies type, code and message only: never the other properties', () => {
    const e = Object.assign(new Error('boom'), {
      code: 'E1',
      parameters: ['secret'],
      detail: 'Key (x)=(secret)',
      config: { headers: { authorization: 'secret' } },
    });
    const s = safeError(e);
    expect(s).toMatchObject({ type: 'Error', message: 'boom', code: 'E1' });
    expect(JSON.stringify(s)).not.toContain('secret');
  });

  it('a pg error: SQLSTATE, constraint and table, the quoted value withheld, detail and where dropped', () => {
    const pg = Object.assign(new Error('invalid input value for enum brand: "4111111111111111 x"'), {
      severity: 'ERROR',
      code: '22P02',
      detail: 'Key (pan)=(4111111111111111)',
      where: "unnamed portal parameter $1 = '4111'",
      constraint: 'c',
      table: 't',
    });
    const s = safeError(pg);
    expect(s).toMatchObject({
      code: '22P02',
      constraint: 'c',
      table: 't',
      message: 'invalid input value for enum brand: [value withheld]',
    });
    expect(JSON.stringify(s)).not.toMatch(/4111|Key \(|portal/);
  });

  it('follows causes and AggregateError members, scrubbing each; stops at a cycle and at depth', () => {
    const inner = new Error('card 4111111111111111');
    const agg = new AggregateError([inner, 'plain 5555555555554444'], 'several', { cause: new Error('why', { cause: inner }) });
    const s = safeError(agg);
    expect(s.errors?.map((x) => x.message)).toEqual([`card ${CARD_LIKE_CENSOR}`, `plain ${CARD_LIKE_CENSOR}`]);
    expect(s.cause?.cause?.message).toBe(`card ${CARD_LIKE_CENSOR}`);
    expect(JSON.stringify(s)).not.toMatch(/4111111111111111|5555555555554444/);
    const loop = new Error('loop') as Error & { cause?: unknown };
    loop.cause = new Error('back', { cause: loop });
    expect(() => JSON.stringify(safeError(loop))).not.toThrow();
  });

  it('anything thrown that is not an Error: its string form, scrubbed; an object is never dumped', () => {
    expect(safeError('4111111111111111')).toEqual({ type: 'string', message: CARD_LIKE_CENSOR });
    expect(JSON.stringify(safeError({ kind: 'x', message: 'm', pan: '4111111111111111' }))).not.toContain('4111');
  });
});

describe('request ids', () => {
  const req = (id?: string) => ({ headers: id === undefined ? {} : { 'x-request-id': id } }) as unknown as IncomingMessage;

  it.each(['abc-123', 'req_01HF3', 'a.b.c', '2024-01-01T00'.replace(':', ''), 'x'.repeat(64)])('keeps the safe id %s', (id) =>
    expect(requestIdOf(req(id))).toBe(id),
  );

  it.each([
    '4111111111111111',
    '4111-1111-1111-1111',
    'order-411111111111',
    'a4111.1111.1111.1111',
    '12345',
    '',
    'x'.repeat(65),
    'a b',
    'a\nb',
  ])('replaces %j by a fresh id', (id) => {
    expect(isSafeRequestId(id)).toBe(false);
    expect(requestIdOf(req(id))).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('gives one request the same id however often it is asked', () => {
    const r = req('4111111111111111');
    expect(requestIdOf(r)).toBe(requestIdOf(r));
  });

  it('logs the path, never the query string', () => {
    expect(pathOf('/v1/receiver?cardNumber=4111111111111111&cvv=123')).toBe('/v1/receiver');
    expect(pathOf('/v1/x#frag')).toBe('/v1/x');
    expect(pathOf('/v1/4111111111111111')).toBe(`/v1/${CARD_LIKE_CENSOR}`);
  });

  it('censors a card number in the path however it is percent-encoded, and leaves other paths as sent', () => {
    for (const p of [
      '/v1/4111%201111%201111%201111',
      '/v1/4111%2D1111%2d1111%2D1111',
      '/v1/%34%31%31%31111111111111',
      '/v1/%ZZ/4111%201111%201111%201111',
    ]) {
      expect(pathOf(p)).not.toMatch(/4111/);
    }
    expect(pathOf('/v1/a%2Fb%20c')).toBe('/v1/a%2Fb%20c');
  });
});
