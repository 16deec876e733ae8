import { payments as pb } from '@sluice/contracts';
import { isId } from '@sluice/core';
import { pageInfo, pageRequest, type AsyncService } from '@sluice/rpc';
import type { TransfersService, TransferRequest } from '../app/transfers.service.js';
import {
  TRANSACTION_STATUSES,
  type TransactionStatus,
  type TransactionType,
} from '../domain/state-machines.js';
import type { RateDetails } from '../domain/pricing.js';
import { toDecimalString } from '../domain/ratio.js';
import type { Transaction } from '../domain/transaction.js';
import { Checks } from './checks.js';
import { environmentFromPb } from './payments.mapper.js';

/** A fee and rate breakdown as the proto QuoteRateDetails (ratios as decimal strings). */
export function rateDetailsToPb(d: RateDetails): pb.QuoteRateDetails {
  return {
    counterpartyMultiplier: toDecimalString(d.counterpartyMultiplier),
    counterpartyFixedFee: d.counterpartyFixedFee,
    gridApiMultiplier: toDecimalString(d.gridApiMultiplier),
    gridApiFixedFee: d.gridApiFixedFee,
    gridApiVariableFeeRate: toDecimalString(d.gridApiVariableFeeRate),
    gridApiVariableFeeAmount: d.gridApiVariableFeeAmount,
  };
}

/** The proto Transaction of a domain transaction. */
export function transactionToPb(t: Transaction): pb.Transaction {
  const ep = (e: Transaction['source']): pb.TransactionEndpoint => ({
    kind: e.kind,
    ...(e.accountId ? { accountId: e.accountId } : {}),
    ...(e.umaAddress ? { umaAddress: e.umaAddress } : {}),
    currency: e.currency,
    ...(e.paymentRail ? { paymentRail: e.paymentRail } : {}),
  });
  return {
    id: t.id,
    platformId: t.platformId,
    type: t.type,
    status: t.status,
    source: ep(t.source),
    destination: ep(t.destination),
    customerId: t.customerId ?? t.platformId,
    platformCustomerId: t.platformCustomerId ?? t.platformId,
    sentAmount: t.sentAmount,
    receivedAmount: t.receivedAmount,
    fees: t.fees,
    exchangeRate: t.exchangeRate ? toDecimalString(t.exchangeRate) : '1',
    reference: t.reference,
    ...(t.description !== undefined ? { description: t.description } : {}),
    ...(t.failureReason ? { failureReason: t.failureReason } : {}),
    ...(t.failureDetail ? { failureDetail: t.failureDetail } : {}),
    counterpartyInformation: t.counterpartyInformation,
    ...(t.quoteId ? { quoteId: t.quoteId } : {}),
    ...(t.settledAt ? { settledAt: t.settledAt } : {}),
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    ...(t.rateDetails ? { rateDetails: rateDetailsToPb(t.rateDetails) } : {}),
    ...(t.refund
      ? {
          refund: {
            reference: t.refund.reference,
            initiatedAt: t.refund.initiatedAt,
            ...(t.refund.settledAt ? { settledAt: t.refund.settledAt } : {}),
            status: t.refund.status,
            reason: t.refund.reason,
          },
        }
      : {}),
  };
}

type TransferPb = pb.TransferOutRequest | pb.TransferInRequest;

function transferRequest(req: TransferPb, out: boolean): TransferRequest {
  const env = environmentFromPb(req.environment);
  const [srcType, dstType] = out
    ? (['InternalAccount', 'ExternalAccount'] as const)
    : (['ExternalAccount', 'InternalAccount'] as const);
  const c = new Checks()
    .id('platformId', req.platformId, 'Platform')
    .env(env)
    .requestKey(req.requestKey)
    .id('source.accountId', req.sourceAccountId, srcType)
    .id('destination.accountId', req.destinationAccountId, dstType)
    .amount('amount', req.amount);
  if (req.description !== undefined && req.description.length > 1000)
    c.add('description', 'must be at most 1000 characters');
  c.done();
  return {
    platformId: req.platformId,
    environment: env!,
    requestKey: req.requestKey,
    sourceAccountId: req.sourceAccountId,
    destinationAccountId: req.destinationAccountId,
    amount: req.amount,
    ...(req.description !== undefined ? { description: req.description } : {}),
  };
}

/** gRPC handlers of transfers and transactions. */
export function transactionsHandlers(
  transfers: TransfersService,
): Pick<
  AsyncService<pb.PaymentsServiceServer>,
  'transferOut' | 'transferIn' | 'getTransaction' | 'listTransactions'
> {
  return {
    async transferOut(req) {
      const r = await transfers.transferOut(transferRequest(req, true));
      return { transaction: transactionToPb(r.transaction), replayed: r.replayed };
    },
    async transferIn(req) {
      const r = await transfers.transferIn(transferRequest(req, false));
      return { transaction: transactionToPb(r.transaction), replayed: r.replayed };
    },
    async getTransaction(req) {
      new Checks()
        .id('platformId', req.platformId, 'Platform')
        .id('transactionId', req.transactionId, 'Transaction')
        .done();
      return { transaction: transactionToPb(await transfers.get(req.platformId, req.transactionId)) };
    },
    async listTransactions(req) {
      const c = new Checks().id('platformId', req.platformId, 'Platform');
      if (
        req.customerId !== undefined &&
        req.customerId !== req.platformId &&
        !isId(req.customerId, 'Customer')
      )
        c.add('customerId', 'must be a Customer id or the platform id');
      if (req.status !== undefined && !TRANSACTION_STATUSES.includes(req.status as TransactionStatus))
        c.add('status', `must be one of ${TRANSACTION_STATUSES.join(', ')}`);
      if (req.type !== undefined && req.type !== 'INCOMING' && req.type !== 'OUTGOING')
        c.add('type', 'must be INCOMING or OUTGOING');
      if (req.startDate && req.endDate && req.startDate > req.endDate)
        c.add('endDate', 'must not be before startDate');
      c.done();
      const page = await transfers.list({
        platformId: req.platformId,
        ...(req.customerId !== undefined
          ? { customerId: req.customerId === req.platformId ? null : req.customerId }
          : {}),
        ...(req.platformCustomerId !== undefined ? { platformCustomerId: req.platformCustomerId } : {}),
        ...(req.accountIdentifier !== undefined ? { accountIdentifier: req.accountIdentifier } : {}),
        ...(req.senderAccountIdentifier !== undefined
          ? { senderAccountIdentifier: req.senderAccountIdentifier }
          : {}),
        ...(req.receiverAccountIdentifier !== undefined
          ? { receiverAccountIdentifier: req.receiverAccountIdentifier }
          : {}),
        ...(req.status !== undefined ? { status: req.status as TransactionStatus } : {}),
        ...(req.type !== undefined ? { type: req.type as TransactionType } : {}),
        ...(req.reference !== undefined ? { reference: req.reference } : {}),
        ...(req.startDate ? { startDate: req.startDate } : {}),
        ...(req.endDate ? { endDate: req.endDate } : {}),
        sortOrder: req.sortOrder === pb.SortOrder.ASC ? 'asc' : 'desc',
        ...pageRequest(req.page),
      });
      return {
        transactions: page.data.map(transactionToPb),
        page: pageInfo(page),
      };
    },
  };
}
