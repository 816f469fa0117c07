import { Billing } from '@app/contracts';
import { Text } from './wire-fields';

const DIGITS = /^\d+$/;

/** The buyer's billing data (sale, authorize and tokencard share it); every field optional. */
export class BillingDto implements Billing {
  @Text({ max: 32, example: '12345678909', description: 'CPF/CNPJ or other customer document' })
  customerIdentity?: string;

  @Text({ max: 128, example: 'Maria Silva' })
  name?: string;

  @Text({ max: 256, example: 'Av. Paulista, 1000' })
  address?: string;

  @Text({ max: 256, example: 'Apto 12' })
  address2?: string;

  @Text({ max: 128, example: 'São Paulo' })
  city?: string;

  @Text({ max: 2, pattern: /^[A-Za-z]{2}$/, hint: 'must be a two-letter state code', example: 'SP' })
  state?: string;

  @Text({ max: 16, pattern: DIGITS, hint: 'must contain digits only', example: '01310100' })
  postalCode?: string;

  @Text({ max: 3, pattern: /^[A-Za-z]{2,3}$/, hint: 'must be a two- or three-letter country code', example: 'BRA' })
  country?: string;

  @Text({ max: 20, pattern: DIGITS, hint: 'must contain digits only', example: '11999990000' })
  phone?: string;

  @Text({ max: 254, pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/, hint: 'must be an e-mail address', example: 'maria@example.com' })
  email?: string;
}

export const BILLING_KEYS = [
  'customerIdentity',
  'name',
  'address',
  'address2',
  'city',
  'state',
  'postalCode',
  'country',
  'phone',
  'email',
] as const;

/** The billing fields that were sent, as text (numbers read as their digits). */
export function billingOf(dto: BillingDto | undefined): Billing | undefined {
  if (!dto) return undefined;
  const out: Billing = {};
  for (const k of BILLING_KEYS) {
    const v = dto[k] as string | number | null | undefined;
    if (v !== undefined && v !== null && v !== '') out[k] = String(v);
  }
  return out;
}
