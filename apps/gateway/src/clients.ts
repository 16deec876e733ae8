import { createRpcClient } from '@sluice/rpc';
import { identity, accounts, webhooks, walletAuth } from '@sluice/contracts';
import type { GatewayConfig } from './config.js';
import type { GatewayClients } from './http/types.js';

/** gRPC clients of the services the gateway calls (deadline RPC_DEADLINE_MS, request id forwarded). */
export function createGatewayClients(
  config: Pick<
    GatewayConfig,
    'IDENTITY_GRPC_URL' | 'ACCOUNTS_GRPC_URL' | 'WEBHOOK_DISPATCHER_GRPC_URL' | 'RPC_DEADLINE_MS'
  > &
    Partial<Pick<GatewayConfig, 'WALLET_AUTH_GRPC_URL'>
  >,
): GatewayClients {
  const opts = { defaultDeadlineMs: config.RPC_DEADLINE_MS };
  return {
    identity: createRpcClient(identity.IdentityServiceClient, config.IDENTITY_GRPC_URL, opts),
    accounts: createRpcClient(accounts.AccountsServiceClient, config.ACCOUNTS_GRPC_URL, opts),
    webhooks: createRpcClient(webhooks.WebhooksServiceClient, config.WEBHOOK_DISPATCHER_GRPC_URL, opts),
    walletAuth: createRpcClient(walletAuth.WalletAuthServiceClient, config.WALLET_AUTH_GRPC_URL ?? '127.0.0.1:50052', opts),
  };
}

export function closeGatewayClients(clients: GatewayClients): void {
  clients.identity.close();
  clients.accounts.close();
  clients.webhooks.close();
  clients.walletAuth.close();
}
