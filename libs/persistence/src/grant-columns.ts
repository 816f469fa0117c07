/** The privileges a role is granted on the gateway's tables, and the column lists several roles share. */

/** Every column of the table (table-level privilege), or only these columns. */
export type Columns = 'all' | readonly string[];
export interface TablePrivileges {
  select?: Columns;
  insert?: Columns;
  update?: Columns;
  /** Only where the role's code deletes rows. */
  delete?: true;
}
export type RoleGrants = Readonly<Record<string, TablePrivileges>>;

/** The columns a new transaction (a sale, or a rebill's charge) is recorded with. */
export const TRANSACTION_INSERT = [
  'id',
  'merchant_id',
  'reference',
  'operation',
  'status',
  'acquirer',
  'method',
  'instalments',
  'currency',
  'amount',
  'masked_card',
  'brand',
  'token_card',
  'details',
  'url_return',
] as const;
export const REBILL_INSERT = [
  'id',
  'merchant_id',
  'reference',
  'period',
  'frequency',
  'date_start',
  'date_end',
  'retry_days',
  'due_shift_days',
  'acquirer',
  'instalments',
  'currency',
  'amount',
  'token_card',
  'masked_card',
  'brand',
  'card_expires',
  'details',
  'url_return',
  'next_cycle',
  'next_attempt',
  'next_due_at',
  'open_transaction_id',
] as const;
export const REBILL_CYCLE_INSERT = ['rebill_id', 'cycle', 'attempt', 'transaction_id', 'cycle_date', 'merchant_initiated'] as const;
export const REBILL_SCHEDULER_UPDATE = [
  'state',
  'next_cycle',
  'next_attempt',
  'next_due_at',
  'open_transaction_id',
  'suspended_reason',
  'version',
  'updated_at',
] as const;
