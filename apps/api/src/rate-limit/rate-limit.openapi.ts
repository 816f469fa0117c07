import type { ApiResponseOptions } from '@nestjs/swagger';

/** /docs: the answer over a merchant's budget (docs/merchants/errors.md, "Too many requests"). */
export const TOO_MANY_REQUESTS: ApiResponseOptions = {
  status: 429,
  description:
    "Over the merchant's write or read budget, or too many failed authentications from this address: nothing was done; retry after Retry-After seconds (error body, code 429)",
  headers: {
    'Retry-After': { description: 'Whole seconds to wait before retrying (at least 1)', schema: { type: 'integer', minimum: 1 } },
  },
};
