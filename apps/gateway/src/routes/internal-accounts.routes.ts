import { accounts } from '@sluice/contracts';
import { InternalAccount, internalAccountJson, type InternalAccountTypeName } from '@sluice/api';
import type { RouteModule } from '../http/types.js';
import { envelope, errorResponses, pageOf } from '../schemas/common.js';
import {
  CustomerInternalAccountList,
  CustomerInternalAccountsQuery,
  PlatformInternalAccountList,
  PlatformInternalAccountsQuery,
} from '../schemas/internal-account.schemas.js';
import { IdParams } from '../schemas/wallet-auth.schemas.js';

type ListQuery = {
  currency?: string;
  customerId?: string;
  type?: InternalAccountTypeName;
  limit?: number;
  cursor?: string;
};

const TYPE_TO_PB: Record<InternalAccountTypeName, accounts.InternalAccountType> = {
  INTERNAL_FIAT: accounts.InternalAccountType.INTERNAL_FIAT,
  INTERNAL_CRYPTO: accounts.InternalAccountType.INTERNAL_CRYPTO,
  EMBEDDED_WALLET: accounts.InternalAccountType.EMBEDDED_WALLET,
};

/**
 * `GET /customers/internal-accounts` and `GET /platform/internal-accounts`:
 * the platform's internal accounts (customer-owned or platform-owned), oldest
 * first, in the list envelope. Filters: currency, type, and (customers)
 * customerId; another platform's customer simply matches nothing. An unknown
 * currency is 400 INVALID_INPUT (field `currency`).
 */
const internalAccountsRoutes: RouteModule = (app, deps) => {
  const TAGS = ['Internal Accounts'];
  const list = async (platformId: string, owner: accounts.Owner, q: ListQuery) => {
    const res = await deps.clients.accounts.listInternalAccounts({
      platformId,
      owner,
      ...(q.customerId ? { customerId: q.customerId } : {}),
      ...(q.currency ? { currency: q.currency } : {}),
      ...(q.type ? { type: TYPE_TO_PB[q.type] } : {}),
      page: pageOf(q),
    });
    return envelope(res.accounts.map(internalAccountJson), res.page);
  };

  app.get(
    '/customers/internal-accounts',
    {
      schema: {
        tags: TAGS,
        operationId: 'listCustomerInternalAccounts',
        summary: 'List customer internal accounts',
        description:
          'Internal accounts of the platform’s customers, created automatically per enabled currency when a customer is created. Filter by currency, customerId and type; paginated.',
        querystring: CustomerInternalAccountsQuery,
        response: { 200: CustomerInternalAccountList, ...errorResponses() },
      },
    },
    async (request) => list(request.platform.id, accounts.Owner.CUSTOMERS, request.query),
  );

  app.get(
    '/platform/internal-accounts',
    {
      schema: {
        tags: TAGS,
        operationId: 'listPlatformInternalAccounts',
        summary: 'List platform internal accounts',
        description:
          'Internal accounts that belong to the platform itself (one per supported currency, created when the platform is configured). Filter by currency and type. Returns up to 100 accounts per page by default.',
        querystring: PlatformInternalAccountsQuery,
        response: { 200: PlatformInternalAccountList, ...errorResponses() },
      },
    },
    async (request) => list(request.platform.id, accounts.Owner.PLATFORM, request.query),
  );

  app.get(
    '/internal-accounts/:id',
    {
      schema: {
        tags: TAGS,
        operationId: 'getInternalAccountById',
        summary: 'Get an internal account',
        description:
          'One internal account of the platform (a customer’s or the platform’s own) with its balance. Another platform’s account, or an unknown id: 404 INTERNAL_ACCOUNT_NOT_FOUND. (Not in the reference API: docs/api-differences.md.)',
        params: IdParams('InternalAccount'),
        response: { 200: InternalAccount, ...errorResponses() },
      },
    },
    async (request) => {
      const res = await deps.clients.accounts.getInternalAccount({
        platformId: request.platform.id,
        accountId: request.params.id,
      });
      return internalAccountJson(res.account!);
    },
  );
};

export default internalAccountsRoutes;
