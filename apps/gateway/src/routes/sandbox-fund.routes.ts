import { InternalAccount, internalAccountJson } from '@sluice/api';
import { DomainError } from '@sluice/core';
import { environmentOf, requestKeyOf } from '../http/request.helpers.js';
import { requireSandbox, type RouteModule } from '../http/types.js';
import { errorResponses } from '../schemas/common.js';
import { InternalAccountParams, SandboxFundRequest } from '../schemas/internal-account.schemas.js';

/**
 * `POST /sandbox/internal-accounts/{accountId}/fund` (sandbox platforms only): a simulated
 * deposit, recorded by payments as an INCOMING transaction (source REALTIME_FUNDING) and credited
 * at once from the settlement account, so every balance change is a transaction the platform can
 * list; answers the updated InternalAccount (the reference's answer). The gateway core replays a
 * repeated Idempotency-Key; the key is also the transaction's request key, so even a retry the
 * replay store missed never funds twice. Production platform: 403 SANDBOX_ONLY. Another
 * platform's account: 404.
 */
const sandboxFundRoutes: RouteModule = (app, deps) => {
  app.post(
    '/sandbox/internal-accounts/:accountId/fund',
    {
      config: { permission: ['TRANSACT', 'MANAGE'] },
      schema: {
        tags: ['Sandbox'],
        operationId: 'sandboxFundInternalAccount',
        summary: 'Simulate funding an internal account',
        description:
          'Adds funds to a customer or platform internal account in the sandbox, as if a deposit had arrived: an INCOMING transaction (source REALTIME_FUNDING), COMPLETED at once, listed by GET /transactions (webhooks INCOMING_PAYMENT.PENDING and .COMPLETED). `amount` is in the smallest unit of the account currency. Fails with 403 for production platforms.',
        params: InternalAccountParams,
        body: SandboxFundRequest,
        response: { 200: InternalAccount, ...errorResponses(409) },
      },
    },
    async (request) => {
      requireSandbox(request);
      const { transaction } = await deps.clients.payments.sandboxFundAccount({
        platformId: request.platform.id,
        environment: environmentOf(request),
        accountId: request.params.accountId,
        amount: BigInt(request.body.amount),
        requestKey: requestKeyOf(request),
      });
      if (transaction?.status === 'FAILED')
        // The ledger refused the credit (the balance would pass the maximum): nothing moved.
        throw new DomainError('FAILED_PRECONDITION', 'BALANCE_LIMIT_EXCEEDED', 'The account cannot be credited with this amount', {
          field: 'amount',
          transactionId: transaction.id,
        });
      const res = await deps.clients.accounts.getInternalAccount({
        platformId: request.platform.id,
        accountId: request.params.accountId,
      });
      return internalAccountJson(res.account!);
    },
  );
};

export default sandboxFundRoutes;
