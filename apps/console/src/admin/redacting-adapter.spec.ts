import { redactFailure } from './redacting-adapter';

const CARD = '4111111111111111';

describe('what bull-board shows of a failed job', () => {
  const failed = {
    id: '1',
    data: { x: 1 },
    failedReason: `refused card ${CARD} cvv 123`,
    stacktrace: [
      `TypeError: first ${CARD}\n    at one (/app/a.js:1:1)`,
      `RangeError: refused card ${CARD} cvv 123\nsecond line of the message\n    at two (/app/b.js:2:2)`,
    ],
  };

  it('on a card-bearing queue: the error class instead of the message, the stack frames only', () => {
    const shown = redactFailure(failed, true);
    expect(shown.failedReason).toBe('RangeError (message hidden: card-bearing queue)');
    expect(shown.stacktrace).toEqual([
      'TypeError: [message hidden: card-bearing queue]\n    at one (/app/a.js:1:1)',
      'RangeError: [message hidden: card-bearing queue]\n    at two (/app/b.js:2:2)',
    ]);
    expect(JSON.stringify(shown)).not.toMatch(/4111|cvv|second line/);
    expect(shown.data).toEqual({ x: 1 });
  });

  it('on the other queues: card-like digit runs masked, the rest kept', () => {
    const shown = redactFailure(failed, false);
    expect(shown.failedReason).toMatch(/^refused card .+ cvv 123$/);
    expect(JSON.stringify(shown)).not.toContain(CARD);
    expect(shown.stacktrace?.[1]).toContain('at two (/app/b.js:2:2)');
  });

  it('a job that did not fail is left as it is', () => {
    const ok = { id: '2', stacktrace: [] as string[] };
    expect(redactFailure(ok, true)).toEqual({ id: '2', stacktrace: [], failedReason: undefined });
  });

  it('a job whose failure a retry cleared (failedReason null, as bull-board reads it after job.retry()) is left as it is', () => {
    for (const cardBearing of [true, false])
      expect(redactFailure({ id: '3', failedReason: null, stacktrace: null }, cardBearing)).toEqual({
        id: '3',
        failedReason: null,
        stacktrace: null,
      });
  });
});
