import { Type } from '@sinclair/typebox';
import { Id, InternalAccount, InternalAccountType, Page, PositiveAmount } from '@sluice/api';
import { PageQuery } from './common.js';

/** Request schemas of the internal-account lists and sandbox funding. */

const CurrencyFilter = Type.String({
  minLength: 1,
  maxLength: 10,
  description: 'Filter by currency code (e.g. USD, USDC)',
});

export const CustomerInternalAccountsQuery = Type.Object(
  {
    currency: Type.Optional(CurrencyFilter),
    customerId: Type.Optional(Id('Customer')),
    type: Type.Optional(InternalAccountType),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const PlatformInternalAccountsQuery = Type.Object(
  {
    currency: Type.Optional(CurrencyFilter),
    type: Type.Optional(InternalAccountType),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        default: 100,
        description: 'page size, 1 to 100 (default 100)',
      }),
    ),
    cursor: PageQuery.cursor,
  },
  { additionalProperties: false },
);

export const CustomerInternalAccountList = Page(InternalAccount, 'InternalAccountListResponse');
export const PlatformInternalAccountList = Page(InternalAccount, 'PlatformInternalAccountListResponse');

export const InternalAccountParams = Type.Object(
  { accountId: Id('InternalAccount') },
  { additionalProperties: false },
);

export const SandboxFundRequest = Type.Object(
  {
    amount: PositiveAmount(
      'amount to add, in the smallest unit of the account currency (1 to 9000000000000000)',
    ),
  },
  { $id: 'SandboxFundRequest', additionalProperties: false },
);
