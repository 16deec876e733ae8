import type { FastifyRequest } from 'fastify';
import { payments } from '@sluice/contracts';
import { environmentOf } from '../http/request.helpers.js';
import type { GatewayDeps, RouteModule } from '../http/types.js';
import { envelope, errorResponses, pageOf } from '../schemas/common.js';
import {
  EstimateCryptoWithdrawalFeeRequest,
  EstimateCryptoWithdrawalFeeResponse,
  withdrawalFeeJson,
  ExchangeRateList,
  exchangeRateJson,
  ExchangeRatesQuery,
  externalAccountLookupJson,
  umaLookupJson,
  ReceiverExternalAccountLookupResponse,
  ReceiverExternalAccountParams,
  ReceiverUmaLookupResponse,
  ReceiverUmaParams,
  ReceiverUmaQuery,
  UmaProviderList,
  umaProviderJson,
  UmaProvidersQuery,
} from '../schemas/payments.schemas.js';

type LookupQuery = { senderUmaAddress?: string; customerId?: string; sendingCurrency?: string };

/**
 * The part of a receiver lookup both kinds share: the customer it is made for
 * (another platform's, or an unknown one, is 404 CUSTOMER_NOT_FOUND from
 * identity) and the sender and sending currency.
 */
async function lookupFields(deps: GatewayDeps, request: FastifyRequest, q: LookupQuery) {
  if (q.customerId)
    await deps.clients.identity.getCustomer({ platformId: request.platform.id, customerId: q.customerId });
  return {
    platformId: request.platform.id,
    environment: environmentOf(request),
    ...(q.senderUmaAddress ? { senderUmaAddress: q.senderUmaAddress } : {}),
    ...(q.customerId ? { customerId: q.customerId } : {}),
    ...(q.sendingCurrency ? { sendingCurrency: q.sendingCurrency.toUpperCase() } : {}),
  };
}

/**
 * Payments reads: `GET /receiver/uma/{receiverUmaAddress}` and
 * `GET /receiver/external-account/{accountId}` (receiver lookups → lookupId for
 * POST /quotes), `GET /exchange-rates` (every corridor priced for a
 * sending amount) and `GET /uma-providers` (the counterparty directory:
 * countryCode, currencyCode, hasBlockedProviders, sortOrder, limit, cursor) and
 * `POST /crypto/estimate-withdrawal-fee` (the network fee table: payments owns fees).
 */
const paymentsRoutes: RouteModule = (app, deps) => {
  const client = deps.clients.payments;

  app.get(
    '/receiver/uma/:receiverUmaAddress',
    {
      schema: {
        tags: ['Cross-Currency Transfers'],
        operationId: 'lookupUma',
        summary: 'Look up an UMA address for payment',
        description:
          'Resolves a receiving UMA address: the currencies it accepts (with an estimated rate from the sending currency, min and max) and the payer data its institution requires. Returns a lookupId for POST /quotes, valid until expiresAt. Sandbox receivers: $success.usd, $success.eur, $success.mxn, $pending.long.usd, $fail.compliance.usd at the sandbox UMA domain. 400 INVALID_UMA_ADDRESS for a malformed address, 404 UMA_RECEIVER_NOT_FOUND for an unknown receiver.',
        params: ReceiverUmaParams,
        querystring: ReceiverUmaQuery,
        response: { 200: ReceiverUmaLookupResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const res = await client.lookupUmaReceiver({
        ...(await lookupFields(deps, request, request.query)),
        receiverUmaAddress: request.params.receiverUmaAddress,
      });
      return umaLookupJson(res.lookup!);
    },
  );

  app.get(
    '/receiver/external-account/:accountId',
    {
      schema: {
        tags: ['Cross-Currency Transfers'],
        operationId: 'lookupExternalAccount',
        summary: 'Look up an external account for payment',
        description:
          'One of the platform’s external accounts as a payment destination: its currency with an estimated rate from the sending currency and the min and max amounts. Returns a lookupId for POST /quotes, valid until expiresAt. 404 for an unknown, deleted or another platform’s account.',
        params: ReceiverExternalAccountParams,
        querystring: ReceiverUmaQuery,
        response: { 200: ReceiverExternalAccountLookupResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const res = await client.lookupExternalAccountReceiver({
        ...(await lookupFields(deps, request, request.query)),
        accountId: request.params.accountId,
      });
      return externalAccountLookupJson(res.lookup!);
    },
  );

  app.get(
    '/exchange-rates',
    {
      schema: {
        tags: ['Exchange Rates'],
        operationId: 'getExchangeRates',
        summary: 'Get exchange rates',
        description:
          'Every currency corridor (source ≠ destination) with the rate, fees and what `sendingAmount` (default 10000 minor units) delivers, computed with the same rule as quotes. Filter by sourceCurrency and destinationCurrency (repeatable). Sandbox rates come from a fixed, documented table.',
        querystring: ExchangeRatesQuery,
        response: { 200: ExchangeRateList, ...errorResponses() },
      },
    },
    async (request) => {
      const q = request.query;
      const res = await client.listExchangeRates({
        platformId: request.platform.id,
        environment: environmentOf(request),
        ...(q.sourceCurrency ? { sourceCurrency: q.sourceCurrency.toUpperCase() } : {}),
        destinationCurrencies: (q.destinationCurrency ?? []).map((c) => c.toUpperCase()),
        ...(q.sendingAmount !== undefined ? { sendingAmount: BigInt(q.sendingAmount) } : {}),
      });
      const data = res.rates.map(exchangeRateJson);
      return { data, hasMore: false, totalCount: data.length };
    },
  );

  app.get(
    '/uma-providers',
    {
      schema: {
        tags: ['Available UMA Providers'],
        operationId: 'getAvailableUmaProviders',
        summary: 'List available counterparty providers',
        description:
          'Counterparty providers reachable over UMA. Filters: countryCode (ISO 3166-1 alpha-2), currencyCode, hasBlockedProviders=false to keep only providers on your allowlist; sorted by name (sortOrder asc or desc, default desc); paginated.',
        querystring: UmaProvidersQuery,
        response: { 200: UmaProviderList, ...errorResponses() },
      },
    },
    async (request) => {
      const q = request.query;
      const res = await client.listUmaProviders({
        platformId: request.platform.id,
        environment: environmentOf(request),
        ...(q.countryCode ? { countryCode: q.countryCode.toUpperCase() } : {}),
        ...(q.currencyCode ? { currencyCode: q.currencyCode.toUpperCase() } : {}),
        ...(q.hasBlockedProviders !== undefined ? { hasBlockedProviders: q.hasBlockedProviders } : {}),
        sortOrder: q.sortOrder === 'asc' ? payments.SortOrder.ASC : payments.SortOrder.DESC,
        page: pageOf(q),
      });
      return envelope(res.providers.map(umaProviderJson), res.page);
    },
  );

  app.post(
    '/crypto/estimate-withdrawal-fee',
    {
      schema: {
        tags: ['Cross-Currency Transfers'],
        operationId: 'estimateCryptoWithdrawalFee',
        summary: 'Estimate crypto withdrawal fee',
        description:
          'The network and application fees of withdrawing `amount` from a crypto internal account (INTERNAL_CRYPTO or EMBEDDED_WALLET holding `currency`) to `destinationAddress` on `cryptoNetwork`; nothing moves. Sandbox fees come from a fixed table per network (docs/payments.md). 400 INVALID_INPUT naming the field (an unknown network, a currency the network does not carry or the account does not hold, an address outside the network’s grammar), 400 AMOUNT_OUT_OF_RANGE when the amount does not exceed the fee, 404 for an unknown or another platform’s account.',
        body: EstimateCryptoWithdrawalFeeRequest,
        response: { 200: EstimateCryptoWithdrawalFeeResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const b = request.body;
      const res = await client.estimateCryptoWithdrawalFee({
        platformId: request.platform.id,
        environment: environmentOf(request),
        internalAccountId: b.internalAccountId,
        currency: b.currency.toUpperCase(),
        cryptoNetwork: b.cryptoNetwork.toUpperCase(),
        amount: BigInt(b.amount),
        destinationAddress: b.destinationAddress,
      });
      return withdrawalFeeJson(res);
    },
  );
};

export default paymentsRoutes;
