import pino from 'pino';
import { Writable } from 'node:stream';
import { REDACT_PATHS } from './logging';

/** The redaction is the second line of defence: anything card-shaped logged by mistake is censored. */
describe('log redaction', () => {
  function logged(obj: object): string {
    let out = '';
    const sink = new Writable({ write: (chunk, _enc, cb) => ((out += chunk.toString()), cb()) });
    pino({ redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } }, sink).info(obj, 'x');
    return out;
  }

  it.each([
    [{ cardNumber: '4111111111111111' }],
    [{ payload: { cardNumber: '4111111111111111', cardSecurityCode: '0917' } }],
    [{ job: { p: { cardNumber: '4111111111111111', cardSecurityCode: '0917' } } }],
    [{ body: { tokencard: { cardNumber: '4111111111111111' } } }],
    [{ p: { sealedCard: 'eyJhbGciOi' } }],
    [{ verification: { merchantKey: 'mk_secret' } }],
  ])('censors %j', (obj) => {
    const line = logged(obj);
    expect(line).toContain('[REDACTED]');
    expect(line).not.toMatch(/4111111111111111|0917|eyJhbGciOi|mk_secret/);
  });
});
