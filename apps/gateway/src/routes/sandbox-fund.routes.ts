import { createHash } from 'node:crypto';
import { InternalAccount, internalAccountJson } from '@sluice/api';
import { headerOf } from '../http/request.helpers.js';
import { requireSandbox, type RouteModule } from '../http/types.js';
import { errorResponses } from '../schemas/common.js';
import { InternalAccountParams, SandboxFundRequest } from '../schemas/internal-account.schemas.js';

/**
 * `POST /sandbox/internal-accounts/{accountId}/fund` (sandbox platforms only):
 * credits the account at once with a balanced ledger entry from the sandbox
 * funding account and returns the updated InternalAccount. The gateway core
 * replays a repeated Idempotency-Key; the key also names the journal entry, so
 * even a retry the replay store missed never funds twice. Production platform:
 * 403 SANDBOX_ONLY. Another platform's account: 404.
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
          'Adds funds to a customer or platform internal account in the sandbox, as if a deposit had arrived. `amount` is in the smallest unit of the account currency. Fails with 403 for production platforms.',
        params: InternalAccountParams,
        body: SandboxFundRequest,
        response: { 200: InternalAccount, ...errorResponses(409) },
      },
    },
    async (request) => {
      requireSandbox(request);
      const key = headerOf(request, 'Idempotency-Key');
      const res = await deps.clients.accounts.sandboxFund({
        platformId: request.platform.id,
        accountId: request.params.accountId,
        amount: BigInt(request.body.amount),
        ...(key ? { entryId: `sandbox-fund:${createHash('sha256').update(key).digest('hex')}` } : {}),
      });
      return internalAccountJson(res.account!);
    },
  );
};

export default sandboxFundRoutes;
