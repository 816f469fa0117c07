import { dateOfDay, dayNumber, isCalendarDate, RebillInput, RebillPeriod } from '@app/contracts';
import { BillingDto, billingOf } from '../envelope/billing.dto';
import { validated } from '../envelope/validate';
import { Bool, boolOf, Check, FieldCheck, Int, intOf, invalid, Nested, textOf } from '../envelope/wire-fields';
import {
  amountMatchesTotal,
  CardPaymentDto,
  cardOrTokenOf,
  num,
  optionalInt,
  optionalText,
  OrderDto,
  splitEntryOf,
  UrlReturn,
  urlReturnOf,
} from './sale.dto';

/**
 * The earliest calendar date anywhere on Earth right now (UTC−12): a dateStart the merchant calls
 * "today" in its own time zone is never refused as past.
 */
export function earliestToday(now = Date.now()): string {
  return dateOfDay(Math.floor((now - 12 * 3_600_000) / 86_400_000));
}

const isoDate = (rule: (text: string, owner: Record<string, unknown>) => string | null, description: string, example: string) =>
  Check(
    { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description },
    (v, owner) => {
      const text = textOf(v);
      if (text === undefined || !isCalendarDate(text)) return invalid('must be a date written YYYY-MM-DD');
      const problem = rule(text, owner);
      return problem ? invalid(problem) : null;
    },
    { required: true, example },
  );

export class RebillOrderDto extends OrderDto {
  @Int({ required: true, min: 1, max: 4, example: 3, description: '1 daily, 2 weekly, 3 monthly, 4 yearly.' })
  period!: number;

  @Int({ required: true, min: 1, max: 99, example: 1, description: 'Every this many periods.' })
  frequency!: number;

  @isoDate(
    (d) => (d < earliestToday() ? 'must be today or later' : null),
    'The first cycle; a rebill starting today charges it before answering.',
    '2026-12-01',
  )
  dateStart!: string;

  @isoDate(
    (d, owner) => {
      const start = textOf(owner.dateStart);
      if (start && isCalendarDate(start) && d <= start) return 'must be after order.dateStart';
      // About a century of daily cycles at most: a typo in the year is refused, not scheduled.
      if (start && isCalendarDate(start) && dayNumber(d) - dayNumber(start) > 36_600) return 'must be within 100 years of order.dateStart';
      return null;
    },
    'The last day a cycle may fall on.',
    '2027-11-30',
  )
  dateEnd!: string;
}

/** The family's SDK sends departureTax "true" here; integer cents are accepted as in a sale. */
const departureTaxCheck: FieldCheck = (v, owner) => {
  if (boolOf(v) !== undefined) return null;
  const n = intOf(v);
  if (typeof n !== 'number' || n < 0) return invalid('must be true, false or integer cents');
  const amount = num(owner.amount);
  return amount !== undefined && n > amount ? invalid('must not be more than paymentCreditCard.amount') : null;
};

export class RebillPaymentDto extends CardPaymentDto {
  @Check(
    { oneOf: [{ type: 'boolean' }, { type: 'integer' }, { type: 'string' }], description: 'true/false, or integer cents.' },
    departureTaxCheck,
  )
  departureTax?: number | boolean;
}

export class RebillDto {
  @Nested(() => RebillOrderDto, { required: true })
  order!: RebillOrderDto;

  @Nested(() => RebillPaymentDto, { required: true })
  paymentCreditCard!: RebillPaymentDto;

  @Nested(() => BillingDto)
  billing?: BillingDto;

  @UrlReturn()
  urlReturn?: string;

  @Bool()
  fraud?: boolean;
}

/** A rebill body as the gateway takes it (docs/merchants/rebills.md); every problem is listed in one 400. */
export function parseRebill(body: Record<string, unknown>): RebillInput {
  const dto = validated(RebillDto, body, '', (r) => amountMatchesTotal(r.order, r.paymentCreditCard, 'paymentCreditCard'));
  const p = dto.paymentCreditCard;
  const tax = typeof boolOf(p.departureTax) === 'boolean' ? undefined : optionalInt(p.departureTax);
  return {
    order: {
      reference: textOf(dto.order.reference)!,
      totalAmount: num(dto.order.totalAmount)!,
      period: num(dto.order.period)! as RebillPeriod,
      frequency: num(dto.order.frequency)!,
      dateStart: textOf(dto.order.dateStart)!,
      dateEnd: textOf(dto.order.dateEnd)!,
    },
    payment: {
      acquirer: num(p.acquirer)!,
      amount: num(p.amount)!,
      currency: textOf(p.currency)!,
      country: textOf(p.country)!.toUpperCase(),
      numberOfPayments: optionalInt(p.numberOfPayments) ?? 1,
      groupNumber: optionalText(p.groupNumber),
      flag: optionalText(p.flag),
      departureTax: tax,
      split: p.split?.map(splitEntryOf),
      ...cardOrTokenOf(p),
    },
    billing: billingOf(dto.billing),
    urlReturn: urlReturnOf(dto.urlReturn),
    fraud: boolOf(dto.fraud) ?? false,
  };
}
