import { environmentOf } from '../http/request.helpers.js';
import type { RouteModule } from '../http/types.js';
import { errorResponses } from '../schemas/common.js';
import { DiscoveriesQuery, DiscoveryList, discoveryJson } from '../schemas/external-account.schemas.js';

/**
 * `GET /discoveries`: the receiving institutions whose `bankName` the external-account variants
 * take, per country and currency (the accounts service's directory; sandbox: a fixed table,
 * docs/external-accounts.md). Every match in one page.
 */
const discoveriesRoutes: RouteModule = (app, deps) => {
  app.get(
    '/discoveries',
    {
      schema: {
        tags: ['Discoveries'],
        operationId: 'getDiscoveries',
        summary: 'List available receiving institution names',
        description:
          'The receiving institutions (banks and payment providers) for a country and currency: the `bankName` of each is the value to pass as `accountInfo.bankName` when creating an external account (POST /customers/external-accounts). Without filters, every institution. Sandbox platforms see a fixed directory covering every country and currency whose external-account variant takes a bankName; production lists none yet. 400 INVALID_INPUT naming `country` (not an ISO 3166-1 alpha-2 code) or `currency` (not a known ISO 4217 code).',
        querystring: DiscoveriesQuery,
        response: { 200: DiscoveryList, ...errorResponses() },
      },
    },
    async (request) => {
      const q = request.query;
      const { discoveries } = await deps.clients.accounts.listDiscoveries({
        platformId: request.platform.id,
        environment: environmentOf(request),
        ...(q.country !== undefined ? { country: q.country.toUpperCase() } : {}),
        ...(q.currency !== undefined ? { currency: q.currency.toUpperCase() } : {}),
      });
      const data = discoveries.map(discoveryJson);
      return { data, hasMore: false, totalCount: data.length };
    },
  );
};

export default discoveriesRoutes;
