import type { payments as pb } from '@sluice/contracts';
import { environmentFromPb, type AsyncService } from '@sluice/rpc';
import type { IncomingService } from '../app/incoming.service.js';
import { parseApprovalRequest, parseRejectionRequest, parseUmaReceiveRequest } from '../domain/incoming-request.js';
import { transactionToPb } from './payments.mapper.js';

/** gRPC handlers of incoming payments (sandbox UMA receive, approve, reject). */
export function incomingHandlers(
  incoming: IncomingService,
): Pick<AsyncService<pb.PaymentsServiceServer>, 'sandboxReceiveUma' | 'approveIncomingPayment' | 'rejectIncomingPayment'> {
  return {
    async sandboxReceiveUma(req) {
      const r = await incoming.receiveUma(
        parseUmaReceiveRequest({
          platformId: req.platformId,
          environment: environmentFromPb(req.environment),
          requestKey: req.requestKey,
          senderUmaAddress: req.senderUmaAddress,
          receiverUmaAddress: req.receiverUmaAddress,
          currency: req.receivingCurrencyCode,
          amount: req.receivingCurrencyAmount,
        }),
      );
      return { transaction: transactionToPb(r.transaction), replayed: r.replayed };
    },

    async approveIncomingPayment(req) {
      const approval = parseApprovalRequest({
        platformId: req.platformId,
        transactionId: req.transactionId,
        ...(req.receiverCustomerInfoJson ? { receiverCustomerInfoJson: req.receiverCustomerInfoJson } : {}),
      });
      return { transaction: transactionToPb(await incoming.approve(approval)) };
    },

    async rejectIncomingPayment(req) {
      const rejection = parseRejectionRequest({
        platformId: req.platformId,
        transactionId: req.transactionId,
        ...(req.reason !== undefined ? { reason: req.reason } : {}),
      });
      return { transaction: transactionToPb(await incoming.reject(rejection)) };
    },
  };
}
