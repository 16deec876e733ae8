import { payments as pb } from '@sluice/contracts';
import { isCurrencyCode, MAX_AMOUNT } from '@sluice/core';
import { implement, pageInfo, pageRequest, type AsyncService, type RegisteredService } from '@sluice/rpc';
import type { Logger } from '@sluice/logging';
import type {
  EnvironmentAdapters,
  Environment,
  ReceiverLookupsService,
} from '../app/receiver-lookups.service.js';
import { corridorRates } from '../domain/exchange-rate-table.js';
import type { FeeSchedule } from '../domain/pricing.js';
import { pageUmaProviders, type UmaProviderDirectory } from '../domain/uma-providers.js';
import type { TransfersService } from '../app/transfers.service.js';
import { transactionsHandlers } from './transactions.rpc.js';
import { incomingHandlers } from './incoming.rpc.js';
import type { IncomingService } from '../app/incoming.service.js';
import type { QuotesService } from '../app/quotes.service.js';
import { quotesHandlers } from './quotes.rpc.js';
import { Checks } from './checks.js';
import { corridorToPb, environmentFromPb, lookupToPb, providerToPb } from './payments.mapper.js';

/** gRPC handlers of sluice.payments.v1.PaymentsService: validate, translate, delegate. */
export function paymentsRpc(o: {
  lookups: ReceiverLookupsService;
  adapters: Record<Environment, EnvironmentAdapters>;
  fees: FeeSchedule;
  directories: Record<Environment, UmaProviderDirectory>;
  transfers: TransfersService;
  incoming: IncomingService;
  quotes: QuotesService;
  logger: Logger;
}): RegisteredService {
  const handlers: AsyncService<pb.PaymentsServiceServer> = {
    ...transactionsHandlers(o.transfers),
    ...incomingHandlers(o.incoming),
    ...quotesHandlers(o.quotes),
    async lookupUmaReceiver(req) {
      const env = environmentFromPb(req.environment);
      const c = new Checks()
        .id('platformId', req.platformId, 'Platform')
        .env(env)
        .id('customerId', req.customerId, 'Customer', true);
      if (!req.receiverUmaAddress) c.add('receiverUmaAddress', 'is required');
      if (env) c.currency('sendingCurrency', req.sendingCurrency, () => o.adapters[env].rates.currencies());
      c.done();
      const lookup = await o.lookups.lookupUma({
        platformId: req.platformId,
        environment: env!,
        receiverUmaAddress: req.receiverUmaAddress,
        ...(req.senderUmaAddress ? { senderUmaAddress: req.senderUmaAddress } : {}),
        ...(req.customerId ? { customerId: req.customerId } : {}),
        sendingCurrency: req.sendingCurrency ?? 'USD',
      });
      return { lookup: lookupToPb(lookup) };
    },

    async lookupExternalAccountReceiver(req) {
      const env = environmentFromPb(req.environment);
      const c = new Checks()
        .id('platformId', req.platformId, 'Platform')
        .env(env)
        .id('accountId', req.accountId, 'ExternalAccount')
        .id('customerId', req.customerId, 'Customer', true);
      if (env) c.currency('sendingCurrency', req.sendingCurrency, () => o.adapters[env].rates.currencies());
      c.done();
      const lookup = await o.lookups.lookupExternalAccount({
        platformId: req.platformId,
        environment: env!,
        accountId: req.accountId,
        ...(req.senderUmaAddress ? { senderUmaAddress: req.senderUmaAddress } : {}),
        ...(req.customerId ? { customerId: req.customerId } : {}),
        sendingCurrency: req.sendingCurrency ?? 'USD',
      });
      return { lookup: lookupToPb(lookup) };
    },

    async getReceiverLookup(req) {
      new Checks().id('platformId', req.platformId, 'Platform').id('lookupId', req.lookupId, 'Lookup').done();
      return { lookup: lookupToPb(await o.lookups.get(req.platformId, req.lookupId, req.includeExpired)) };
    },

    async listExchangeRates(req) {
      const env = environmentFromPb(req.environment);
      const c = new Checks().id('platformId', req.platformId, 'Platform').env(env);
      if (env) {
        const supported = () => o.adapters[env].rates.currencies();
        c.currency('sourceCurrency', req.sourceCurrency, supported);
        req.destinationCurrencies.forEach((d) => c.currency('destinationCurrency', d, supported));
      }
      if (req.sendingAmount !== undefined && (req.sendingAmount < 0n || req.sendingAmount > MAX_AMOUNT)) {
        c.add('sendingAmount', `must be an integer from 0 to ${MAX_AMOUNT}`);
      }
      c.done();
      o.adapters[env!].rates.currencies(); // EXCHANGE_RATES_UNAVAILABLE without a provider
      const rates = corridorRates(o.adapters[env!].rates, o.fees, {
        ...(req.sourceCurrency ? { sourceCurrency: req.sourceCurrency } : {}),
        destinationCurrencies: req.destinationCurrencies,
        ...(req.sendingAmount !== undefined ? { sendingAmount: req.sendingAmount } : {}),
      });
      return { rates: rates.map(corridorToPb) };
    },

    async listUmaProviders(req) {
      const env = environmentFromPb(req.environment);
      const c = new Checks().id('platformId', req.platformId, 'Platform').env(env);
      if (req.countryCode !== undefined && !/^[A-Za-z]{2}$/.test(req.countryCode)) {
        c.add('countryCode', 'must be an ISO 3166-1 alpha-2 country code');
      }
      if (req.currencyCode !== undefined && !isCurrencyCode(req.currencyCode.toUpperCase())) {
        c.add('currencyCode', `unknown currency "${req.currencyCode}"`);
      }
      c.done();
      const page = pageUmaProviders(await o.directories[env!].providers(req.platformId), {
        ...(req.countryCode ? { countryCode: req.countryCode } : {}),
        ...(req.currencyCode ? { currencyCode: req.currencyCode } : {}),
        ...(req.hasBlockedProviders !== undefined ? { hasBlockedProviders: req.hasBlockedProviders } : {}),
        sortOrder: req.sortOrder === pb.SortOrder.ASC ? 'asc' : 'desc',
        ...pageRequest(req.page),
      });
      return {
        providers: page.data.map(providerToPb),
        page: pageInfo(page),
      };
    },
  };
  return implement<pb.PaymentsServiceServer>(
    pb.PaymentsServiceService,
    handlers,
    o.logger,
    'sluice.payments.v1.PaymentsService',
  );
}
