import { payments } from '@sluice/contracts';
import { invalidInput } from '@sluice/core';
import type { RouteModule } from '../http/types.js';
import { ErrorBody, envelope, pageOf } from '../schemas/common.js';
import {
  Transaction,
  transactionJson,
  TransactionList,
  TransactionParams,
  TransactionsQuery,
} from '../schemas/transaction.schemas.js';

const errors = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  500: ErrorBody,
  503: ErrorBody,
};
const TAGS = ['Transactions'];

function date(field: string, v: string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw invalidInput([{ field, message: 'must be an ISO 8601 date-time' }]);
  return d;
}

/**
 * `GET /transactions` (every filter of the specification, newest first by
 * default, keyset paginated) and `GET /transactions/{transactionId}` (404 for
 * an unknown or another platform's transaction).
 */
const transactionsRoutes: RouteModule = (app, deps) => {
  const client = deps.clients.payments;

  app.get(
    '/transactions',
    {
      schema: {
        tags: TAGS,
        operationId: 'listTransactions',
        summary: 'List transactions',
        description:
          'Transactions of the platform, filtered by customerId (the platform id selects the platform’s own transactions), platformCustomerId, accountIdentifier (sender or receiver), senderAccountIdentifier, receiverAccountIdentifier, status, type, reference and createdAt between startDate and endDate (both inclusive); sortOrder asc or desc (default desc) by createdAt.',
        querystring: TransactionsQuery,
        response: { 200: TransactionList, ...errors },
      },
    },
    async (request) => {
      const q = request.query as TransactionsQuery;
      const startDate = date('startDate', q.startDate);
      const endDate = date('endDate', q.endDate);
      const page = await client.listTransactions({
        platformId: request.platform.id,
        ...(q.customerId !== undefined ? { customerId: q.customerId } : {}),
        ...(q.platformCustomerId !== undefined ? { platformCustomerId: q.platformCustomerId } : {}),
        ...(q.accountIdentifier !== undefined ? { accountIdentifier: q.accountIdentifier } : {}),
        ...(q.senderAccountIdentifier !== undefined
          ? { senderAccountIdentifier: q.senderAccountIdentifier }
          : {}),
        ...(q.receiverAccountIdentifier !== undefined
          ? { receiverAccountIdentifier: q.receiverAccountIdentifier }
          : {}),
        ...(q.status !== undefined ? { status: q.status } : {}),
        ...(q.type !== undefined ? { type: q.type } : {}),
        ...(q.reference !== undefined ? { reference: q.reference } : {}),
        ...(startDate ? { startDate } : {}),
        ...(endDate ? { endDate } : {}),
        sortOrder: q.sortOrder === 'asc' ? payments.SortOrder.ASC : payments.SortOrder.DESC,
        page: pageOf(q),
      });
      return envelope(page.transactions.map(transactionJson), page.page);
    },
  );

  app.get(
    '/transactions/:transactionId',
    {
      schema: {
        tags: TAGS,
        operationId: 'getTransactionById',
        summary: 'Get a transaction',
        description:
          'One transaction of the platform; 404 TRANSACTION_NOT_FOUND for an unknown or another platform’s id.',
        params: TransactionParams,
        response: { 200: Transaction, ...errors },
      },
    },
    async (request) => {
      const { transactionId } = request.params as { transactionId: string };
      const { transaction } = await client.getTransaction({ platformId: request.platform.id, transactionId });
      return transactionJson(transaction!);
    },
  );
};

export default transactionsRoutes;
