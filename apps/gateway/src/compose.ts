import type { FastifyInstance } from 'fastify';
import type { NatsConnection } from '@nats-io/transport-node';
import { ConfigError } from '@sluice/config';
import { connectBus, type Bus, type EventFanout } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { Lifecycle } from '@sluice/rpc';
import { describeUnreachable } from '@sluice/runtime';
import type { Metrics } from '@sluice/metrics';
import { ensureDatabase, migrate, observePool, openStore, type MikroORM } from '@sluice/store';
import { closeGatewayClients, createGatewayClients } from './clients.js';
import { MAX_AUTH_CACHE_TTL_MS, MIN_CURSOR_KEY_LENGTH, type GatewayConfig } from './config.js';
import { Authenticator } from './http/auth.hook.js';
import { AgentAuthenticator, type AuthenticatedAgent } from './http/agent-auth.js';
import { credentialRevocations } from './http/credential-revocations.js';
import { CredentialCache } from './http/credential.cache.js';
import { HmacCursorCodec, type CursorCodec } from './http/cursor.codec.js';
import { grpcHealthCheck, type ReadinessCheck } from './http/health.routes.js';
import { createHttpApp } from './http/server.js';
import type { GatewayClients, RouteModule } from './http/types.js';
import { routeModules } from './routes/index.js';
import {
  MemoryIdempotencyStore,
  PostgresIdempotencyStore,
  type IdempotencyStore,
} from './store/idempotency.repository.js';
import { GATEWAY_SCHEMA, migrations } from './store/migrations.js';
import { RateLimitStore } from './store/rate-limit.repository.js';

/** What the gateway runs on: its config and logger, and (in a real process) its database and NATS. */
export interface GatewayResources {
  config: GatewayConfig;
  logger: Logger;
  /** The gateway schema's ORM (idempotency keys). Without it keys live in process memory (tests, one local process). */
  orm?: MikroORM;
  /**
   * NATS connection for the credential revocations (TOKEN.DELETED, AGENT_TOKEN.REVOKED, AGENT.UPDATED).
   * Without it cached credentials expire by TTL only (≤ 5 s).
   */
  nats?: NatsConnection;
  /** The gateway's metrics (HTTP routes, gRPC calls, database pool); main.ts serves them on METRICS_PORT. */
  metrics?: Metrics;
}

/** What a test (or another deployment) replaces; each has a default built from the config. */
export interface GatewayAdapters {
  /** gRPC clients of the backends (default: one per backend from the config, closed with the gateway). */
  clients?: GatewayClients;
  /** Route modules (default: every module of `src/routes/index.ts`). */
  routes?: Record<string, RouteModule>;
  /** Readiness checks (default: identity gRPC health and, with `orm`, the database). */
  readiness?: Record<string, ReadinessCheck>;
  /** Idempotency-Key store (default: Postgres with `orm`, else process memory). */
  idempotencyStore?: IdempotencyStore;
  /** List cursors (default: HMAC with CURSOR_SIGNING_KEY, see cursorCodec). */
  cursors?: CursorCodec;
}

/** The gateway's object graph, built once. */
export interface Gateway {
  /** The HTTP app: `listen` in a process, `inject` in tests. */
  app: FastifyInstance;
  clients: GatewayClients;
  credentialCache: CredentialCache;
  /** Verified agent bearer tokens (dropped per agent by AGENT_TOKEN.REVOKED and AGENT.UPDATED). */
  agentCredentialCache: CredentialCache<AuthenticatedAgent>;
  /**
   * The credential revocations' fan-out (with `nats`): the caches are used only while it is live.
   * Started by the app's onReady, stopped by its close.
   */
  revocations?: EventFanout;
  idempotencyStore: IdempotencyStore;
  cursors: CursorCodec;
  /**
   * Graceful stop: /readyz answers 503 at once and every response closes its connection,
   * while requests are still served for `delayMs` (SHUTDOWN_DELAY_MS: the load balancer's
   * time to take the replica out of rotation); then stops accepting, lets in-flight requests
   * finish within `graceMs`, and closes what the composition opened (the credential
   * revocations' fan-out, the purge timer, health and gRPC channels).
   */
  close(graceMs?: number, delayMs?: number): Promise<void>;
}

/**
 * The list cursor codec of the config: HMAC with CURSOR_SIGNING_KEY (required
 * when NODE_ENV=production, so every replica accepts every replica's cursors),
 * otherwise a random key for this process.
 */
export function cursorCodec(config: Pick<GatewayConfig, 'CURSOR_SIGNING_KEY' | 'NODE_ENV'>): CursorCodec {
  const key = config.CURSOR_SIGNING_KEY;
  if (key === undefined) {
    if (config.NODE_ENV === 'production')
      throw new ConfigError([
        { variable: 'CURSOR_SIGNING_KEY', message: 'is required when NODE_ENV=production (openssl rand -base64 32)' },
      ]);
    return HmacCursorCodec.random();
  }
  if (key.length < MIN_CURSOR_KEY_LENGTH)
    throw new ConfigError([
      { variable: 'CURSOR_SIGNING_KEY', message: `must have at least ${MIN_CURSOR_KEY_LENGTH} characters` },
    ]);
  return new HmacCursorCodec(Buffer.from(key, 'utf8'));
}

/**
 * The gateway's composition root: builds the gRPC clients, the credential
 * cache and authenticator, the Idempotency-Key store and its purge timer, the
 * cursor codec, the credential revocations' fan-out, the readiness checks and the
 * Fastify app, once, from the typed config. `main.ts` starts and stops what it
 * returns; tests build the gateway through it with other adapters.
 */
export async function composeGateway(resources: GatewayResources, adapters: GatewayAdapters = {}): Promise<Gateway> {
  const { config, logger, orm, nats, metrics } = resources;
  const ownsClients = adapters.clients === undefined;
  const clients = adapters.clients ?? createGatewayClients(config, metrics);
  const cursors = adapters.cursors ?? cursorCodec(config);

  const credentialCache = new CredentialCache(
    Math.min(config.AUTH_CACHE_TTL_MS, MAX_AUTH_CACHE_TTL_MS),
    config.AUTH_CACHE_MAX_ENTRIES,
  );
  const authenticator = new Authenticator(clients, credentialCache, logger, config.RPC_DEADLINE_MS);
  const agentCredentialCache = new CredentialCache<AuthenticatedAgent>(
    Math.min(config.AUTH_CACHE_TTL_MS, MAX_AUTH_CACHE_TTL_MS),
    config.AUTH_CACHE_MAX_ENTRIES,
  );
  const agentAuthenticator = new AgentAuthenticator(clients, agentCredentialCache, logger, config.RPC_DEADLINE_MS);

  const times = { ttlMs: config.IDEMPOTENCY_TTL_HOURS * 3_600_000, leaseMs: config.IDEMPOTENCY_LEASE_MS };
  const idempotencyStore =
    adapters.idempotencyStore ?? (orm ? new PostgresIdempotencyStore(orm, times) : new MemoryIdempotencyStore(times));
  if (!orm && !adapters.idempotencyStore) logger.warn('no database: Idempotency-Keys are kept in this process only');
  // Rate limits are counted in Postgres only (shared by the replicas); without a database nothing is limited.
  const rateLimits = orm ? new RateLimitStore(orm, config.RATE_LIMIT_WINDOW_SECONDS) : undefined;
  if (!orm) logger.warn('no database: requests are not rate limited');

  const closers: (() => void | Promise<void>)[] = [];
  let readiness = adapters.readiness;
  if (!readiness) {
    const identityHealth = grpcHealthCheck(config.IDENTITY_GRPC_URL, 'sluice.identity.v1.IdentityService');
    closers.push(() => identityHealth.close());
    readiness = { identity: identityHealth.check };
    if (orm) readiness.database = async () => void (await orm.em.getConnection().execute('select 1'));
  }

  let draining = false;
  const app = await createHttpApp({
    draining: () => draining,
    config,
    logger,
    clients,
    authenticator,
    agentAuthenticator,
    idempotencyStore,
    cursors,
    routes: adapters.routes ?? routeModules,
    readiness,
    ...(metrics ? { metrics } : {}),
    ...(rateLimits ? { rateLimits } : {}),
  });

  // Credential revocations drop cached credentials at once, on every replica; the caches are used
  // only while the fan-out is live (from onReady until close).
  const revocations = nats
    ? credentialRevocations(
        { api: credentialCache, agent: agentCredentialCache },
        { nc: nats, prefix: config.EVENT_SUBJECT_PREFIX, logger },
      )
    : undefined;
  if (revocations) {
    app.addHook('onReady', async () => revocations.worker.start());
    closers.push(() => revocations.worker.stop());
  }

  // Expired idempotency keys are purged periodically (every replica; deletes skip locked rows).
  const purge = () =>
    void idempotencyStore.purgeExpired().then(
      (n) => n > 0 && logger.info({ purged: n }, 'expired Idempotency-Keys purged'),
      (err: unknown) => logger.warn({ err }, 'Idempotency-Key purge failed'),
    );
  const purgeTimer = setInterval(purge, config.IDEMPOTENCY_PURGE_INTERVAL_MS);
  purgeTimer.unref();
  closers.push(() => clearInterval(purgeTimer));
  app.addHook('onReady', async () => purge());

  // Counters of ended rate-limit windows are deleted periodically (every replica; a plain DELETE of old rows).
  if (rateLimits) {
    const purgeCounters = () =>
      void rateLimits.purge().catch((err: unknown) => logger.warn({ err }, 'rate-limit counter purge failed'));
    const counterTimer = setInterval(purgeCounters, config.RATE_LIMIT_PURGE_INTERVAL_MS);
    counterTimer.unref();
    closers.push(() => clearInterval(counterTimer));
  }

  if (ownsClients) closers.push(() => closeGatewayClients(clients));
  app.addHook('onClose', async () => {
    for (const close of [...closers].reverse()) await close();
  });

  return {
    app,
    clients,
    credentialCache,
    agentCredentialCache,
    ...(revocations ? { revocations: revocations.fanout } : {}),
    idempotencyStore,
    cursors,
    async close(graceMs = config.SHUTDOWN_GRACE_MS, delayMs = config.SHUTDOWN_DELAY_MS) {
      // Readiness false first: keep serving (connections closing after each response) while
      // the load balancer takes this replica out of rotation, then stop accepting and drain.
      draining = true;
      if (delayMs > 0) {
        logger.info({ delayMs }, 'draining: /readyz is 503; still serving until the delay ends');
        await new Promise((r) => setTimeout(r, delayMs));
      }
      const timer = setTimeout(() => {
        logger.warn('grace period over; closing remaining connections');
        app.server.closeAllConnections();
      }, graceMs);
      timer.unref();
      await app.close();
      clearTimeout(timer);
    },
  };
}

/** The gateway's Fastify app alone, built by the composition root (closing it closes what the composition opened). */
export async function buildGateway(
  options: GatewayResources & GatewayAdapters,
): Promise<FastifyInstance> {
  const { config, logger, orm, nats, ...adapters } = options;
  return (await composeGateway({ config, logger, ...(orm ? { orm } : {}), ...(nats ? { nats } : {}) }, adapters)).app;
}

/** Opens the gateway schema's database (created and migrated as configured). */
export async function openGatewayDatabase(config: GatewayConfig, logger: Logger): Promise<MikroORM> {
  let orm: MikroORM;
  try {
    await ensureDatabase(config.DATABASE_URL);
    orm = await openStore({
      databaseUrl: config.DATABASE_URL,
      schema: GATEWAY_SCHEMA,
      entities: [],
      migrations,
      poolMax: config.DATABASE_POOL_MAX,
      acquireTimeoutMs: config.DATABASE_ACQUIRE_TIMEOUT_MS,
      preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
      logger,
    });
    await orm.em.getConnection().execute('select 1');
  } catch (err) {
    throw describeUnreachable('Postgres', config.DATABASE_URL, err);
  }
  return orm;
}

/**
 * Opens what a gateway process runs on: the database (migrated when
 * MIGRATE_ON_START, its pool measured into `metrics`) and NATS, each
 * registered on `life` for shutdown.
 */
export async function openGatewayResources(
  config: GatewayConfig,
  logger: Logger,
  life: Lifecycle,
  metrics?: Metrics,
): Promise<GatewayResources & { orm: MikroORM; nats: NatsConnection }> {
  const orm = await openGatewayDatabase(config, logger);
  life.onShutdown('database', () => orm.close());
  if (metrics) observePool(orm, metrics, logger);
  if (config.MIGRATE_ON_START) await migrate(orm, GATEWAY_SCHEMA, logger);
  let bus: Bus;
  try {
    bus = await connectBus(config.NATS_URL, 'gateway', logger);
  } catch (err) {
    throw describeUnreachable('NATS', config.NATS_URL, err);
  }
  life.onShutdown('nats', () => bus.close());
  return { config, logger, orm, nats: bus.nc, ...(metrics ? { metrics } : {}) };
}
