import { Type, type Static } from '@sinclair/typebox';
import { Id, Page, PageQuery } from './common.js';
import { Transaction, TransactionStatus } from '@sluice/api';

export { RateDetails, Transaction, TransactionStatus, rateDetailsJson, transactionJson } from '@sluice/api';

export const TransactionList = Page(Transaction, 'TransactionList');

export const TransactionParams = Type.Object(
  { transactionId: Id('Transaction') },
  { additionalProperties: false },
);

export const TransactionsQuery = Type.Object(
  {
    customerId: Type.Optional(
      Type.String({ minLength: 1, description: 'Customer id, or the platform id for platform transactions' }),
    ),
    platformCustomerId: Type.Optional(Type.String({ minLength: 1 })),
    accountIdentifier: Type.Optional(
      Type.String({ minLength: 1, description: 'Sender or receiver account id' }),
    ),
    senderAccountIdentifier: Type.Optional(Type.String({ minLength: 1 })),
    receiverAccountIdentifier: Type.Optional(Type.String({ minLength: 1 })),
    status: Type.Optional(TransactionStatus),
    type: Type.Optional(Type.Union([Type.Literal('INCOMING'), Type.Literal('OUTGOING')])),
    reference: Type.Optional(Type.String({ minLength: 1 })),
    startDate: Type.Optional(
      Type.String({ format: 'date-time', description: 'Inclusive lower bound on createdAt' }),
    ),
    endDate: Type.Optional(
      Type.String({ format: 'date-time', description: 'Inclusive upper bound on createdAt' }),
    ),
    sortOrder: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type TransactionsQuery = Static<typeof TransactionsQuery>;

const AccountRef = (type: string) => Type.Object({ accountId: Id(type) }, { additionalProperties: false });

const transferBody = (from: string, to: string) =>
  Type.Object(
    {
      source: AccountRef(from),
      destination: AccountRef(to),
      amount: Type.Integer({
        minimum: 1,
        maximum: 9_000_000_000_000_000,
        description: 'Amount in the smallest unit of the currency (both accounts share it)',
      }),
      description: Type.Optional(
        Type.String({ maxLength: 1000, description: 'Sluice extension: a memo kept on the transaction' }),
      ),
    },
    { additionalProperties: false },
  );

export const TransferInRequest = transferBody('ExternalAccount', 'InternalAccount');
export type TransferInRequest = Static<typeof TransferInRequest>;
export const TransferOutRequest = transferBody('InternalAccount', 'ExternalAccount');
export type TransferOutRequest = Static<typeof TransferOutRequest>;

