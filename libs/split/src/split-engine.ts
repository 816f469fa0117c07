import {
  EntryShare,
  FieldProblem,
  SaleSnapshot,
  SaleTerms,
  SplitEntryInput,
  SplitErrorCodes,
  SplitMode,
  SplitResult,
  toTransactionView,
  TransactionView,
} from '@app/contracts';
import { processingFee } from './fees';
import { mulDivFloor } from './money';
import { percentageToBp } from './percentage';

/**
 * The split engine (docs/merchants/split.md 1–4): pure, integer cents, deterministic. The API validates and
 * previews with it, settlement computes payables with it, so both always agree to the cent.
 */

/** docs/merchants/split.md 2: flags whose precondition is not met are ignored. */
export function entryMode(e: SplitEntryInput): SplitMode {
  if (!e.chargeProcessingFee) return e.chargeRecipientProcessingFee ? 'FULL' : 'FREE';
  if (e.percentage !== undefined || e.isGrossAmount) return 'PRORATA';
  return 'NET_AMOUNT';
}

function grossSlice(e: SplitEntryInput, gross: number): number {
  if (e.amount !== undefined) return e.amount;
  const parsed = percentageToBp(e.percentage ?? '');
  return 'bp' in parsed ? mulDivFloor(gross, parsed.bp, 10_000) : 0;
}

/** Largest slice, ties to the earliest declared (docs/merchants/split.md 2 and 4); -1 when none qualifies. */
export function principalIndex(entries: readonly { gross: number }[], qualifies: (i: number) => boolean): number {
  let best = -1;
  entries.forEach((e, i) => {
    if (qualifies(i) && (best < 0 || e.gross > entries[best].gross)) best = i;
  });
  return best;
}

/** docs/merchants/split.md 2: the shares of `gross` for a split that validates (see validateSplit). */
export function computeSplit(entries: readonly SplitEntryInput[], gross: number, fee: number): SplitResult {
  const shares: EntryShare[] = entries.map((e) => {
    const mode = entryMode(e);
    const g = grossSlice(e, gross);
    const f = mode === 'FULL' ? fee : mode === 'PRORATA' ? mulDivFloor(fee, g, gross) : 0;
    return { recipient: e.recipient ?? '', mode, liable: e.liable, gross: g, fee: f, net: g - f };
  });
  const merchantGross = gross - shares.reduce((s, e) => s + e.gross, 0);
  let merchantFee = 0;
  if (!shares.some((e) => e.mode === 'FULL')) {
    const prorata = (i: number) => shares[i].mode === 'PRORATA';
    const remainder = fee - shares.reduce((s, e, i) => s + (prorata(i) ? e.fee : 0), 0);
    const merchantWeight = gross - shares.reduce((s, e, i) => s + (prorata(i) ? e.gross : 0), 0);
    if (merchantWeight > 0) merchantFee = remainder;
    else {
      // Nothing of the sale is the merchant's: the fee remainder goes to the principal fee payer.
      const principal = principalIndex(shares, prorata);
      shares[principal].fee += remainder;
      shares[principal].net -= remainder;
    }
  }
  return { gross, fee, entries: shares, merchant: { gross: merchantGross, fee: merchantFee, net: merchantGross - merchantFee } };
}

/**
 * The split of `gross` cents under the terms frozen at the sale, with their processing fee: what
 * settlement writes as payables and what a transaction's answer shows, so both agree to the cent.
 */
export function splitUnderTerms(terms: SaleTerms, gross: number): SplitResult {
  return computeSplit(terms.split ?? [], gross, processingFee(gross, terms.fee));
}

/**
 * The split a transaction's answer shows: of the captured amount (before capture: of the sale
 * amount); none for a transaction without settlement terms.
 */
export function splitOfTransaction(sale: Pick<SaleSnapshot, 'details' | 'capturedAmount' | 'amount'>): SplitResult | undefined {
  const terms = sale.details.terms;
  if (!terms) return undefined;
  return splitUnderTerms(terms, sale.capturedAmount || sale.amount);
}

export interface SplitContext {
  gross: number;
  fee: number;
  merchantId: string;
  /**
   * The merchant's public id (what it authenticates with), when a recipient could be it: an entry
   * naming it is the merchant itself as much as one naming `merchantId`.
   */
  merchantPublicId?: string;
  /** The merchant's recipients named by the entries, with their status. */
  recipients: ReadonlyMap<string, 'pending' | 'approved'>;
  maxEntries: number;
  /** Field path of the list, for the parameter of each problem. */
  path?: string;
  /** Field path of the amount the fee is computed on. */
  amountPath?: string;
}

/**
 * docs/merchants/split.md 3: every problem of a split, each with its stable code and the field it is about.
 * Empty when the split is valid; computeSplit is then safe to call.
 */
export function validateSplit(entries: readonly SplitEntryInput[], ctx: SplitContext): FieldProblem[] {
  const path = ctx.path ?? 'payment.split';
  const problems: FieldProblem[] = [];
  const add: AddProblem = (code, parameter, message) => problems.push({ code, parameter, message });

  if (entries.length === 0) add(SplitErrorCodes.Empty, path, `${path} must have at least one entry when present.`);
  if (entries.length > ctx.maxEntries) add(SplitErrorCodes.TooManyEntries, path, `${path} may have at most ${ctx.maxEntries} entries.`);

  const seen = new Set<string>();
  let percentSum = 0;
  entries.forEach((e, i) => {
    const at = `${path}[${i}]`;
    checkRecipient(e, at, ctx, seen, add);
    percentSum += checkValue(e, at, ctx, add);
  });
  if (percentSum > 10_000) add(SplitErrorCodes.PercentageSumExceeded, path, `The percentages of ${path} add up to more than 100.`);
  checkFeeModes(entries, path, add);
  if (ctx.fee >= ctx.gross) {
    const amountPath = ctx.amountPath ?? 'payment.amount';
    add(
      SplitErrorCodes.FeeExceedsAmount,
      amountPath,
      `The processing fee (${ctx.fee} cents) is not less than ${amountPath} (${ctx.gross} cents).`,
    );
  }
  if (problems.length) return problems;
  return shareProblems(entries, path, ctx);
}

type AddProblem = (code: FieldProblem['code'], parameter: string, message: string) => void;

/** The problems of an entry's recipient at `at`: missing, the merchant, unknown, not approved, or named twice (`seen`). */
function checkRecipient(e: SplitEntryInput, at: string, ctx: SplitContext, seen: Set<string>, add: AddProblem): void {
  const recipient = e.recipient?.trim().toLowerCase() ?? '';
  if (!recipient) add(SplitErrorCodes.RecipientRequired, `${at}.recipient`, `${at}.recipient is required.`);
  else if (recipient === ctx.merchantId.toLowerCase() || recipient === ctx.merchantPublicId)
    add(
      SplitErrorCodes.RecipientIsMerchant,
      `${at}.recipient`,
      `${at}.recipient is the merchant itself; the merchant receives the residual without an entry.`,
    );
  else if (!ctx.recipients.has(recipient))
    add(SplitErrorCodes.RecipientNotFound, `${at}.recipient`, `${at}.recipient is not a recipient of this merchant.`);
  else if (ctx.recipients.get(recipient) !== 'approved')
    add(SplitErrorCodes.RecipientNotActive, `${at}.recipient`, `${at}.recipient is not approved yet.`);
  if (recipient && seen.has(recipient))
    add(SplitErrorCodes.RecipientDuplicated, `${at}.recipient`, `${at}.recipient appears in more than one entry.`);
  seen.add(recipient);
}

/** The problems of an entry's percentage or amount at `at`; returns its valid percentage in basis points, else 0. */
function checkValue(e: SplitEntryInput, at: string, ctx: SplitContext, add: AddProblem): number {
  if (e.percentage === undefined && e.amount === undefined)
    add(SplitErrorCodes.ValueRequired, at, `${at} must have a percentage or an amount.`);
  else if (e.percentage !== undefined && e.amount !== undefined)
    add(SplitErrorCodes.ValueAmbiguous, at, `${at} must have a percentage or an amount, not both.`);
  else if (e.percentage !== undefined) {
    const parsed = percentageToBp(e.percentage);
    if ('bp' in parsed) return parsed.bp;
    else if (parsed.error === 'precision')
      add(SplitErrorCodes.PercentagePrecision, `${at}.percentage`, `${at}.percentage may have at most 2 decimals.`);
    else add(SplitErrorCodes.PercentageOutOfRange, `${at}.percentage`, `${at}.percentage must be from 1 to 100.`);
  } else if (!Number.isSafeInteger(e.amount) || e.amount! < 1 || e.amount! > ctx.gross) {
    add(SplitErrorCodes.AmountOutOfRange, `${at}.amount`, `${at}.amount must be from 1 to the sale amount (${ctx.gross} cents).`);
  }
  return 0;
}

/** At most one entry pays the fee in full, and then none shares it pro rata. */
function checkFeeModes(entries: readonly SplitEntryInput[], path: string, add: AddProblem): void {
  const modes = entries.map(entryMode);
  if (modes.filter((m) => m === 'FULL').length > 1)
    add(SplitErrorCodes.MultipleFullFeePayers, path, `Only one entry of ${path} may pay the processing fee in full.`);
  else if (modes.includes('FULL') && modes.includes('PRORATA')) {
    add(SplitErrorCodes.FullAndProrataConflict, path, `An entry of ${path} paying the fee in full excludes entries sharing it pro rata.`);
  }
}

/** The problems of the shares after the fee (only then well defined): too much handed out, or a share that cannot pay its fee. */
function shareProblems(entries: readonly SplitEntryInput[], path: string, ctx: SplitContext): FieldProblem[] {
  const split = computeSplit(entries, ctx.gross, ctx.fee);
  const slices = split.entries.reduce((s, e) => s + e.gross, 0);
  if (slices > ctx.gross)
    return [
      {
        code: SplitErrorCodes.GrossExceeded,
        parameter: path,
        message: `The entries of ${path} add up to ${slices} cents, more than the sale's ${ctx.gross}.`,
      },
    ];
  const problems: FieldProblem[] = [];
  split.entries.forEach((e, i) => {
    if (e.net < 0)
      problems.push({
        code: SplitErrorCodes.FeeExceedsShare,
        parameter: `${path}[${i}]`,
        message: `${path}[${i}] gets ${e.gross} cents, less than the ${e.fee} cents of processing fee it would pay.`,
      });
  });
  if (split.merchant.net < 0)
    problems.push({
      code: SplitErrorCodes.MerchantNetNegative,
      parameter: path,
      message: `The merchant's residual (${split.merchant.gross} cents) does not cover its ${split.merchant.fee} cents of processing fee.`,
    });
  return problems;
}

/** A transaction's answer, with its split as settlement computes it from the terms frozen at the sale. */
export function transactionViewOf(sale: SaleSnapshot): TransactionView {
  return toTransactionView(sale, splitOfTransaction(sale));
}
