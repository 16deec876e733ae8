import { accounts } from '@sluice/contracts';
import type { RouteModule } from '../http/types.js';
import { ErrorBody, Page, envelope, pageOf } from '../schemas/common.js';
import {
  CustomerInternalAccountsQuery,
  InternalAccount,
  internalAccountJson,
  PlatformInternalAccountsQuery,
  type InternalAccountTypeName,
} from '../schemas/internal-account.schemas.js';

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

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 500: ErrorBody };

/**
 * `GET /customers/internal-accounts` and `GET /platform/internal-accounts`:
 * the platform's internal accounts (customer-owned or platform-owned), oldest
 * first, in the list envelope. Filters: currency, type, and (customers)
 * customerId; another platform's customer simply matches nothing. An unknown
 * currency is 400 INVALID_INPUT (field `currency`).
 */
const internalAccountsRoutes: RouteModule = (app, deps) => {
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
        tags: ['Internal Accounts'],
        operationId: 'listCustomerInternalAccounts',
        summary: 'List customer internal accounts',
        description:
          'Internal accounts of the platform’s customers, created automatically per enabled currency when a customer is created. Filter by currency, customerId and type; paginated.',
        querystring: CustomerInternalAccountsQuery,
        response: { 200: Page(InternalAccount, 'InternalAccountList'), ...errors },
      },
    },
    async (request) => list(request.platform.id, accounts.Owner.CUSTOMERS, request.query as ListQuery),
  );

  app.get(
    '/platform/internal-accounts',
    {
      schema: {
        tags: ['Internal Accounts'],
        operationId: 'listPlatformInternalAccounts',
        summary: 'List platform internal accounts',
        description:
          'Internal accounts that belong to the platform itself (one per supported currency, created when the platform is configured). Filter by currency and type. Returns up to 100 accounts per page by default.',
        querystring: PlatformInternalAccountsQuery,
        response: { 200: Page(InternalAccount, 'PlatformInternalAccountList'), ...errors },
      },
    },
    async (request) => list(request.platform.id, accounts.Owner.PLATFORM, request.query as ListQuery),
  );
};

export default internalAccountsRoutes;
