import { Transaction, transactionJson } from '@sluice/api';
import { invalidInput } from '@sluice/core';
import { environmentOf, optionalBody, requestKeyOf } from '../http/request.helpers.js';
import { requireSandbox, type RouteModule } from '../http/types.js';
import { errorResponses } from '../schemas/common.js';
import {
  ApprovePaymentRequest,
  RejectPaymentRequest,
  SandboxUmaReceiveRequest,
} from '../schemas/incoming.schemas.js';
import { TransactionParams } from '../schemas/transaction.schemas.js';

const APPROVAL_NOTE =
  'An incoming payment to a platform with a webhook endpoint, at or above the incomingPaymentApprovalThreshold of its currency in PATCH /config (every amount when none is set), is PENDING until the platform answers its INCOMING_PAYMENT.PENDING webhook: any 2xx but 202 approves, 403 or 422 rejects, 202 means the platform calls approve or reject within the approval window (payments setting INCOMING_APPROVAL_WINDOW_SECONDS, 5 s by default, not scaled); any other answer fails it with PAYMENT_APPROVAL_WEBHOOK_ERROR, no answer or decision in time with PAYMENT_APPROVAL_TIMED_OUT (docs/webhooks.md). A decision after the outcome is fixed is 409.';

/**
 * Incoming payments: `POST /sandbox/uma/receive` simulates an incoming UMA
 * payment to a customer of the platform (found by UMA address), and
 * `POST /transactions/{transactionId}/approve|reject` decide an incoming
 * payment awaiting the platform.
 */
const incomingRoutes: RouteModule = (app, deps) => {
  const client = deps.clients.payments;

  /** The receiver's UMA address: as given, or that of the customer `customerId` names (exactly one of the two). */
  const receiverOf = async (platformId: string, body: { receiverUmaAddress?: string; customerId?: string }) => {
    if (body.receiverUmaAddress !== undefined && body.customerId !== undefined)
      throw invalidInput([{ field: 'customerId', message: 'give receiverUmaAddress or customerId, not both' }]);
    if (body.customerId === undefined) {
      if (body.receiverUmaAddress === undefined)
        throw invalidInput([{ field: 'receiverUmaAddress', message: 'is required when customerId is absent' }]);
      return body.receiverUmaAddress;
    }
    const { customer } = await deps.clients.identity.getCustomer({ platformId, customerId: body.customerId });
    if (!customer?.umaAddress)
      throw invalidInput([{ field: 'customerId', message: 'the customer has no UMA address' }]);
    return customer.umaAddress;
  };

  app.post(
    '/sandbox/uma/receive',
    {
      config: { permission: ['TRANSACT', 'MANAGE'] },
      schema: {
        tags: ['Sandbox'],
        operationId: 'sandboxReceive',
        summary: 'Simulate an incoming UMA payment',
        description: `Sandbox only (403 SANDBOX_ONLY for production platforms). Creates an INCOMING transaction from senderUmaAddress to the platform customer whose umaAddress is receiverUmaAddress (404 UMA_RECEIVER_NOT_FOUND otherwise), or to the customer customerId names (404 CUSTOMER_NOT_FOUND; give one of the two), credited to that customer's internal account in receivingCurrencyCode (400 INVALID_INPUT on receivingCurrencyCode when it has none). Webhooks INCOMING_PAYMENT.PENDING then INCOMING_PAYMENT.COMPLETED. ${APPROVAL_NOTE} Idempotency-Key replays the first payment.`,
        body: SandboxUmaReceiveRequest,
        response: { 200: Transaction, ...errorResponses(409) },
      },
    },
    async (request) => {
      requireSandbox(request);
      const body = request.body;
      const receiverUmaAddress = await receiverOf(request.platform.id, body);
      const { transaction } = await client.sandboxReceiveUma({
        platformId: request.platform.id,
        environment: environmentOf(request),
        requestKey: requestKeyOf(request),
        senderUmaAddress: body.senderUmaAddress,
        receiverUmaAddress,
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
      preValidation: optionalBody, // reference: the body is `required: false`
      schema: {
        tags: ['Transactions'],
        operationId: 'approvePendingPayment',
        summary: 'Approve a pending incoming payment',
        description: `Credits an incoming payment awaiting the platform (COMPLETED, INCOMING_PAYMENT.COMPLETED). Approving an approved payment returns it (idempotent). 409 TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL when it is not awaiting approval (never needed it, rejected, timed out or past its window); 404 TRANSACTION_NOT_FOUND for an unknown or another platform's id. ${APPROVAL_NOTE}`,
        params: TransactionParams,
        body: ApprovePaymentRequest,
        response: { 200: Transaction, ...errorResponses(409) },
      },
    },
    async (request) => {
      const { receiverCustomerInfo } = request.body;
      const { transaction } = await client.approveIncomingPayment({
        platformId: request.platform.id,
        transactionId: request.params.transactionId,
        ...(receiverCustomerInfo ? { receiverCustomerInfoJson: JSON.stringify(receiverCustomerInfo) } : {}),
      });
      return transactionJson(transaction!);
    },
  );

  app.post(
    '/transactions/:transactionId/reject',
    {
      config: { permission: ['TRANSACT', 'MANAGE'] },
      preValidation: optionalBody, // reference: the body is `required: false`
      schema: {
        tags: ['Transactions'],
        operationId: 'rejectPendingPayment',
        summary: 'Reject a pending incoming payment',
        description:
          "REJECTED (INCOMING_PAYMENT.FAILED); nothing is credited. Rejecting a rejected payment returns it (idempotent). 409 TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL when it is not awaiting approval; 404 TRANSACTION_NOT_FOUND for an unknown or another platform's id.",
        params: TransactionParams,
        body: RejectPaymentRequest,
        response: { 200: Transaction, ...errorResponses(409) },
      },
    },
    async (request) => {
      const { reason } = request.body;
      const { transaction } = await client.rejectIncomingPayment({
        platformId: request.platform.id,
        transactionId: request.params.transactionId,
        ...(reason !== undefined ? { reason } : {}),
      });
      return transactionJson(transaction!);
    },
  );
};

export default incomingRoutes;
