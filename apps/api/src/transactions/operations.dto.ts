import { DomainError, ErrorCodes } from '@app/contracts';
import { validated } from '../envelope/validate';
import { Check, Int, intOf, invalid, present, Text, textOf } from '../envelope/wire-fields';

const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

const TransactionId = (required: boolean | ((o: Record<string, unknown>) => boolean)) =>
  Check(
    { type: 'string', pattern: GUID.source, description: 'The transactionId of the sale or authorize.' },
    (v) => {
      const text = textOf(v);
      return text !== undefined && GUID.test(text) ? null : invalid('must be a GUID such as 52580F07-80FD-3241-DAE2-BDC38138193A');
    },
    { required, example: '52580F07-80FD-3241-DAE2-BDC38138193A' },
  );

/** capture and cancel: the transaction, and an optional amount in cents (partial). */
export class TransactionOperationDto {
  @TransactionId(true)
  transactionId!: string;

  @Int({ min: 1, example: 100000, description: 'Integer cents; absent: the whole remaining amount.' })
  amount?: number;
}

export class ReportDto {
  @TransactionId((o) => !present(o.reference))
  transactionId?: string;

  @Text({
    max: 64,
    example: 'A-1001',
    description: "Instead of transactionId: the merchant's latest transaction with this reference.",
    also: (_v, o) => (present(o.transactionId) ? invalid('Send either transactionId or reference, not both.') : null),
  })
  reference?: string;
}

export interface OperationTarget {
  transactionId: string;
  amount?: number;
}

export function parseTransactionOperation(body: Record<string, unknown>): OperationTarget {
  const dto = validated(TransactionOperationDto, body);
  const amount = present(dto.amount) ? (intOf(dto.amount) as number) : undefined;
  return { transactionId: textOf(dto.transactionId)!.toUpperCase(), amount };
}

/** report: by transactionId, or by reference (the merchant's latest with it); exactly one. */
export function parseReport(body: Record<string, unknown>): { transactionId: string } | { reference: string } {
  const dto = validated(ReportDto, body);
  if (present(dto.reference)) return { reference: textOf(dto.reference)! };
  if (!present(dto.transactionId)) throw DomainError.validation(ErrorCodes.MissingField, 'transactionId', 'transactionId is required.');
  return { transactionId: textOf(dto.transactionId)!.toUpperCase() };
}
