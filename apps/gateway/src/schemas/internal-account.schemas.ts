import { Type } from '@sinclair/typebox';
import { Id, PageQuery } from './common.js';
import { InternalAccountType } from '@sluice/api';

export {
  INTERNAL_ACCOUNT_TYPES,
  InternalAccount,
  InternalAccountType,
  PaymentAccountOrWalletInfo,
  PaymentInstructions,
  internalAccountJson,
  paymentInstructionJson,
  type InternalAccountJson,
  type InternalAccountTypeName,
} from '@sluice/api';

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

export const SandboxFundParams = Type.Object(
  { accountId: Id('InternalAccount') },
  { additionalProperties: false },
);

export const SandboxFundRequest = Type.Object(
  {
    amount: Type.Integer({
      minimum: 1,
      maximum: 9_000_000_000_000_000,
      description: 'amount to add, in the smallest unit of the account currency (1 to 9000000000000000)',
    }),
  },
  { $id: 'SandboxFundRequest', additionalProperties: false },
);

