import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from '@sluice/logging';
import type { PromiseClient } from '@sluice/rpc';
import type {
  identity,
  accounts,
  webhooks,
  walletAuth,
  payments,
  agents,
  compliance,
} from '@sluice/contracts';
import { DomainError } from '@sluice/core';
import type { GatewayConfig } from '../config.js';

/** The gRPC clients the gateway talks to (promise form, deadlines and request id added). */
export interface GatewayClients {
  identity: PromiseClient<identity.IdentityServiceClient>;
  accounts: PromiseClient<accounts.AccountsServiceClient>;
  webhooks: PromiseClient<webhooks.WebhooksServiceClient>;
  walletAuth: PromiseClient<walletAuth.WalletAuthServiceClient>;
  payments: PromiseClient<payments.PaymentsServiceClient>;
  agents: PromiseClient<agents.AgentsServiceClient>;
  compliance: PromiseClient<compliance.ComplianceServiceClient>;
}

/** What an API token may do: VIEW data, TRANSACT (send payments), MANAGE (config, tokens, customers). */
export type Permission = 'VIEW' | 'TRANSACT' | 'MANAGE';

/** The authenticated caller of a platform route. */
export interface AuthenticatedPlatform {
  id: string;
  environment: 'SANDBOX' | 'PRODUCTION';
  tokenId: string;
  /** Permissions of the API token used. */
  permissions: Permission[];
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every authenticated route. */
    platform: AuthenticatedPlatform;
  }
  interface FastifyContextConfig {
    /**
     * Token permissions that may call the route (any one suffices). Default:
     * GET/HEAD need VIEW or MANAGE; every other method needs MANAGE. Routes
     * that move money declare `permission: 'TRANSACT'`.
     */
    permission?: Permission | Permission[];
    /** No trace span for the route (health probes: a trace every few seconds per pod is noise). */
    untraced?: boolean;
  }
}

/** What every route module receives. */
export interface GatewayDeps {
  clients: GatewayClients;
  logger: Logger;
  /** The gateway's validated config. */
  config: GatewayConfig;
}

/**
 * The Fastify instance a route module registers on: TypeBox type provider, so
 * a route's request body, params and query are typed from its schemas (no casts).
 */
export type ApiInstance = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * A route module: `apps/gateway/src/routes/<name>.routes.ts` default-exports
 * one of these; the gateway registers every module under the version prefix.
 * Handlers throw DomainError (or let a gRPC DomainError through); the gateway's
 * error handler renders it.
 */
export type RouteModule = (app: ApiInstance, deps: GatewayDeps) => Promise<void> | void;

/** Sandbox-only endpoints answer 403 for production platforms. */
export function requireSandbox(request: FastifyRequest): void {
  if (request.platform.environment !== 'SANDBOX') {
    throw new DomainError(
      'PERMISSION_DENIED',
      'SANDBOX_ONLY',
      'This endpoint is only available to sandbox platforms',
    );
  }
}

/** The permissions a route needs (any one suffices): its `config.permission`, else the method's default. */
export function requiredPermissions(method: string, configured?: Permission | Permission[]): Permission[] {
  if (configured) return Array.isArray(configured) ? configured : [configured];
  return method === 'GET' || method === 'HEAD' ? ['VIEW', 'MANAGE'] : ['MANAGE'];
}

/** 403 FORBIDDEN unless the caller's token has one of the permissions. */
export function requirePermission(request: FastifyRequest, ...anyOf: Permission[]): void {
  if (!anyOf.some((p) => request.platform.permissions.includes(p))) {
    throw new DomainError(
      'PERMISSION_DENIED',
      'FORBIDDEN',
      `This API token lacks the ${anyOf.join(' or ')} permission`,
    );
  }
}
