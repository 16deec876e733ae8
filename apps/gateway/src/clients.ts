import { createRpcClient } from '@sluice/rpc';
import { identity, accounts, webhooks, walletAuth, payments, agents, compliance } from '@sluice/contracts';
import type { Metrics } from '@sluice/metrics';
import type { GatewayConfig } from './config.js';
import type { GatewayClients } from './http/types.js';

type ClientConfig = Pick<
  GatewayConfig,
  | 'IDENTITY_GRPC_URL'
  | 'ACCOUNTS_GRPC_URL'
  | 'WEBHOOK_DISPATCHER_GRPC_URL'
  | 'WALLET_AUTH_GRPC_URL'
  | 'PAYMENTS_GRPC_URL'
  | 'AGENTS_GRPC_URL'
  | 'COMPLIANCE_GRPC_URL'
  | 'RPC_DEADLINE_MS'
>;

/** gRPC clients of the services the gateway calls (deadline RPC_DEADLINE_MS, request id forwarded, measured into `metrics`). */
export function createGatewayClients(config: ClientConfig, metrics?: Metrics): GatewayClients {
  const opts = { defaultDeadlineMs: config.RPC_DEADLINE_MS, ...(metrics ? { metrics } : {}) };
  return {
    identity: createRpcClient(identity.IdentityServiceClient, config.IDENTITY_GRPC_URL, opts),
    accounts: createRpcClient(accounts.AccountsServiceClient, config.ACCOUNTS_GRPC_URL, opts),
    webhooks: createRpcClient(webhooks.WebhooksServiceClient, config.WEBHOOK_DISPATCHER_GRPC_URL, opts),
    walletAuth: createRpcClient(walletAuth.WalletAuthServiceClient, config.WALLET_AUTH_GRPC_URL, opts),
    payments: createRpcClient(payments.PaymentsServiceClient, config.PAYMENTS_GRPC_URL, opts),
    agents: createRpcClient(agents.AgentsServiceClient, config.AGENTS_GRPC_URL, opts),
    compliance: createRpcClient(compliance.ComplianceServiceClient, config.COMPLIANCE_GRPC_URL, opts),
  };
}

/** Closes every client's channel. */
export function closeGatewayClients(clients: GatewayClients): void {
  for (const c of Object.values(clients)) c.close();
}
