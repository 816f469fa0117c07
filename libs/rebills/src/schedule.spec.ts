import fc from 'fast-check';
import {
  CycleOutcome,
  cycleCount,
  cycleDate,
  dueAt,
  HARD_DECLINE_ERROR_CODES,
  HARD_DECLINE_RETURN_CODES,
  isHardDecline,
  nextStep,
  NextStep,
  RebillSchedule,
} from './schedule';
import { isCalendarDate, RebillPeriod, RebillPeriods, TransactionStatus } from '@app/contracts';

/**
 * The rebill schedule math against a naive calendar of its own: no Date, no day numbers, months
 * counted one at a time and days stepped one at a time. Whatever cycleDate does to be fast, it
 * must land on the dates a person with a paper calendar would.
 */

// ---- the paper calendar -------------------------------------------------------------------

interface Ymd {
  y: number;
  m: number;
  d: number;
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const monthLength = (y: number, m: number) => (m === 2 && isLeap(y) ? 29 : MONTH_DAYS[m - 1]);
const pad = (n: number, w: number) => String(n).padStart(w, '0');
const text = (x: Ymd) => `${pad(x.y, 4)}-${pad(x.m, 2)}-${pad(x.d, 2)}`;
const parse = (s: string): Ymd => {
  const [y, m, d] = s.split('-').map(Number);
  return { y, m, d };
};

function nextDay({ y, m, d }: Ymd): Ymd {
  if (d < monthLength(y, m)) return { y, m, d: d + 1 };
  if (m < 12) return { y, m: m + 1, d: 1 };
  return { y: y + 1, m: 1, d: 1 };
}

function previousDay({ y, m, d }: Ymd): Ymd {
  if (d > 1) return { y, m, d: d - 1 };
  if (m > 1) return { y, m: m - 1, d: monthLength(y, m - 1) };
  return { y: y - 1, m: 12, d: 31 };
}

function addDays(x: Ymd, days: number): Ymd {
  let r = x;
  let left = days;
  // Whole rest-of-months at once (to the 1st of the next month), then day by day.
  while (left > monthLength(r.y, r.m) - r.d) {
    left -= monthLength(r.y, r.m) - r.d + 1;
    r = r.m === 12 ? { y: r.y + 1, m: 1, d: 1 } : { y: r.y, m: r.m + 1, d: 1 };
  }
  for (let i = 0; i < left; i++) r = nextDay(r);
  return r;
}

/** Days from a to b (b not before a), by counting. */
function daysBetween(a: Ymd, b: Ymd): number {
  let n = 0;
  for (let r = a; text(r) !== text(b); r = nextDay(r)) n++;
  return n;
}

/** `months` months after the start's month, on the start's day or the month's last day if shorter. */
function addMonthsFromStart(start: Ymd, months: number): Ymd {
  let { y, m } = start;
  for (let i = 0; i < months; i++) {
    m++;
    if (m === 13) {
      m = 1;
      y++;
    }
  }
  return { y, m, d: Math.min(start.d, monthLength(y, m)) };
}

/** The naive date of cycle n (1 is the start). */
function naiveCycle(start: string, period: RebillPeriod, frequency: number, n: number): string {
  const s = parse(start);
  const steps = (n - 1) * frequency;
  switch (period) {
    case RebillPeriods.Daily:
      return text(addDays(s, steps));
    case RebillPeriods.Weekly:
      return text(addDays(s, 7 * steps));
    case RebillPeriods.Monthly:
      return text(addMonthsFromStart(s, steps));
    case RebillPeriods.Yearly:
      return text(addMonthsFromStart(s, 12 * steps));
  }
}

/** Every cycle date up to n, by the naive calendar, day by day from the start (for the long runs). */
function naiveCycles(start: string, period: RebillPeriod, frequency: number, n: number): string[] {
  if (period === RebillPeriods.Monthly || period === RebillPeriods.Yearly)
    return Array.from({ length: n }, (_, i) => naiveCycle(start, period, frequency, i + 1));
  const stride = (period === RebillPeriods.Weekly ? 7 : 1) * frequency;
  const out: string[] = [];
  let at = parse(start);
  for (let i = 0; i < n; i++) {
    out.push(text(at));
    at = addDays(at, stride);
  }
  return out;
}

// ---- generators ---------------------------------------------------------------------------

const periodArb = fc.constantFrom<RebillPeriod>(RebillPeriods.Daily, RebillPeriods.Weekly, RebillPeriods.Monthly, RebillPeriods.Yearly);

/**
 * A calendar date between 1971 and 2999, often on a day that is not in every month (29, 30, 31)
 * and on 29 February, often in the century years where the leap rule bites (1900, 2000, 2100).
 */
const dateArb: fc.Arbitrary<string> = fc
  .record({
    y: fc.oneof(fc.integer({ min: 1971, max: 2999 }), fc.constantFrom(1996, 2000, 2024, 2028, 2096, 2100, 2400)),
    m: fc.integer({ min: 1, max: 12 }),
    day: fc.oneof(
      { weight: 2, arbitrary: fc.integer({ min: 1, max: 31 }) },
      { weight: 1, arbitrary: fc.constant('last' as const) },
      { weight: 1, arbitrary: fc.constant('feb29' as const) },
    ),
  })
  .map(({ y, m, day }) => {
    if (day === 'feb29') {
      // The nearest leap year at or after y.
      let ly = y;
      while (!isLeap(ly)) ly++;
      return text({ y: ly, m: 2, d: 29 });
    }
    const last = monthLength(y, m);
    return text({ y, m, d: day === 'last' ? last : Math.min(day, last) });
  });

const frequencyArb = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 3 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 99 }) },
);

/** Ascending whole days from 1 to 365, at most 10 (what REBILL_RETRY_DAYS accepts). */
const retryDaysArb = fc
  .uniqueArray(fc.integer({ min: 1, max: 365 }), { minLength: 0, maxLength: 10 })
  .map((days) => [...days].sort((a, b) => a - b));

/** A schedule whose dateEnd is some days after its start, often exactly on a later cycle or the day before one. */
const scheduleArb: fc.Arbitrary<RebillSchedule> = fc
  .record({
    dateStart: dateArb,
    period: periodArb,
    frequency: frequencyArb,
    end: fc.oneof(
      fc.record({ days: fc.integer({ min: 1, max: 4_000 }) }),
      fc.record({ cycle: fc.integer({ min: 2, max: 20 }), dayBefore: fc.boolean() }),
    ),
    retryDays: retryDaysArb,
  })
  .map(({ dateStart, period, frequency, end, retryDays }) => {
    let dateEnd: string;
    if ('days' in end) dateEnd = text(addDays(parse(dateStart), end.days));
    else {
      const on = naiveCycle(dateStart, period, frequency, end.cycle);
      dateEnd = end.dayBefore ? text(previousDay(parse(on))) : on;
    }
    return { dateStart, period, frequency, dateEnd, retryDays };
  });

const DAY_MS = 86_400_000;
const midnight = (date: string) => new Date(`${date}T00:00:00.000Z`);

// ---- the properties -----------------------------------------------------------------------

describe('cycleDate', () => {
  it('lands on the date the naive calendar gives, for every period, frequency and cycle', () => {
    fc.assert(
      fc.property(dateArb, periodArb, frequencyArb, fc.integer({ min: 1, max: 40 }), (start, period, frequency, n) => {
        expect(cycleDate(start, period, frequency, n)).toBe(naiveCycle(start, period, frequency, n));
      }),
      { numRuns: 3_000 },
    );
  });

  it('counts months and years from the start day each time: a short month does not pull later cycles back', () => {
    const monthly = (start: string, n: number) => Array.from({ length: n }, (_, i) => cycleDate(start, RebillPeriods.Monthly, 1, i + 1));
    expect(monthly('2027-01-31', 5)).toEqual(['2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30', '2027-05-31']);
    expect(monthly('2028-01-31', 3)).toEqual(['2028-01-31', '2028-02-29', '2028-03-31']);
    expect(monthly('2027-11-30', 4)).toEqual(['2027-11-30', '2027-12-30', '2028-01-30', '2028-02-29']);
    const yearly = (start: string, n: number, f = 1) =>
      Array.from({ length: n }, (_, i) => cycleDate(start, RebillPeriods.Yearly, f, i + 1));
    expect(yearly('2024-02-29', 5)).toEqual(['2024-02-29', '2025-02-28', '2026-02-28', '2027-02-28', '2028-02-29']);
    // 2100 is not a leap year, 2400 is.
    expect(yearly('2096-02-29', 2, 4)).toEqual(['2096-02-29', '2100-02-28']);
    expect(yearly('2396-02-29', 2, 4)).toEqual(['2396-02-29', '2400-02-29']);
    expect(cycleDate('2027-12-31', RebillPeriods.Daily, 1, 2)).toBe('2028-01-01');
    expect(cycleDate('2028-02-22', RebillPeriods.Weekly, 1, 2)).toBe('2028-02-29');
    expect(cycleDate('2027-01-31', RebillPeriods.Monthly, 13, 2)).toBe('2028-02-29');
  });

  it('is strictly increasing, cycle after cycle, and daily and weekly cycles are exactly frequency days (weeks) apart', () => {
    fc.assert(
      fc.property(dateArb, periodArb, frequencyArb, fc.integer({ min: 2, max: 30 }), (start, period, frequency, n) => {
        const dates = naiveCycles(start, period, frequency, n);
        const got = Array.from({ length: n }, (_, i) => cycleDate(start, period, frequency, i + 1));
        expect(got).toEqual(dates);
        for (let i = 1; i < n; i++) expect(got[i] > got[i - 1]).toBe(true);
        if (period === RebillPeriods.Daily || period === RebillPeriods.Weekly) {
          const stride = (period === RebillPeriods.Weekly ? 7 : 1) * frequency;
          expect(daysBetween(parse(got[n - 2]), parse(got[n - 1]))).toBe(stride);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('cycleCount', () => {
  it('is the number of cycles on or before dateEnd: the last counted one is on or before it, the next one after it', () => {
    fc.assert(
      fc.property(scheduleArb, (s) => {
        const count = cycleCount(s.dateStart, s.period, s.frequency, s.dateEnd);
        // dateEnd is not before dateStart: the first cycle is always in.
        expect(count).toBeGreaterThanOrEqual(1);
        expect(naiveCycle(s.dateStart, s.period, s.frequency, count) <= s.dateEnd).toBe(true);
        expect(naiveCycle(s.dateStart, s.period, s.frequency, count + 1) > s.dateEnd).toBe(true);
      }),
      { numRuns: 1_000 },
    );
  });

  it('is 0 when dateEnd is before dateStart, and 1 when it is dateStart itself', () => {
    fc.assert(
      fc.property(dateArb, periodArb, frequencyArb, (start, period, frequency) => {
        expect(cycleCount(start, period, frequency, start)).toBe(1);
        expect(cycleCount(start, period, frequency, '1970-01-01')).toBe(0);
      }),
    );
  });
});

describe('dueAt', () => {
  it('is 00:00 UTC of the date', () => {
    fc.assert(
      fc.property(dateArb, (date) => {
        expect(dueAt(date).toISOString()).toBe(`${date}T00:00:00.000Z`);
      }),
    );
  });
});

describe('isCalendarDate', () => {
  it('accepts exactly the real dates written YYYY-MM-DD (years 1000 to 9999)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1000, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }), (y, m, d) => {
        const real = m >= 1 && m <= 12 && d >= 1 && d <= monthLength(y, m);
        expect(isCalendarDate(`${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`)).toBe(real);
      }),
      { numRuns: 5_000 },
    );
  });

  it('knows the leap years: 29 February 2000 and 2400 exist, of 1900 and 2100 not', () => {
    expect(['2000-02-29', '2024-02-29', '2400-02-29'].map(isCalendarDate)).toEqual([true, true, true]);
    expect(['1900-02-29', '2100-02-29', '2027-02-29', '2027-04-31'].map(isCalendarDate)).toEqual([false, false, false, false]);
  });

  it('refuses anything not written YYYY-MM-DD', () => {
    for (const bad of [
      '2027-1-01',
      '2027-01-1',
      '20270101',
      '2027/01/01',
      ' 2027-01-01',
      '2027-01-01 ',
      '2027-01-01T00:00:00Z',
      '+02027-01-01',
      '27-01-01',
      '٢٠٢٧-٠١-٠١',
      '2027-01-01\n',
      '',
    ])
      expect(isCalendarDate(bad)).toBe(false);
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (s) => {
        fc.pre(!/^\d{4}-\d{2}-\d{2}$/.test(s));
        expect(isCalendarDate(s)).toBe(false);
      }),
    );
  });
});

// ---- what happens after a charge ----------------------------------------------------------

const SOFT_RETURN_CODES = ['05', '51', '57', '91', '00', ''];
const OTHER_ERROR_CODES = ['', '100', '101', '503'];

/** A decline: hard by its return code or error code, or soft. */
const declineArb = fc.oneof(
  fc.record({ returnCode: fc.constantFrom(...HARD_DECLINE_RETURN_CODES), errorCode: fc.constantFrom(...OTHER_ERROR_CODES, '911') }),
  fc.record({ returnCode: fc.constantFrom(...SOFT_RETURN_CODES), errorCode: fc.constantFrom(...HARD_DECLINE_ERROR_CODES) }),
  fc.record({ returnCode: fc.constantFrom(...SOFT_RETURN_CODES), errorCode: fc.constantFrom(...OTHER_ERROR_CODES) }),
);

/** The naive rule for what follows a charge. */
function expectedStep(s: RebillSchedule, o: CycleOutcome): NextStep {
  if (o.status === TransactionStatus.Approved) {
    const next = naiveCycle(s.dateStart, s.period, s.frequency, o.cycle + 1);
    return next > s.dateEnd
      ? { state: 'completed', nextCycle: o.cycle + 1, nextAttempt: 0, nextDueAt: null }
      : { state: 'active', nextCycle: o.cycle + 1, nextAttempt: 0, nextDueAt: midnight(next) };
  }
  const hard = ['14', '41', '43', '54', '78'].includes(o.returnCode ?? '') || o.errorCode === '911';
  if (hard) return { state: 'suspended', nextCycle: o.cycle, nextAttempt: o.attempt, nextDueAt: null, reason: 'hard_decline' };
  if (o.attempt >= s.retryDays.length)
    return { state: 'suspended', nextCycle: o.cycle, nextAttempt: o.attempt, nextDueAt: null, reason: 'retries_exhausted' };
  const retry = addDays(parse(naiveCycle(s.dateStart, s.period, s.frequency, o.cycle)), s.retryDays[o.attempt]);
  return { state: 'active', nextCycle: o.cycle, nextAttempt: o.attempt + 1, nextDueAt: midnight(text(retry)) };
}

describe('isHardDecline', () => {
  it("is a decline that retrying cannot cure: return codes 14, 41, 43, 54, 78 or the gateway's expired card (911)", () => {
    expect([...HARD_DECLINE_RETURN_CODES].sort()).toEqual(['14', '41', '43', '54', '78']);
    expect([...HARD_DECLINE_ERROR_CODES]).toEqual(['911']);
    fc.assert(
      fc.property(declineArb, (d) => {
        expect(isHardDecline(d)).toBe(['14', '41', '43', '54', '78'].includes(d.returnCode) || d.errorCode === '911');
      }),
    );
    expect(isHardDecline({ errorCode: '' })).toBe(false);
    expect(isHardDecline({ errorCode: '911' })).toBe(true);
  });
});

describe('nextStep', () => {
  /** A schedule and a charge of one of its cycles, at an attempt the retry schedule allows. */
  const chargeArb = scheduleArb.chain((s) => {
    const cycles = Math.min(cycleCount(s.dateStart, s.period, s.frequency, s.dateEnd), 60);
    return fc.record({
      s: fc.constant(s),
      cycle: fc.oneof(fc.integer({ min: 1, max: cycles }), fc.constant(cycles)),
      attempt: fc.integer({ min: 0, max: s.retryDays.length }),
      outcome: fc.oneof<fc.Arbitrary<{ status: number; errorCode: string; returnCode: string }>[]>(
        fc.constant({ status: TransactionStatus.Approved, errorCode: '', returnCode: '00' }),
        declineArb.map((d) => ({ status: TransactionStatus.Unauthorized, ...d })),
      ),
    });
  });

  it('approved: the next cycle (or completed past dateEnd); soft decline: a retry after retryDays[attempt], then retries_exhausted; hard: suspended', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(chargeArb, ({ s, cycle, attempt, outcome }) => {
        const o: CycleOutcome = { cycle, attempt, ...outcome };
        const got = nextStep(s, o);
        const want = expectedStep(s, o);
        expect(got).toEqual(want);
        seen.add(`${want.state}/${want.reason ?? ''}`);
      }),
      { numRuns: 1_000 },
    );
    // Every branch was taken.
    expect([...seen].sort()).toEqual(['active/', 'completed/', 'suspended/hard_decline', 'suspended/retries_exhausted']);
  });

  it('the default dunning (1, 3, 5 days): a cycle dated 31 January is retried on 1, 3 and 5 February, then suspended', () => {
    const s: RebillSchedule = {
      period: RebillPeriods.Monthly,
      frequency: 1,
      dateStart: '2027-01-31',
      dateEnd: '2027-12-31',
      retryDays: [1, 3, 5],
    };
    const declined = (attempt: number) =>
      nextStep(s, { cycle: 1, attempt, status: TransactionStatus.Unauthorized, errorCode: '', returnCode: '05' });
    expect([0, 1, 2].map((a) => declined(a).nextDueAt!.toISOString().slice(0, 10))).toEqual(['2027-02-01', '2027-02-03', '2027-02-05']);
    expect(declined(3)).toEqual({ state: 'suspended', nextCycle: 1, nextAttempt: 3, nextDueAt: null, reason: 'retries_exhausted' });
    // Approved on the last retry: cycle 2 is 28 February, from the start day, not from the retry.
    expect(nextStep(s, { cycle: 1, attempt: 3, status: TransactionStatus.Approved, errorCode: '' })).toEqual({
      state: 'active',
      nextCycle: 2,
      nextAttempt: 0,
      nextDueAt: new Date('2027-02-28T00:00:00Z'),
    });
  });

  /**
   * A whole life: charges decided one after another by nextStep alone. Whatever the outcomes, the
   * charges go in (cycle, attempt) order, a cycle is left only after its approval, no cycle is
   * skipped, each retry is due later than the try before, and the schedule completes exactly when
   * every one of its cycles was approved.
   */
  it('drives a rebill through its whole life in (cycle, attempt) order, completing only with every cycle approved', () => {
    fc.assert(
      fc.property(
        scheduleArb.filter((s) => cycleCount(s.dateStart, s.period, s.frequency, s.dateEnd) <= 50),
        fc.infiniteStream(
          fc.oneof({ weight: 4, arbitrary: fc.constant('approve' as const) }, fc.constant('soft' as const), fc.constant('hard' as const)),
        ),
        (s, outcomes) => {
          const cycles = cycleCount(s.dateStart, s.period, s.frequency, s.dateEnd);
          let at = { cycle: 1, attempt: 0, due: midnight(s.dateStart) };
          const approved: number[] = [];
          const it = outcomes[Symbol.iterator]();
          for (let guard = 0; guard < 2_000; guard++) {
            const kind = it.next().value as 'approve' | 'soft' | 'hard';
            const o: CycleOutcome =
              kind === 'approve'
                ? { cycle: at.cycle, attempt: at.attempt, status: TransactionStatus.Approved, errorCode: '' }
                : {
                    cycle: at.cycle,
                    attempt: at.attempt,
                    status: TransactionStatus.Unauthorized,
                    errorCode: '',
                    returnCode: kind === 'hard' ? '78' : '05',
                  };
            const next = nextStep(s, o);
            if (kind === 'approve') approved.push(at.cycle);
            if (next.state !== 'active') {
              expect(next.nextDueAt).toBeNull();
              if (next.state === 'completed') expect(approved).toEqual(Array.from({ length: cycles }, (_, i) => i + 1));
              else {
                expect(next.reason).toBe(kind === 'hard' ? 'hard_decline' : 'retries_exhausted');
                expect(approved).toEqual(Array.from({ length: at.cycle - 1 }, (_, i) => i + 1));
              }
              return;
            }
            if (kind === 'approve') {
              // The next cycle, from its own date: never one skipped, never one twice.
              expect([next.nextCycle, next.nextAttempt]).toEqual([at.cycle + 1, 0]);
              expect(next.nextDueAt).toEqual(midnight(naiveCycle(s.dateStart, s.period, s.frequency, at.cycle + 1)));
            } else {
              expect([next.nextCycle, next.nextAttempt]).toEqual([at.cycle, at.attempt + 1]);
              expect(next.nextDueAt!.getTime()).toBeGreaterThan(at.due.getTime());
              expect(
                (next.nextDueAt!.getTime() - midnight(naiveCycle(s.dateStart, s.period, s.frequency, at.cycle)).getTime()) / DAY_MS,
              ).toBe(s.retryDays[at.attempt]);
            }
            at = { cycle: next.nextCycle, attempt: next.nextAttempt, due: next.nextDueAt! };
          }
          throw new Error('the rebill never stopped');
        },
      ),
      { numRuns: 500 },
    );
  });
});
