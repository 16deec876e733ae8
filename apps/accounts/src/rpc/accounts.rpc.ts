import { accounts as pb } from '@sluice/contracts';
import { implement, pageInfo, type AsyncService, type RegisteredService } from '@sluice/rpc';
import type { Logger } from '@sluice/logging';
import { invalidInput, isCurrencyCode } from '@sluice/core';
import { normalizeCurrencies } from '../domain/internal-account.js';
import type { PlatformDirectory } from '../app/ports.js';
import { checks } from '../domain/validation.js';
import type { InternalAccountsService } from '../app/internal-accounts.service.js';
import type { LedgerService } from '../app/ledger.service.js';
import type { ExternalAccountsService } from '../app/external-accounts.service.js';
import { validateAccountInfo, validatePlatformAccountId } from '../domain/external-account.js';
import { accountInfoFromPb, externalAccountToPb } from './external-account.mapper.js';
import { ledgerHandlers } from './ledger.rpc.js';
import { environmentFromPb, ownerFromPb, toPb, typeFromPb } from './internal-account.mapper.js';

/** gRPC handlers of sluice.accounts.v1.AccountsService: validate, translate, delegate. */
export function accountsRpc(o: {
  accounts: InternalAccountsService;
  ledger: LedgerService;
  externalAccounts: ExternalAccountsService;
  logger: Logger;
  now: () => Date;
  /** Where EnsureCustomerAccounts learns the platform's embedded-wallet currencies. */
  platforms?: PlatformDirectory;
}): RegisteredService {
  const { accounts, ledger, externalAccounts } = o;
  const handlers: AsyncService<pb.AccountsServiceServer> = {
    ...ledgerHandlers(ledger),
    async ensureCustomerAccounts(req) {
      const environment = environmentFromPb(req.environment);
      checks()
        .id('platformId', req.platformId, 'Platform')
        .id('customerId', req.customerId, 'Customer')
        .environment('environment', environment)
        .done();
      const currencies = normalizeCurrencies(req.currencies);
      let embedded: string[] = [];
      try {
        embedded = (await o.platforms?.embeddedWalletCurrencies(req.platformId)) ?? [];
      } catch (err) {
        // The CUSTOMER.CREATED consumer provisions them later.
        o.logger.warn({ err: (err as Error).message }, 'embedded-wallet currencies unavailable; EMBEDDED_WALLET accounts deferred');
      }
      const rows = await accounts.ensure(
        { platformId: req.platformId, owner: 'CUSTOMER', customerId: req.customerId },
        currencies,
        environment!,
        embedded.filter((c) => isCurrencyCode(c)),
      );
      return { accounts: rows.map(toPb) };
    },

    async ensurePlatformAccounts(req) {
      const environment = environmentFromPb(req.environment);
      checks().id('platformId', req.platformId, 'Platform').environment('environment', environment).done();
      const currencies = normalizeCurrencies(req.currencies);
      const rows = await accounts.ensure(
        { platformId: req.platformId, owner: 'PLATFORM' },
        currencies,
        environment!,
      );
      return { accounts: rows.map(toPb) };
    },

    async updateInternalAccount(req) {
      checks().id('platformId', req.platformId, 'Platform').id('accountId', req.accountId, 'InternalAccount').done();
      if (req.privateEnabled === undefined)
        throw invalidInput([{ field: 'privateEnabled', message: 'at least one update field is required' }]);
      return { account: toPb(await accounts.update(req.platformId, req.accountId, { privateEnabled: req.privateEnabled })) };
    },

    async listInternalAccounts(req) {
      const owner = ownerFromPb(req.owner);
      const type = req.type === undefined ? undefined : typeFromPb(req.type);
      const c = checks()
        .id('platformId', req.platformId, 'Platform')
        .optionalId('customerId', req.customerId, 'Customer')
        .currency('currency', req.currency);
      if (!owner) c.add('owner', 'must be OWNER_CUSTOMERS or OWNER_PLATFORM');
      if (owner === 'PLATFORM' && req.customerId) c.add('customerId', 'does not apply to platform accounts');
      if (req.type !== undefined && !type)
        c.add('type', 'must be INTERNAL_FIAT, INTERNAL_CRYPTO or EMBEDDED_WALLET');
      c.done();
      const page = await accounts.list(
        {
          platformId: req.platformId,
          owner: owner!,
          ...(req.customerId ? { customerId: req.customerId } : {}),
          ...(req.currency ? { currency: req.currency } : {}),
          ...(type ? { type } : {}),
        },
        req.page?.limit,
        req.page?.cursor,
      );
      return {
        accounts: page.data.map(toPb),
        page: pageInfo(page),
      };
    },

    async getInternalAccount(req) {
      checks()
        .id('platformId', req.platformId, 'Platform')
        .id('accountId', req.accountId, 'InternalAccount')
        .done();
      return { account: toPb(await accounts.get(req.platformId, req.accountId)) };
    },

    async sandboxFund(req) {
      checks()
        .id('platformId', req.platformId, 'Platform')
        .id('accountId', req.accountId, 'InternalAccount')
        .amount('amount', req.amount)
        .entryId('entryId', req.entryId)
        .done();
      const r = await ledger.sandboxFund(req.platformId, req.accountId, req.amount, req.entryId);
      return { account: toPb(r.account), entryId: r.entryId, replayed: r.replayed };
    },

    async createExternalAccount(req) {
      const environment = environmentFromPb(req.environment);
      checks()
        .id('platformId', req.platformId, 'Platform')
        .optionalId('customerId', req.customerId, 'Customer')
        .environment('environment', environment)
        .done();
      if (req.defaultUmaDepositAccount && !req.customerId)
        checks().add('defaultUmaDepositAccount', 'applies to customer accounts only').done();
      const platformAccountId = validatePlatformAccountId(req.platformAccountId);
      const validated = validateAccountInfo(req.currency, accountInfoFromPb(req.accountInfo), o.now());
      const account = await externalAccounts.create({
        platformId: req.platformId,
        environment: environment!,
        ...(req.customerId ? { customerId: req.customerId } : {}),
        currency: req.currency,
        validated,
        ...(platformAccountId ? { platformAccountId } : {}),
        defaultUmaDepositAccount: req.defaultUmaDepositAccount ?? false,
      });
      return { account: externalAccountToPb(account) };
    },

    async listExternalAccounts(req) {
      const owner = ownerFromPb(req.owner);
      const c = checks()
        .id('platformId', req.platformId, 'Platform')
        .optionalId('customerId', req.customerId, 'Customer')
        .currency('currency', req.currency);
      if (!owner) c.add('owner', 'must be OWNER_CUSTOMERS or OWNER_PLATFORM');
      if (owner === 'PLATFORM' && req.customerId) c.add('customerId', 'does not apply to platform accounts');
      c.done();
      const page = await externalAccounts.list(
        {
          platformId: req.platformId,
          owner: owner!,
          ...(req.customerId ? { customerId: req.customerId } : {}),
          ...(req.currency ? { currency: req.currency } : {}),
        },
        req.page?.limit,
        req.page?.cursor,
      );
      return {
        accounts: page.data.map(externalAccountToPb),
        page: pageInfo(page),
      };
    },

    async getExternalAccount(req) {
      checks()
        .id('platformId', req.platformId, 'Platform')
        .id('accountId', req.accountId, 'ExternalAccount')
        .done();
      return { account: externalAccountToPb(await externalAccounts.get(req.platformId, req.accountId)) };
    },

    async deleteExternalAccount(req) {
      checks()
        .id('platformId', req.platformId, 'Platform')
        .id('accountId', req.accountId, 'ExternalAccount')
        .done();
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
