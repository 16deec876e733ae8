import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type HookHandlerDoneFunction,
} from 'fastify';
import type { NatsConnection } from '@nats-io/transport-node';
import { DomainError } from '@sluice/core';
import { toJson } from '@sluice/events';
import { withContext, type Logger } from '@sluice/logging';
import type { MikroORM } from '@sluice/store';
import type { GatewayConfig } from './config.js';
import { MAX_AUTH_CACHE_TTL_MS } from './config.js';
import { Authenticator } from './http/auth.hook.js';
import { CredentialCache } from './http/credential.cache.js';
import { installErrorHandling } from './http/error.handler.js';
import { grpcHealthCheck, registerHealthRoutes, type ReadinessCheck } from './http/health.routes.js';
import { registerIdempotency } from './http/idempotency.hook.js';
import { registerOpenApi } from './http/openapi.plugin.js';
import {
  enterRequestContext,
  REQUEST_ID_HEADER,
  requestIdFrom,
  resumeRequestContext,
} from './http/request-context.hook.js';
import { SchemaRegistry } from './http/route-schema.normalizer.js';
import { subscribeTokenRevocations } from './http/token-revocation.subscriber.js';
import {
  requiredPermissions,
  type GatewayClients,
  type GatewayDeps,
  type RouteModule,
} from './http/types.js';
import { createValidatorCompiler } from './http/validator.compiler.js';
import { routeModules } from './routes/index.js';
import {
  MemoryIdempotencyStore,
  PostgresIdempotencyStore,
  type IdempotencyStore,
} from './store/idempotency.repository.js';

export interface BuildGatewayOptions {
  config: GatewayConfig;
  clients: GatewayClients;
  logger: Logger;
  /** The gateway schema's ORM (idempotency keys). Without it keys live in process memory (tests, one local process). */
  orm?: MikroORM;
  /** NATS connection for TOKEN.DELETED events. Without it cached credentials expire by TTL only (≤ 5 s). */
  nats?: NatsConnection;
  /** Route modules to register; default: every module of `src/routes/index.ts`. */
  routes?: Record<string, RouteModule>;
  /** Readiness checks; default: identity gRPC health and (with `orm`) the database. */
  readiness?: Record<string, ReadinessCheck>;
  /** Overrides the idempotency store (default: Postgres with `orm`, else memory). */
  idempotencyStore?: IdempotencyStore;
}

/** What buildGateway decorates the instance with (for tests and main). */
export interface GatewayInternals {
  credentialCache: CredentialCache;
  idempotencyStore: IdempotencyStore;
  /** Method and full URL of every documented API route. */
  apiRoutes: { method: string; url: string }[];
}

declare module 'fastify' {
  interface FastifyInstance {
    gateway: GatewayInternals;
  }
}

function hasBigInt(v: unknown, depth = 0): boolean {
  if (typeof v === 'bigint') return true;
  if (v === null || typeof v !== 'object' || depth > 32) return false;
  return Object.values(v).some((x) => hasBigInt(x, depth + 1));
}

/**
 * Builds the public REST gateway (Fastify 5): request ids and logging context,
 * HTTP Basic authentication through identity (with a ≤ 5 s credential cache
 * dropped on TOKEN.DELETED), permissions, request validation, Idempotency-Key
 * on POST, one error model, the OpenAPI 3.1 document and docs page, health and
 * readiness, and every route module under API_BASE_PATH. The caller listens
 * (or injects) and closes it.
 */
export async function buildGateway(opts: BuildGatewayOptions): Promise<FastifyInstance> {
  const { config, clients, logger, orm, nats } = opts;
  const basePath = config.API_BASE_PATH;

  const app = Fastify({
    loggerInstance: logger as unknown as FastifyBaseLogger,
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
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
  });

  app.setValidatorCompiler(createValidatorCompiler());
  // A reply without a response schema is JSON.stringify'd: int64 values from gRPC (bigint) would crash it.
  app.addHook('preSerialization', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const responses = request.routeOptions.schema?.response as Record<string, unknown> | undefined;
    const status = String(reply.statusCode);
    if (responses && (responses[status] || responses[`${status[0]}xx`] || responses.default)) return payload;
    return hasBigInt(payload) ? (JSON.parse(toJson(payload)) as unknown) : payload;
  });
  installErrorHandling(app, logger, config.BODY_LIMIT_BYTES);

  // JSON only (anything else is 415); an empty body with Content-Type: application/json is "no body", not a parse error.
  const jsonParser = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' || (typeof body === 'string' && body.trim() === '')) done(null, undefined);
    else jsonParser(request, body as string, done);
  });

  const cache = new CredentialCache(
    Math.min(config.AUTH_CACHE_TTL_MS, MAX_AUTH_CACHE_TTL_MS),
    config.AUTH_CACHE_MAX_ENTRIES,
  );
  const authenticator = new Authenticator(clients, cache, logger, config.RPC_DEADLINE_MS);
  const times = { ttlMs: config.IDEMPOTENCY_TTL_HOURS * 3_600_000, leaseMs: config.IDEMPOTENCY_LEASE_MS };
  const store =
    opts.idempotencyStore ??
    (orm ? new PostgresIdempotencyStore(orm, times) : new MemoryIdempotencyStore(times));
  if (!orm && !opts.idempotencyStore)
    logger.warn('no database: Idempotency-Keys are kept in this process only');
  const apiRoutes: GatewayInternals['apiRoutes'] = [];
  app.decorate('gateway', { credentialCache: cache, idempotencyStore: store, apiRoutes });
  app.decorateRequest('platform', null as never);

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

  // Schema normalization + OpenAPI must come before any route.
  const registry = new SchemaRegistry();
  await registerOpenApi(app, { basePath, registry });
  app.addHook('onRoute', (route) => {
    const hidden = (route.schema as { hide?: boolean } | undefined)?.hide;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!hidden && route.url.startsWith(basePath)) {
      for (const m of methods) if (m !== 'HEAD') apiRoutes.push({ method: m, url: route.url });
    }
  });

  // Health and readiness (public, outside the versioned API).
  const checks: Record<string, ReadinessCheck> = {};
  if (!opts.readiness) {
    const identityHealth = grpcHealthCheck(config.IDENTITY_GRPC_URL, 'sluice.identity.v1.IdentityService');
    app.addHook('onClose', async () => identityHealth.close());
    checks.identity = identityHealth.check;
    if (orm) checks.database = async () => void (await orm.em.getConnection().execute('select 1'));
  }
  Object.assign(checks, opts.readiness ?? {});
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  registerHealthRoutes(app, checks, () => closing);

  // Token revocations drop cached credentials at once.
  if (nats) {
    const sub = subscribeTokenRevocations(nats, config.EVENT_SUBJECT_PREFIX, cache, logger);
    app.addHook('onClose', async () => sub.close());
  }

  // Expired idempotency keys are purged periodically (every replica; deletes skip locked rows).
  const purge = () =>
    void store.purgeExpired().then(
      (n) => n > 0 && logger.info({ purged: n }, 'expired Idempotency-Keys purged'),
      (err: unknown) => logger.warn({ err }, 'Idempotency-Key purge failed'),
    );
  const purgeTimer = setInterval(purge, config.IDEMPOTENCY_PURGE_INTERVAL_MS);
  purgeTimer.unref();
  app.addHook('onReady', async () => purge());
  app.addHook('onClose', async () => clearInterval(purgeTimer));

  // The versioned API: authenticated, permission-checked, idempotent POSTs.
  const deps: GatewayDeps = { clients, logger, config: config as unknown as Record<string, unknown> };
  const modules = opts.routes ?? routeModules;
  await app.register(
    async (api) => {
      api.addHook(
        'onRequest',
        (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
          reply.header('cache-control', 'no-store');
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
      registerIdempotency(api, store, logger);
      for (const [name, module] of Object.entries(modules)) {
        await api.register(async (scope) => {
          await module(scope, deps);
        });
        logger.debug({ module: name }, 'route module registered');
      }
    },
    { prefix: basePath },
  );

  return app;
}
