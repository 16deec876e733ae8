import { accounts as pb } from '@sluice/contracts';
import { environmentFromPb, implement, pageInfo, type AsyncService, type RegisteredService } from '@sluice/rpc';
import type { Logger } from '@sluice/logging';
import type { InternalAccountsService } from '../app/internal-accounts.service.js';
import type { LedgerService } from '../app/ledger.service.js';
import type { ExternalAccountsService } from '../app/external-accounts.service.js';
import type { DiscoveriesService } from '../app/discoveries.service.js';
import { parseDiscoveriesRequest } from '../domain/discoveries.js';
import type { AccountListRequest } from '../domain/validation.js';
import { accountInfoFromPb, externalAccountToPb } from './external-account.mapper.js';
import { ledgerHandlers } from './ledger.rpc.js';
import { ownerFromPb, toPb, typeFromPb } from './internal-account.mapper.js';

/** The filter fields ListInternalAccounts and ListExternalAccounts share, as the app takes them. */
function listRequest(
  req: pb.ListInternalAccountsRequest | pb.ListExternalAccountsRequest,
): AccountListRequest {
  return {
    platformId: req.platformId,
    owner: ownerFromPb(req.owner),
    ...(req.customerId !== undefined ? { customerId: req.customerId } : {}),
    ...(req.currency !== undefined ? { currency: req.currency } : {}),
  };
}

/** gRPC handlers of sluice.accounts.v1.AccountsService: translate proto <-> app types and call the use cases. */
export function accountsRpc(o: {
  accounts: InternalAccountsService;
  ledger: LedgerService;
  externalAccounts: ExternalAccountsService;
  discoveries: DiscoveriesService;
  logger: Logger;
}): RegisteredService {
  const { accounts, ledger, externalAccounts } = o;
  const handlers: AsyncService<pb.AccountsServiceServer> = {
    ...ledgerHandlers(ledger),

    async listDiscoveries(req) {
      const request = parseDiscoveriesRequest({
        environment: environmentFromPb(req.environment),
        ...(req.country !== undefined ? { country: req.country } : {}),
        ...(req.currency !== undefined ? { currency: req.currency } : {}),
      });
      // The proto Discovery has the domain's fields.
      return { discoveries: o.discoveries.list(request) };
    },

    async ensureCustomerAccounts(req) {
      const rows = await accounts.ensureAccounts({
        owner: 'CUSTOMER',
        platformId: req.platformId,
        customerId: req.customerId,
        currencies: req.currencies,
        environment: environmentFromPb(req.environment),
      });
      return { accounts: rows.map(toPb) };
    },

    async ensurePlatformAccounts(req) {
      const rows = await accounts.ensureAccounts({
        owner: 'PLATFORM',
        platformId: req.platformId,
        currencies: req.currencies,
        environment: environmentFromPb(req.environment),
      });
      return { accounts: rows.map(toPb) };
    },

    async updateInternalAccount(req) {
      return { account: toPb(await accounts.update(req)) };
    },

    async listInternalAccounts(req) {
      const type = req.type === undefined ? undefined : (typeFromPb(req.type) ?? req.type);
      const page = await accounts.list(
        { ...listRequest(req), ...(type !== undefined ? { type } : {}) },
        req.page?.limit,
        req.page?.cursor,
      );
      return { accounts: page.data.map(toPb), page: pageInfo(page) };
    },

    async getInternalAccount(req) {
      return { account: toPb(await accounts.get(req.platformId, req.accountId)) };
    },

    async sandboxFund(req) {
      const r = await ledger.sandboxFund(req.platformId, req.accountId, req.amount, req.entryId);
      return { account: toPb(r.account), entryId: r.entryId, replayed: r.replayed };
    },

    async createExternalAccount(req) {
      const account = await externalAccounts.create({
        platformId: req.platformId,
        environment: environmentFromPb(req.environment),
        ...(req.customerId !== undefined ? { customerId: req.customerId } : {}),
        currency: req.currency,
        accountInfo: accountInfoFromPb(req.accountInfo),
        ...(req.platformAccountId !== undefined ? { platformAccountId: req.platformAccountId } : {}),
        ...(req.defaultUmaDepositAccount !== undefined
          ? { defaultUmaDepositAccount: req.defaultUmaDepositAccount }
          : {}),
      });
      return { account: externalAccountToPb(account) };
    },

    async listExternalAccounts(req) {
      const page = await externalAccounts.list(listRequest(req), req.page?.limit, req.page?.cursor);
      return { accounts: page.data.map(externalAccountToPb), page: pageInfo(page) };
    },

    async getExternalAccount(req) {
      return { account: externalAccountToPb(await externalAccounts.get(req.platformId, req.accountId)) };
    },

    async deleteExternalAccount(req) {
      const deleted = await externalAccounts.delete(req.platformId, req.accountId);
      return { accountId: deleted.id };
    },
  };
  return implement<pb.AccountsServiceServer>(
    pb.AccountsServiceService,
    handlers,
    o.logger,
    'sluice.accounts.v1.AccountsService',
  );
}
