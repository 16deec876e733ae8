import { payments as pb } from '@sluice/contracts';
import { environmentFromPb, pageInfo, pageRequest, type AsyncService } from '@sluice/rpc';
import type { TransactionsService } from '../app/transactions.service.js';
import type { TransfersService } from '../app/transfers.service.js';
import { parseTransactionQuery, parseTransactionRef } from '../domain/transaction-query.js';
import { parseTransferRequest, type TransferInput } from '../domain/transfer-request.js';
import { transactionToPb } from './payments.mapper.js';

function transferInput(req: pb.TransferOutRequest | pb.TransferInRequest): TransferInput {
  return {
    platformId: req.platformId,
    environment: environmentFromPb(req.environment),
    requestKey: req.requestKey,
    sourceAccountId: req.sourceAccountId,
    destinationAccountId: req.destinationAccountId,
    amount: req.amount,
    ...(req.description !== undefined ? { description: req.description } : {}),
    ...(req.agentId !== undefined ? { agentId: req.agentId } : {}),
  };
}

/** gRPC handlers of transfers and transactions. */
export function transactionsHandlers(o: {
  transfers: TransfersService;
  transactions: TransactionsService;
}): Pick<AsyncService<pb.PaymentsServiceServer>, 'transferOut' | 'transferIn' | 'getTransaction' | 'listTransactions'> {
  return {
    async transferOut(req) {
      const r = await o.transfers.transferOut(parseTransferRequest(transferInput(req), 'OUT'));
      return { transaction: transactionToPb(r.transaction), replayed: r.replayed };
    },
    async transferIn(req) {
      const r = await o.transfers.transferIn(parseTransferRequest(transferInput(req), 'IN'));
      return { transaction: transactionToPb(r.transaction), replayed: r.replayed };
    },
    async getTransaction(req) {
      const ref = parseTransactionRef(req.platformId, req.transactionId);
      return { transaction: transactionToPb(await o.transactions.get(ref.platformId, ref.transactionId)) };
    },
    async listTransactions(req) {
      const page = await o.transactions.list(
        parseTransactionQuery({
          platformId: req.platformId,
          ...(req.customerId !== undefined ? { customerId: req.customerId } : {}),
          ...(req.platformCustomerId !== undefined ? { platformCustomerId: req.platformCustomerId } : {}),
          ...(req.accountIdentifier !== undefined ? { accountIdentifier: req.accountIdentifier } : {}),
          ...(req.senderAccountIdentifier !== undefined ? { senderAccountIdentifier: req.senderAccountIdentifier } : {}),
          ...(req.receiverAccountIdentifier !== undefined ? { receiverAccountIdentifier: req.receiverAccountIdentifier } : {}),
          ...(req.status !== undefined ? { status: req.status } : {}),
          ...(req.type !== undefined ? { type: req.type } : {}),
          ...(req.reference !== undefined ? { reference: req.reference } : {}),
          ...(req.startDate ? { startDate: req.startDate } : {}),
          ...(req.endDate ? { endDate: req.endDate } : {}),
          sortOrder: req.sortOrder === pb.SortOrder.ASC ? 'asc' : 'desc',
          ...pageRequest(req.page),
        }),
      );
      return { transactions: page.data.map(transactionToPb), page: pageInfo(page) };
    },
  };
}
