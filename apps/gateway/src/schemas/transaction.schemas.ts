import { payments } from '@sluice/contracts';
import { Type, type Static } from '@sinclair/typebox';
import { Id, Memo, Page, PositiveAmount, Transaction, TransactionStatus, stringEnum } from '@sluice/api';
import { DateTimeFilter, PageQuery, TextFilter, named, pageOf } from './common.js';

/** Request schemas of `/transactions`, `/transfer-in` and `/transfer-out`. */

export const TransactionList = Page(Transaction, 'TransactionListResponse');

export const TransactionParams = Type.Object(
  { transactionId: Id('Transaction') },
  { additionalProperties: false },
);

export const TransactionsQuery = Type.Object(
  {
    customerId: Type.Optional(TextFilter('Customer id, or the platform id for platform transactions')),
    platformCustomerId: Type.Optional(TextFilter()),
    accountIdentifier: Type.Optional(TextFilter('Sender or receiver account id')),
    senderAccountIdentifier: Type.Optional(TextFilter()),
    receiverAccountIdentifier: Type.Optional(TextFilter()),
    status: Type.Optional(TransactionStatus),
    type: Type.Optional(stringEnum(['INCOMING', 'OUTGOING'] as const)),
    reference: Type.Optional(TextFilter()),
    startDate: Type.Optional(DateTimeFilter('Inclusive lower bound on createdAt')),
    endDate: Type.Optional(DateTimeFilter('Inclusive upper bound on createdAt')),
    sortOrder: Type.Optional(stringEnum(['asc', 'desc'] as const, { default: 'desc' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type TransactionsQuery = Static<typeof TransactionsQuery>;

/** The ListTransactions fields of a transactions query (the platform is the caller's). */
export function transactionsQueryPb(
  q: Partial<TransactionsQuery>,
): Omit<payments.ListTransactionsRequest, 'platformId'> {
  const { startDate, endDate, sortOrder, limit: _limit, cursor: _cursor, ...filters } = q;
  return {
    ...filters,
    ...(startDate !== undefined ? { startDate: new Date(startDate) } : {}),
    ...(endDate !== undefined ? { endDate: new Date(endDate) } : {}),
    sortOrder: sortOrder === 'asc' ? payments.SortOrder.ASC : payments.SortOrder.DESC,
    page: pageOf(q),
  };
}

const AccountRef = (type: string) => Type.Object({ accountId: Id(type) }, { additionalProperties: false });

const transferBody = (from: string, to: string) =>
  Type.Object(
    {
      source: AccountRef(from),
      destination: AccountRef(to),
      amount: PositiveAmount('Amount in the smallest unit of the currency (both accounts share it)'),
      description: Type.Optional(Memo('Sluice extension: a memo kept on the transaction')),
    },
    { additionalProperties: false },
  );

export const TransferInRequest = named(
  'TransferInRequest',
  transferBody('ExternalAccount', 'InternalAccount'),
);
export const TransferOutRequest = named(
  'TransferOutRequest',
  transferBody('InternalAccount', 'ExternalAccount'),
);
