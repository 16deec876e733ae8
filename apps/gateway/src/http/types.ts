import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from '@sluice/logging';
import type { PromiseClient } from '@sluice/rpc';
import type { identity, accounts, webhooks } from '@sluice/contracts';
import { DomainError } from '@sluice/core';

/** The gRPC clients the gateway talks to (promise form, deadlines and request id added). */
export interface GatewayClients {
  identity: PromiseClient<identity.IdentityServiceClient>;
  accounts: PromiseClient<accounts.AccountsServiceClient>;
  webhooks: PromiseClient<webhooks.WebhooksServiceClient>;
}

/** The authenticated caller of a platform route. */
export interface AuthenticatedPlatform {
  id: string;
  environment: 'SANDBOX' | 'PRODUCTION';
  tokenId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every authenticated route. */
    platform: AuthenticatedPlatform;
  }
}

export interface GatewayDeps {
  clients: GatewayClients;
  logger: Logger;
  config: Record<string, unknown>;
}

/**
 * A route module: `apps/gateway/src/routes/<name>.routes.ts` default-exports
 * one of these; the gateway registers every module under the version prefix.
 * Handlers throw DomainError (or let a gRPC DomainError through); the gateway's
 * error handler renders it.
 */
export type RouteModule = (app: FastifyInstance, deps: GatewayDeps) => Promise<void> | void;

/** Sandbox-only endpoints answer 403 for production platforms. */
export function requireSandbox(request: FastifyRequest): void {
  if (request.platform.environment !== 'SANDBOX') {
    throw new DomainError('PERMISSION_DENIED', 'SANDBOX_ONLY', 'This endpoint is only available to sandbox platforms');
  }
}
