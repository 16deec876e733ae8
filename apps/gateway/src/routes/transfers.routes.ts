import { Transaction, transactionJson } from '@sluice/api';
import { environmentOf, requestKeyOf } from '../http/request.helpers.js';
import type { RouteModule } from '../http/types.js';
import { errorResponses } from '../schemas/common.js';
import { TransferInRequest, TransferOutRequest } from '../schemas/transaction.schemas.js';

const TAGS = ['Same-Currency Transfers'];
const SANDBOX_NOTE =
  'Sandbox: the last 3 digits of the external account primary identifier select the rail outcome: 002 insufficient funds and 003 account closed/invalid fail immediately (FAILED in the response); 004 is rejected by the bank (FAILED shortly after); 005 stays PROCESSING about 30 s then FAILED; anything else COMPLETED (about 1 s).';

/**
 * Same-currency transfers: `POST /transfer-out` (internal → external account;
 * the amount is held, then posted when the rail settles or released when it
 * fails) and `POST /transfer-in` (external → internal account; credited when
 * the pull settles). Both return the Transaction (201).
 */
const transfersRoutes: RouteModule = (app, deps) => {
  const client = deps.clients.payments;
  const routes = [
    {
      path: '/transfer-out',
      operationId: 'createTransferOut',
      summary: 'Create a transfer-out request',
      description: `Pushes funds from an internal account to an external account of the same owner in the same currency. 400 INVALID_INPUT naming destination.accountId when the currencies differ; 400 INSUFFICIENT_FUNDS when the available balance is short (nothing is created); 404 for an unknown or another platform's account. ${SANDBOX_NOTE}`,
      body: TransferOutRequest,
      call: client.transferOut,
    },
    {
      path: '/transfer-in',
      operationId: 'createTransferIn',
      summary: 'Create a transfer-in request',
      description: `Pulls funds from an external account into an internal account of the same owner in the same currency; the internal account is credited when the pull settles (INCOMING_PAYMENT.COMPLETED). 400 INVALID_INPUT naming source.accountId when the currencies differ. ${SANDBOX_NOTE}`,
      body: TransferInRequest,
      call: client.transferIn,
    },
  ] as const;

  for (const r of routes) {
    app.post(
      r.path,
      {
        config: { permission: ['TRANSACT', 'MANAGE'] },
        schema: {
          tags: TAGS,
          operationId: r.operationId,
          summary: r.summary,
          description: r.description,
          body: r.body,
          response: { 201: Transaction, ...errorResponses(409) },
        },
      },
      async (request, reply) => {
        const body = request.body;
        const { transaction } = await r.call({
          platformId: request.platform.id,
          environment: environmentOf(request),
          requestKey: requestKeyOf(request),
          sourceAccountId: body.source.accountId,
          destinationAccountId: body.destination.accountId,
          amount: BigInt(body.amount),
          ...(body.description !== undefined ? { description: body.description } : {}),
        });
        return reply.code(201).send(transactionJson(transaction!));
      },
    );
  }
};

export default transfersRoutes;
