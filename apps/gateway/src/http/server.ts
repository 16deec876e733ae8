import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type HookHandlerDoneFunction,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { DomainError } from '@sluice/core';
import { toJson } from '@sluice/events';
import { withContext, type Logger } from '@sluice/logging';
import type { GatewayConfig } from '../config.js';
import type { Authenticator } from './auth.hook.js';
import { agentUnauthorized, type AgentAuthenticator } from './agent-auth.js';
import type { CredentialCache } from './credential.cache.js';
import { registerCursors, type CursorCodec } from './cursor.codec.js';
import { installEdgeInput, MAX_PATH_SEGMENT_LENGTH, refuseOversizedBodies, refuseUnexpectedBodies } from './edge-input.js';
import { frameworkErrorHandler, handleClientError, installErrorHandling } from './error.handler.js';
import { registerHealthRoutes, type ReadinessCheck } from './health.routes.js';
import { registerIdempotency } from './idempotency.hook.js';
import { registerHttpMetrics } from './metrics.hook.js';
import type { Metrics } from '@sluice/metrics';
import { registerOpenApi } from './openapi.plugin.js';
import {
  endRequestSpan,
  enterRequestContext,
  REQUEST_ID_HEADER,
  requestIdFrom,
  resumeRequestContext,
} from './request-context.hook.js';
import { SchemaRegistry } from './route-schema.normalizer.js';
import { parseAllowedOrigins, registerSecurity, SecurityHeaders } from './security.plugin.js';
import { requiredPermissions, type GatewayClients, type RouteModule } from './types.js';
import { createValidatorCompiler } from './validator.compiler.js';
import { serializersCompiledOnFirstUse } from './lazy-schemas.js';
import type { IdempotencyStore } from '../store/idempotency.repository.js';
import type { RateLimitStore } from '../store/rate-limit.repository.js';
import { registerRateLimits } from './rate-limit.hook.js';
import { limitConnectionsPerClient } from './connection-limit.js';

/** What the HTTP app is built from (the composition root makes every part). */
export interface HttpAppParts {
  config: GatewayConfig;
  logger: Logger;
  clients: GatewayClients;
  authenticator: Authenticator;
  /** Bearer tokens of agents (`/agents/me...`); without it agent routes answer 401. */
  agentAuthenticator?: AgentAuthenticator;
  idempotencyStore: IdempotencyStore;
  cursors: CursorCodec;
  routes: Record<string, RouteModule>;
  readiness: Record<string, ReadinessCheck>;
  /** RED metrics per route (served by main.ts on METRICS_PORT, never on this app). */
  metrics?: Metrics;
  /** Rate-limit counters shared by the replicas (rate-limit.hook.ts); without it nothing is limited. */
  rateLimits?: RateLimitStore;
  /**
   * True once shutdown began (Gateway.close): /readyz answers 503 and every response closes
   * its connection, while requests are still served, until the server stops accepting.
   */
  draining?: () => boolean;
}

/** What the app is decorated with (tests read it). */
export interface GatewayInternals {
  credentialCache: CredentialCache;
  /** Verified agent bearer tokens (absent without an agent authenticator). */
  agentCredentialCache?: CredentialCache<{ tokenId: string }>;
  idempotencyStore: IdempotencyStore;
  /** Method and full URL of every documented API route. */
  apiRoutes: { method: string; url: string }[];
  /**
   * Compiles every route's validators and response serializers now (they compile on first use:
   * lazy-schemas.ts); throws what a broken schema would have thrown at its first request.
   * Returns how many there are.
   */
  compileSchemas(): number;
}

declare module 'fastify' {
  interface FastifyInstance {
    gateway: GatewayInternals;
  }
}

/** A route without a query schema takes no query parameters (an unknown one is 400, not ignored). */
const NoQuery = Type.Object({}, { additionalProperties: false });

function hasBigInt(v: unknown, depth = 0): boolean {
  if (typeof v === 'bigint') return true;
  if (v === null || typeof v !== 'object' || depth > 32) return false;
  return Object.values(v).some((x) => hasBigInt(x, depth + 1));
}

/**
 * The public REST gateway's Fastify app: security headers and CORS
 * (security.plugin.ts), request ids and logging context, the
 * edge input rules (edge-input.ts), HTTP Basic authentication and permissions,
 * request validation, Idempotency-Key on POST, authenticated list cursors, one
 * error model (also for what the router and the HTTP parser refuse), the
 * OpenAPI 3.1 document and docs page, health and readiness, and every route
 * module under API_BASE_PATH. The caller listens (or injects) and closes it.
 */
export async function createHttpApp(parts: HttpAppParts): Promise<FastifyInstance> {
  const { config, logger, clients, authenticator, idempotencyStore, cursors } = parts;
  const basePath = config.API_BASE_PATH;
  const securityHeaders = new SecurityHeaders(config.HSTS_MAX_AGE_SECONDS);
  const allowedOrigins = parseAllowedOrigins(config.CORS_ALLOWED_ORIGINS);

  // Validators and serializers compile on a route's first use, not at start-up (lazy-schemas.ts).
  const deferred: Array<() => void> = [];
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    schemaController: { compilersFactory: { buildSerializer: serializersCompiledOnFirstUse(deferred) } },
    // One line per request is logged by the onResponse hook below, with the platform id.
    logController: new LogController({ disableRequestLogging: true }),
    // Request id: the client's X-Request-Id when well-formed, else a new UUID.
    genReqId: (req) => requestIdFrom(req.headers[REQUEST_ID_HEADER]),
    requestIdHeader: false,
    // Log lines take the request id and platform id from the logging context.
    childLoggerFactory: (parent, _bindings, childOpts) => parent.child({}, childOpts),
    bodyLimit: config.BODY_LIMIT_BYTES,
    trustProxy: config.TRUST_PROXY,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_SEGMENT_LENGTH },
    frameworkErrors: frameworkErrorHandler(config.BODY_LIMIT_BYTES, securityHeaders),
    clientErrorHandler: handleClientError,
  });

  // First, so every answer carries the security headers (and CORS, when configured).
  await registerSecurity(app, { headers: securityHeaders, allowedOrigins });
  app.setValidatorCompiler(createValidatorCompiler(deferred));
  // A reply without a response schema is JSON.stringify'd: int64 values from gRPC (bigint) would crash it.
  app.addHook('preSerialization', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const responses = request.routeOptions.schema?.response as Record<string, unknown> | undefined;
    const status = String(reply.statusCode);
    if (responses && (responses[status] || responses[`${status[0]}xx`] || responses.default)) return payload;
    return hasBigInt(payload) ? (JSON.parse(toJson(payload)) as unknown) : payload;
  });
  installErrorHandling(app, logger, config.BODY_LIMIT_BYTES);

  const apiRoutes: GatewayInternals['apiRoutes'] = [];
  app.decorate('gateway', {
    credentialCache: authenticator.cache,
    ...(parts.agentAuthenticator ? { agentCredentialCache: parts.agentAuthenticator.cache } : {}),
    idempotencyStore,
    apiRoutes,
    compileSchemas: () => {
      for (const compile of deferred) compile();
      return deferred.length;
    },
  });
  app.decorateRequest('platform', null as never);
  app.decorateRequest('agent', null);

  // Every request: id echoed, logging context entered; one line when it completes.
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    enterRequestContext(request, { requestId: request.id }, done);
  });
  app.addHook(
    'preValidation',
    (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) =>
      resumeRequestContext(request, done),
  );
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const platformId = (request.platform as { id?: string } | null)?.id;
    endRequestSpan(request, reply.statusCode, platformId);
    withContext({ requestId: request.id, platformId }, () =>
      logger.info(
        {
          method: request.method,
          route: request.routeOptions.url ?? 'unmatched',
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
        },
        'request completed',
      ),
    );
    done();
  });
  if (parts.metrics) registerHttpMetrics(app, parts.metrics);
  limitConnectionsPerClient(app, { perClient: config.MAX_CONNECTIONS_PER_CLIENT, logger });
  if (parts.rateLimits)
    registerRateLimits(app, {
      store: parts.rateLimits,
      config,
      logger,
      credentialCache: authenticator.cache,
      ...(parts.agentAuthenticator ? { agentCredentialCache: parts.agentAuthenticator.cache } : {}),
    });
  refuseOversizedBodies(app);
  installEdgeInput(app);

  // Schema normalization + OpenAPI must come before any route.
  const registry = new SchemaRegistry();
  await registerOpenApi(app, { basePath, registry, bodyLimit: config.BODY_LIMIT_BYTES });
  app.addHook('onRoute', (route) => {
    const hidden = (route.schema as { hide?: boolean } | undefined)?.hide;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!hidden && route.url.startsWith(basePath)) {
      for (const m of methods) if (m !== 'HEAD') apiRoutes.push({ method: m, url: route.url });
    }
  });

  // Health and readiness (public, outside the versioned API).
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  const draining = parts.draining ?? (() => false);
  const leaving = () => closing || draining();
  registerHealthRoutes(app, parts.readiness, leaving);
  // While leaving, no connection is kept alive: its client opens the next one elsewhere.
  app.addHook('onSend', async (_request, reply) => {
    if (leaving()) reply.header('connection', 'close');
  });

  // The versioned API: authenticated, permission-checked, validated, idempotent POSTs, authenticated cursors.
  const deps = { clients, logger, config };
  await app.register(
    async (api) => {
      api.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, querystring: route.schema?.querystring ?? NoQuery };
      });
      api.addHook(
        'onRequest',
        (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
          reply.header('cache-control', 'no-store');
          const auth = request.routeOptions.config.auth ?? 'platform';
          if (auth === 'none') {
            done();
            return;
          }
          if (auth === 'agent') {
            // Agent routes take only an agent's bearer token (Basic is a 401 here, as Bearer is elsewhere).
            if (!parts.agentAuthenticator) return done(agentUnauthorized() as unknown as FastifyError);
            parts.agentAuthenticator.authenticate(request.headers.authorization).then(
              (agent) => {
                request.agent = agent;
                request.platform = { id: agent.platformId, environment: agent.environment, tokenId: agent.id, permissions: [] };
                enterRequestContext(request, { platformId: agent.platformId }, done);
              },
              (err: unknown) => done(err as FastifyError),
            );
            return;
          }
          authenticator.authenticate(request.headers.authorization).then(
            (platform) => {
              request.platform = platform;
              const needed = requiredPermissions(request.method, request.routeOptions.config.permission);
              if (!needed.some((p) => platform.permissions.includes(p))) {
                done(
                  new DomainError(
                    'PERMISSION_DENIED',
                    'FORBIDDEN',
                    `This API token lacks the ${needed.join(' or ')} permission`,
                  ) as unknown as FastifyError,
                );
                return;
              }
              enterRequestContext(request, { platformId: platform.id }, done);
            },
            (err: unknown) => done(err as FastifyError),
          );
        },
      );
      refuseUnexpectedBodies(api);
      registerIdempotency(api, idempotencyStore, logger, { leaseMs: config.IDEMPOTENCY_LEASE_MS });
      registerCursors(api, cursors);
      for (const [name, module] of Object.entries(parts.routes)) {
        await api.register(async (scope) => {
          await module(scope.withTypeProvider<TypeBoxTypeProvider>(), deps);
        });
        logger.debug({ module: name }, 'route module registered');
      }
    },
    { prefix: basePath },
  );

  return app;
}
