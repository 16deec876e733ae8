import { payments as pb } from '@sluice/contracts';
import type { Logger } from '@sluice/logging';
import { environmentFromPb, implement, pageInfo, pageRequest, type AsyncService, type RegisteredService } from '@sluice/rpc';
import type { ExchangeRatesService } from '../app/exchange-rates.service.js';
import type { IncomingService } from '../app/incoming.service.js';
import type { SandboxFundingService } from '../app/sandbox-funding.service.js';
import type { QuoteCreationService } from '../app/quote-creation.service.js';
import type { QuoteExecutionService } from '../app/quote-execution.service.js';
import type { QuoteExpiryService } from '../app/quote-expiry.service.js';
import type { ReceiverLookupsService } from '../app/receiver-lookups.service.js';
import type { TransactionsService } from '../app/transactions.service.js';
import type { TransfersService } from '../app/transfers.service.js';
import type { UmaProvidersService } from '../app/uma-providers.service.js';
import type { WithdrawalFeesService } from '../app/withdrawal-fees.service.js';
import { parseWithdrawalFeeRequest } from '../domain/withdrawal-fees.js';
import { parseRatesQuery } from '../domain/exchange-rate-table.js';
import { parseExternalAccountLookup, parseLookupRef, parseUmaLookup } from '../domain/receiver-lookup.js';
import { parseUmaProvidersQuery } from '../domain/uma-providers.js';
import { incomingHandlers } from './incoming.rpc.js';
import { corridorToPb, lookupToPb, providerToPb, transactionToPb } from './payments.mapper.js';
import { parseSandboxFundRequest } from '../domain/incoming-request.js';
import { quotesHandlers } from './quotes.rpc.js';
import { transactionsHandlers } from './transactions.rpc.js';

/**
 * gRPC handlers of sluice.payments.v1.PaymentsService: each maps its message to the
 * request the domain parses (INVALID_INPUT naming every bad field), calls one use case
 * and maps the answer back. Errors are the service's DomainErrors, mapped to gRPC status
 * once by `implement`.
 */
export function paymentsRpc(o: {
  lookups: ReceiverLookupsService;
  rates: ExchangeRatesService;
  providers: UmaProvidersService;
  withdrawalFees: WithdrawalFeesService;
  transfers: TransfersService;
  transactions: TransactionsService;
  incoming: IncomingService;
  sandboxFunding: SandboxFundingService;
  quoteCreation: QuoteCreationService;
  quoteExecution: QuoteExecutionService;
  quoteExpiry: QuoteExpiryService;
  logger: Logger;
}): RegisteredService {
  const supported = (environment: Parameters<ExchangeRatesService['currencies']>[0]) => o.rates.currencies(environment);
  const handlers: AsyncService<pb.PaymentsServiceServer> = {
    ...transactionsHandlers(o),
    ...incomingHandlers(o.incoming),
    ...quotesHandlers({ creation: o.quoteCreation, execution: o.quoteExecution, expiry: o.quoteExpiry }),

    async sandboxFundAccount(req) {
      const transaction = await o.sandboxFunding.fund(
        parseSandboxFundRequest({
          platformId: req.platformId,
          environment: environmentFromPb(req.environment),
          accountId: req.accountId,
          amount: req.amount,
          ...(req.requestKey ? { requestKey: req.requestKey } : {}),
        }),
      );
      return { transaction: transactionToPb(transaction) };
    },

    async lookupUmaReceiver(req) {
      const lookup = await o.lookups.lookupUma(
        parseUmaLookup(
          {
            platformId: req.platformId,
            environment: environmentFromPb(req.environment),
            receiverUmaAddress: req.receiverUmaAddress,
            ...(req.senderUmaAddress ? { senderUmaAddress: req.senderUmaAddress } : {}),
            ...(req.customerId ? { customerId: req.customerId } : {}),
            ...(req.sendingCurrency !== undefined ? { sendingCurrency: req.sendingCurrency } : {}),
          },
          supported,
        ),
      );
      return { lookup: lookupToPb(lookup) };
    },

    async lookupExternalAccountReceiver(req) {
      const lookup = await o.lookups.lookupExternalAccount(
        parseExternalAccountLookup(
          {
            platformId: req.platformId,
            environment: environmentFromPb(req.environment),
            accountId: req.accountId,
            ...(req.senderUmaAddress ? { senderUmaAddress: req.senderUmaAddress } : {}),
            ...(req.customerId ? { customerId: req.customerId } : {}),
            ...(req.sendingCurrency !== undefined ? { sendingCurrency: req.sendingCurrency } : {}),
          },
          supported,
        ),
      );
      return { lookup: lookupToPb(lookup) };
    },

    async getReceiverLookup(req) {
      const ref = parseLookupRef(req.platformId, req.lookupId);
      return { lookup: lookupToPb(await o.lookups.get(ref.platformId, ref.lookupId, req.includeExpired)) };
    },

    async listExchangeRates(req) {
      const query = parseRatesQuery(
        {
          platformId: req.platformId,
          environment: environmentFromPb(req.environment),
          ...(req.sourceCurrency !== undefined ? { sourceCurrency: req.sourceCurrency } : {}),
          destinationCurrencies: req.destinationCurrencies,
          ...(req.sendingAmount !== undefined ? { sendingAmount: req.sendingAmount } : {}),
        },
        supported,
      );
      return { rates: o.rates.list(query).map(corridorToPb) };
    },

    async listUmaProviders(req) {
      const page = await o.providers.list(
        parseUmaProvidersQuery({
          platformId: req.platformId,
          environment: environmentFromPb(req.environment),
          ...(req.countryCode !== undefined ? { countryCode: req.countryCode } : {}),
          ...(req.currencyCode !== undefined ? { currencyCode: req.currencyCode } : {}),
          ...(req.hasBlockedProviders !== undefined ? { hasBlockedProviders: req.hasBlockedProviders } : {}),
          sortOrder: req.sortOrder === pb.SortOrder.ASC ? 'asc' : 'desc',
          ...pageRequest(req.page),
        }),
      );
      return { providers: page.data.map(providerToPb), page: pageInfo(page) };
    },

    async estimateCryptoWithdrawalFee(req) {
      // The estimate's fields map one to one onto the proto response.
      return o.withdrawalFees.estimate(
        parseWithdrawalFeeRequest({
          platformId: req.platformId,
          environment: environmentFromPb(req.environment),
          internalAccountId: req.internalAccountId,
          currency: req.currency,
          cryptoNetwork: req.cryptoNetwork,
          amount: req.amount,
          destinationAddress: req.destinationAddress,
        }),
      );
    },
  };
  return implement<pb.PaymentsServiceServer>(pb.PaymentsServiceService, handlers, o.logger, 'sluice.payments.v1.PaymentsService');
}
