import type { FastifyRequest } from 'fastify';
import { common } from '@sluice/contracts';
import { newId } from '@sluice/core';
import type { RouteModule } from '../http/types.js';
import { ErrorBody } from '../schemas/common.js';
import {
  Transaction,
  transactionJson,
  TransferInRequest,
  TransferOutRequest,
} from '../schemas/transaction.schemas.js';

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
const TAGS = ['Same-Currency Transfers'];
const SANDBOX_NOTE =
  'Sandbox: the last 3 digits of the external account primary identifier select the rail outcome: 002 insufficient funds and 003 account closed/invalid fail immediately (FAILED in the response); 004 is rejected by the bank (FAILED shortly after); 005 stays PROCESSING about 30 s then FAILED; anything else COMPLETED (about 1 s).';

/** The payments request key: the Idempotency-Key (the gateway also replays it), else a fresh one. */
function requestKey(request: FastifyRequest): string {
  const key = request.headers['idempotency-key'];
  return typeof key === 'string' && key.length > 0 ? key : newId('Request');
}

/**
 * Same-currency transfers: `POST /transfer-out` (internal → external account;
 * the amount is held, then posted when the rail settles or released when it
 * fails) and `POST /transfer-in` (external → internal account; credited when
 * the pull settles). Both return the Transaction (201).
 */
const transfersRoutes: RouteModule = (app, deps) => {
  const client = deps.clients.payments;

  app.post(
    '/transfer-out',
    {
      config: { permission: ['TRANSACT', 'MANAGE'] },
      schema: {
        tags: TAGS,
        operationId: 'createTransferOut',
        summary: 'Create a transfer-out request',
        description: `Pushes funds from an internal account to an external account of the same owner in the same currency. 400 INVALID_INPUT naming destination.accountId when the currencies differ; 400 INSUFFICIENT_FUNDS when the available balance is short (nothing is created); 404 for an unknown or another platform's account. ${SANDBOX_NOTE}`,
        body: TransferOutRequest,
        response: { 201: Transaction, ...errors },
      },
    },
    async (request, reply) => {
      const body = request.body as TransferOutRequest;
      const { transaction } = await client.transferOut({
        platformId: request.platform.id,
        environment: ENV[request.platform.environment],
        requestKey: requestKey(request),
        sourceAccountId: body.source.accountId,
        destinationAccountId: body.destination.accountId,
        amount: BigInt(body.amount),
        ...(body.description !== undefined ? { description: body.description } : {}),
      });
      reply.code(201);
      return transactionJson(transaction!);
    },
  );

  app.post(
    '/transfer-in',
    {
      config: { permission: ['TRANSACT', 'MANAGE'] },
      schema: {
        tags: TAGS,
        operationId: 'createTransferIn',
        summary: 'Create a transfer-in request',
        description: `Pulls funds from an external account into an internal account of the same owner in the same currency; the internal account is credited when the pull settles (INCOMING_PAYMENT.COMPLETED). 400 INVALID_INPUT naming source.accountId when the currencies differ. ${SANDBOX_NOTE}`,
        body: TransferInRequest,
        response: { 201: Transaction, ...errors },
      },
    },
    async (request, reply) => {
      const body = request.body as TransferInRequest;
      const { transaction } = await client.transferIn({
        platformId: request.platform.id,
        environment: ENV[request.platform.environment],
        requestKey: requestKey(request),
        sourceAccountId: body.source.accountId,
        destinationAccountId: body.destination.accountId,
        amount: BigInt(body.amount),
        ...(body.description !== undefined ? { description: body.description } : {}),
      });
      reply.code(201);
      return transactionJson(transaction!);
    },
  );
};

export default transfersRoutes;
