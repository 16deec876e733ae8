import { payments as pb } from '@sluice/contracts';
import { invalidInput, isId, MAX_AMOUNT, type FieldError } from '@sluice/core';
import type { AsyncService } from '@sluice/rpc';
import type { TransfersService, TransferRequest } from '../app/transfers.service.js';
import {
  TRANSACTION_STATUSES,
  type TransactionStatus,
  type TransactionType,
} from '../domain/state-machines.js';
import type { RateDetails } from '../domain/pricing.js';
import { toDecimalString } from '../domain/ratio.js';
import type { Transaction } from '../domain/transaction.js';
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
  const errors: FieldError[] = [];
  const env = environmentFromPb(req.environment);
  if (!isId(req.platformId, 'Platform'))
    errors.push({ field: 'platformId', message: 'must be a Platform id' });
  if (!env)
    errors.push({ field: 'environment', message: 'must be ENVIRONMENT_SANDBOX or ENVIRONMENT_PRODUCTION' });
  if (!req.requestKey || req.requestKey.length > 255) {
    errors.push({ field: 'requestKey', message: 'must be 1 to 255 characters' });
  }
  const [srcType, dstType] = out
    ? ['InternalAccount', 'ExternalAccount']
    : ['ExternalAccount', 'InternalAccount'];
  if (!isId(req.sourceAccountId, srcType as 'InternalAccount')) {
    errors.push({ field: 'source.accountId', message: `must be an ${srcType} id (${srcType}:<uuid>)` });
  }
  if (!isId(req.destinationAccountId, dstType as 'InternalAccount')) {
    errors.push({ field: 'destination.accountId', message: `must be an ${dstType} id (${dstType}:<uuid>)` });
  }
  if (req.amount < 1n || req.amount > MAX_AMOUNT) {
    errors.push({ field: 'amount', message: `must be an integer from 1 to ${MAX_AMOUNT}` });
  }
  if (req.description !== undefined && req.description.length > 1000) {
    errors.push({ field: 'description', message: 'must be at most 1000 characters' });
  }
  if (errors.length) throw invalidInput(errors);
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
      const errors: FieldError[] = [];
      if (!isId(req.platformId, 'Platform'))
        errors.push({ field: 'platformId', message: 'must be a Platform id' });
      if (!isId(req.transactionId, 'Transaction')) {
        errors.push({ field: 'transactionId', message: 'must be a Transaction id (Transaction:<uuid>)' });
      }
      if (errors.length) throw invalidInput(errors);
      return { transaction: transactionToPb(await transfers.get(req.platformId, req.transactionId)) };
    },
    async listTransactions(req) {
      const errors: FieldError[] = [];
      if (!isId(req.platformId, 'Platform'))
        errors.push({ field: 'platformId', message: 'must be a Platform id' });
      if (
        req.customerId !== undefined &&
        req.customerId !== req.platformId &&
        !isId(req.customerId, 'Customer')
      ) {
        errors.push({ field: 'customerId', message: 'must be a Customer id or the platform id' });
      }
      if (req.status !== undefined && !TRANSACTION_STATUSES.includes(req.status as TransactionStatus)) {
        errors.push({ field: 'status', message: `must be one of ${TRANSACTION_STATUSES.join(', ')}` });
      }
      if (req.type !== undefined && req.type !== 'INCOMING' && req.type !== 'OUTGOING') {
        errors.push({ field: 'type', message: 'must be INCOMING or OUTGOING' });
      }
      if (req.startDate && req.endDate && req.startDate > req.endDate) {
        errors.push({ field: 'endDate', message: 'must not be before startDate' });
      }
      if (errors.length) throw invalidInput(errors);
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
        limit: req.limit,
        ...(req.cursor ? { cursor: req.cursor } : {}),
      });
      return {
        transactions: page.data.map(transactionToPb),
        hasMore: page.hasMore,
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
        totalCount: page.totalCount,
      };
    },
  };
}
