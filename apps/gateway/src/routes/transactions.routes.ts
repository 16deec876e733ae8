import { Transaction, transactionJson } from '@sluice/api';
import type { RouteModule } from '../http/types.js';
import { envelope, errorResponses } from '../schemas/common.js';
import { TransactionList, TransactionParams, TransactionsQuery, transactionsQueryPb } from '../schemas/transaction.schemas.js';

const TAGS = ['Transactions'];

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
        response: { 200: TransactionList, ...errorResponses() },
      },
    },
    async (request) => {
      const page = await client.listTransactions({ platformId: request.platform.id, ...transactionsQueryPb(request.query) });
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
        response: { 200: Transaction, ...errorResponses() },
      },
    },
    async (request) => {
      const { transaction } = await client.getTransaction({
        platformId: request.platform.id,
        transactionId: request.params.transactionId,
      });
      return transactionJson(transaction!);
    },
  );
};

export default transactionsRoutes;
