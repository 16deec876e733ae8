import type { FastifyRequest } from 'fastify';
import { common } from '@sluice/contracts';
import { newId } from '@sluice/core';
import { requireSandbox, type RouteModule } from '../http/types.js';
import { ErrorBody } from '../schemas/common.js';
import {
  ApprovePaymentRequest,
  RejectPaymentRequest,
  SandboxUmaReceiveRequest,
} from '../schemas/incoming.schemas.js';
import { Transaction, TransactionParams, transactionJson } from '../schemas/transaction.schemas.js';

const ENV = { SANDBOX: common.Environment.SANDBOX, PRODUCTION: common.Environment.PRODUCTION } as const;
const errors = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  500: ErrorBody,
  503: ErrorBody,
};
const APPROVAL_NOTE =
  'Incoming payments of at least the approval threshold of their currency (payments service setting INCOMING_APPROVAL_THRESHOLDS; by default about 10,000 USD worth, e.g. USD 1000000 minor units) wait in PENDING for the platform; without a decision within INCOMING_APPROVAL_WINDOW_SECONDS (default 300, × SANDBOX_TIME_SCALE) they become FAILED with failureReason PAYMENT_APPROVAL_TIMED_OUT.';

/** The payments request key: the Idempotency-Key (the gateway also replays it), else a fresh one. */
function requestKey(request: FastifyRequest): string {
  const key = request.headers['idempotency-key'];
  return typeof key === 'string' && key.length > 0 ? key : newId('Request');
}

/** The body of approve/reject is optional (reference: `required: false`): absent reads as `{}`. */
async function optionalBody(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}

/**
 * Incoming payments: `POST /sandbox/uma/receive` simulates an incoming UMA
 * payment to a customer of the platform (found by UMA address), and
 * `POST /transactions/{transactionId}/approve|reject` decide an incoming
 * payment awaiting the platform.
 */
const incomingRoutes: RouteModule = (app, deps) => {
  const client = deps.clients.payments;

  app.post(
    '/sandbox/uma/receive',
    {
      config: { permission: ['TRANSACT', 'MANAGE'] },
      schema: {
        tags: ['Sandbox'],
        operationId: 'sandboxReceive',
        summary: 'Simulate an incoming UMA payment',
        description: `Sandbox only (403 SANDBOX_ONLY for production platforms). Creates an INCOMING transaction from senderUmaAddress to the platform customer whose umaAddress is receiverUmaAddress (404 UMA_RECEIVER_NOT_FOUND otherwise), credited to that customer's internal account in receivingCurrencyCode (400 INVALID_INPUT on receivingCurrencyCode when it has none). Webhooks INCOMING_PAYMENT.PENDING then INCOMING_PAYMENT.COMPLETED. ${APPROVAL_NOTE} Idempotency-Key replays the first payment.`,
        body: SandboxUmaReceiveRequest,
        response: { 200: Transaction, ...errors },
      },
    },
    async (request) => {
      requireSandbox(request);
      const body = request.body as SandboxUmaReceiveRequest;
      const { transaction } = await client.sandboxReceiveUma({
        platformId: request.platform.id,
        environment: ENV[request.platform.environment],
        requestKey: requestKey(request),
        senderUmaAddress: body.senderUmaAddress,
        receiverUmaAddress: body.receiverUmaAddress,
        receivingCurrencyCode: body.receivingCurrencyCode,
        receivingCurrencyAmount: BigInt(body.receivingCurrencyAmount),
      });
      return transactionJson(transaction!);
    },
  );

  app.post(
    '/transactions/:transactionId/approve',
    {
      config: { permission: ['TRANSACT', 'MANAGE'] },
      preValidation: optionalBody,
      schema: {
        tags: ['Transactions'],
        operationId: 'approvePendingPayment',
        summary: 'Approve a pending incoming payment',
        description: `Credits an incoming payment awaiting the platform (COMPLETED, INCOMING_PAYMENT.COMPLETED). Approving an approved payment returns it (idempotent). 409 TRANSACTION_NOT_AWAITING_APPROVAL when it is not awaiting approval (never needed it, rejected, timed out or past its window); 404 TRANSACTION_NOT_FOUND for an unknown or another platform's id. ${APPROVAL_NOTE}`,
        params: TransactionParams,
        body: ApprovePaymentRequest,
        response: { 200: Transaction, ...errors },
      },
    },
    async (request) => {
      const { transactionId } = request.params as { transactionId: string };
      const body = (request.body ?? {}) as ApprovePaymentRequest;
      const { transaction } = await client.approveIncomingPayment({
        platformId: request.platform.id,
        transactionId,
        ...(body.receiverCustomerInfo
          ? { receiverCustomerInfoJson: JSON.stringify(body.receiverCustomerInfo) }
          : {}),
      });
      return transactionJson(transaction!);
    },
  );

  app.post(
    '/transactions/:transactionId/reject',
    {
      config: { permission: ['TRANSACT', 'MANAGE'] },
      preValidation: optionalBody,
      schema: {
        tags: ['Transactions'],
        operationId: 'rejectPendingPayment',
        summary: 'Reject a pending incoming payment',
        description:
          "REJECTED (INCOMING_PAYMENT.FAILED); nothing is credited. Rejecting a rejected payment returns it (idempotent). 409 TRANSACTION_NOT_AWAITING_APPROVAL when it is not awaiting approval; 404 TRANSACTION_NOT_FOUND for an unknown or another platform's id.",
        params: TransactionParams,
        body: RejectPaymentRequest,
        response: { 200: Transaction, ...errors },
      },
    },
    async (request) => {
      const { transactionId } = request.params as { transactionId: string };
      const body = (request.body ?? {}) as RejectPaymentRequest;
      const { transaction } = await client.rejectIncomingPayment({
        platformId: request.platform.id,
        transactionId,
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
      });
      return transactionJson(transaction!);
    },
  );
};

export default incomingRoutes;
