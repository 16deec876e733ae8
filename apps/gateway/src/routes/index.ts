import type { RouteModule } from '../http/types.js';
import tokensRoutes from './tokens.routes.js';
import configRoutes from './config.routes.js';
import customersRoutes from './customers.routes.js';
import internalAccountsRoutes from './internal-accounts.routes.js';
import sandboxFundRoutes from './sandbox-fund.routes.js';
import sandboxWebhooksRoutes from './sandbox-webhooks.routes.js';
import externalAccountsRoutes from './external-accounts.routes.js';
import discoveriesRoutes from './discoveries.routes.js';
import walletAuthRoutes from './wallet-auth.routes.js';
import paymentsRoutes from './payments.routes.js';
import transfersRoutes from './transfers.routes.js';
import transactionsRoutes from './transactions.routes.js';
import quotesRoutes from './quotes.routes.js';
import incomingRoutes from './incoming.routes.js';
import webhooksRoutes from './webhooks.routes.js';
import agentsRoutes from './agents.routes.js';
import agentMeRoutes from './agent-me.routes.js';
import beneficialOwnersRoutes from './beneficial-owners.routes.js';
import documentsRoutes from './documents.routes.js';
import verificationsRoutes from './verifications.routes.js';
import invitationsRoutes from './invitations.routes.js';
import bulkImportRoutes from './bulk-import.routes.js';

/**
 * Every route module of the versioned API (`<name>.routes.ts` in this folder),
 * registered by the gateway under API_BASE_PATH, each in its own encapsulated
 * scope, in this order. An explicit list (not a directory scan) so bundling
 * sees every module: add yours here.
 */
export const routeModules: Record<string, RouteModule> = {
  tokens: tokensRoutes,
  config: configRoutes,
  customers: customersRoutes,
  'bulk-import': bulkImportRoutes,
  'internal-accounts': internalAccountsRoutes,
  'sandbox-fund': sandboxFundRoutes,
  'sandbox-webhooks': sandboxWebhooksRoutes,
  'external-accounts': externalAccountsRoutes,
  discoveries: discoveriesRoutes,
  'wallet-auth': walletAuthRoutes,
  payments: paymentsRoutes,
  transfers: transfersRoutes,
  transactions: transactionsRoutes,
  quotes: quotesRoutes,
  incoming: incomingRoutes,
  webhooks: webhooksRoutes,
  agents: agentsRoutes,
  'agent-me': agentMeRoutes,
  'beneficial-owners': beneficialOwnersRoutes,
  documents: documentsRoutes,
  verifications: verificationsRoutes,
  invitations: invitationsRoutes,
};
