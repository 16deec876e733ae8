import {
  Type,
  commonConfig,
  databaseConfig,
  natsConfig,
  grpcClientConfig,
  metricsConfig,
  GATEWAY_DEFAULT_PORT,
  type Static,
} from '@sluice/config';

/** Default version segment every API route lives under. */
export const DEFAULT_API_BASE_PATH = '/2025-10-13';

/** Hard ceiling of the credential cache: a deleted token stops working within this many ms at worst. */
export const MAX_AUTH_CACHE_TTL_MS = 5000;

/** Shortest CURSOR_SIGNING_KEY accepted. */
export const MIN_CURSOR_KEY_LENGTH = 32;

/** One entry of RATE_LIMIT_PLATFORMS: `<platform id>=<per token>[/<per agent>]`. */
const PLATFORM_LIMIT = 'Platform:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}=[0-9]{1,9}(/[0-9]{1,9})?';

/** Environment of the gateway process (validated at start; a bad variable stops it with its name). */
export const gatewayConfigSchema = Type.Object({
  ...commonConfig,
  ...databaseConfig,
  ...natsConfig,
  ...metricsConfig('gateway'),
  IDENTITY_GRPC_URL: grpcClientConfig('identity').IDENTITY_GRPC_URL!,
  ACCOUNTS_GRPC_URL: grpcClientConfig('accounts').ACCOUNTS_GRPC_URL!,
  WEBHOOK_DISPATCHER_GRPC_URL: grpcClientConfig('webhook-dispatcher').WEBHOOK_DISPATCHER_GRPC_URL!,
  WALLET_AUTH_GRPC_URL: grpcClientConfig('wallet-auth').WALLET_AUTH_GRPC_URL!,
  PAYMENTS_GRPC_URL: grpcClientConfig('payments').PAYMENTS_GRPC_URL!,
  AGENTS_GRPC_URL: grpcClientConfig('agents').AGENTS_GRPC_URL!,
  COMPLIANCE_GRPC_URL: grpcClientConfig('compliance').COMPLIANCE_GRPC_URL!,
  GATEWAY_HOST: Type.String({ default: '127.0.0.1', description: 'address the HTTP server binds' }),
  GATEWAY_PORT: Type.Integer({
    default: GATEWAY_DEFAULT_PORT,
    minimum: 0,
    maximum: 65535,
    description: 'HTTP port (0 picks a free one)',
  }),
  API_BASE_PATH: Type.String({
    default: DEFAULT_API_BASE_PATH,
    pattern: '^(/[A-Za-z0-9._~-]+)+$',
    description:
      'path prefix of every API route: the version segment, optionally behind a prefix (e.g. /api/2025-10-13)',
  }),
  AUTH_CACHE_TTL_MS: Type.Integer({
    default: MAX_AUTH_CACHE_TTL_MS,
    minimum: 0,
    maximum: MAX_AUTH_CACHE_TTL_MS,
    description:
      'how long a verified API credential is cached in memory (0 disables the cache); at most 5000',
  }),
  AUTH_CACHE_MAX_ENTRIES: Type.Integer({
    default: 10000,
    minimum: 1,
    description: 'largest number of cached credentials',
  }),
  IDEMPOTENCY_TTL_HOURS: Type.Integer({
    default: 24,
    minimum: 24,
    maximum: 720,
    description: 'how long a stored Idempotency-Key response is replayed (at least 24 h)',
  }),
  IDEMPOTENCY_LEASE_MS: Type.Integer({
    default: 60000,
    minimum: 1000,
    description: 'how long an in-flight Idempotency-Key claim holds before a crashed claim may be taken over',
  }),
  IDEMPOTENCY_PURGE_INTERVAL_MS: Type.Integer({
    default: 600000,
    minimum: 1000,
    description: 'how often expired Idempotency-Key rows are deleted',
  }),
  BODY_LIMIT_BYTES: Type.Integer({
    default: 1048576,
    minimum: 1024,
    maximum: 16777216,
    description: 'largest accepted request body (413 above)',
  }),
  RPC_DEADLINE_MS: Type.Integer({
    default: 5000,
    minimum: 100,
    description: 'deadline of each gRPC call the gateway makes',
  }),
  TRUST_PROXY: Type.Boolean({
    default: false,
    description:
      'trust the X-Forwarded-For and X-Forwarded-Proto headers of every peer (true only behind a load balancer that sets them and is the only way in): the client address, and whether it came over HTTPS (Strict-Transport-Security)',
  }),
  HSTS_MAX_AGE_SECONDS: Type.Integer({
    default: 31536000,
    minimum: 0,
    maximum: 63072000,
    description:
      'max-age of the Strict-Transport-Security header, sent only on answers to requests that came over HTTPS (a TLS socket, or X-Forwarded-Proto: https with TRUST_PROXY=true); 0 tells browsers to forget it',
  }),
  CORS_ALLOWED_ORIGINS: Type.Optional(
    Type.String({
      description:
        'comma-separated browser origins allowed to call the API cross-origin (exact, e.g. `https://app.example.com`; https, or http on localhost/127.0.0.1/[::1]); unset: CORS is closed, no answer carries Access-Control-Allow-Origin',
    }),
  ),
  SHUTDOWN_DELAY_MS: Type.Integer({
    default: 0,
    minimum: 0,
    maximum: 120000,
    description:
      'on SIGTERM, how long the gateway keeps serving with /readyz answering 503 and each response closing its connection, before it stops accepting (the load balancer takes it out of rotation meanwhile; in Kubernetes about 5000, or a preStop sleep)',
  }),
  SHUTDOWN_GRACE_MS: Type.Integer({
    default: 10000,
    minimum: 0,
    description: 'how long in-flight requests may drain on SIGTERM',
  }),
  MIGRATE_ON_START: Type.Boolean({
    default: true,
    description: 'apply pending migrations of the gateway schema at start',
  }),
  RATE_LIMIT_WINDOW_SECONDS: Type.Integer({
    default: 60,
    minimum: 1,
    maximum: 3600,
    description: 'length of the fixed window every RATE_LIMIT_* count is kept over (seconds)',
  }),
  RATE_LIMIT_PER_TOKEN: Type.Integer({
    default: 1200,
    minimum: 0,
    description: 'requests one API token may make per window, on every replica together (429 above; 0: no limit)',
  }),
  RATE_LIMIT_PER_AGENT: Type.Integer({
    default: 300,
    minimum: 0,
    description: 'requests one agent access token may make per window on /agents/me... (429 above; 0: no limit)',
  }),
  RATE_LIMIT_PER_ADDRESS: Type.Integer({
    default: 120,
    minimum: 0,
    description:
      'requests one source address may make per window to the routes that take no credentials (device-code status and redeem, the OpenAPI document and docs page; not /healthz, /readyz) (429 above; 0: no limit)',
  }),
  MAX_CONNECTIONS_PER_CLIENT: Type.Integer({
    default: 256,
    minimum: 0,
    maximum: 1_000_000,
    description:
      'open connections one peer address may hold; each request on a connection beyond it is 429 TOO_MANY_CONNECTIONS and the connection is closed (the TCP peer: behind a load balancer set it above the balancer\'s pool, or 0, off)',
  }),
  RATE_LIMIT_AUTH_FAILURES: Type.Integer({
    default: 20,
    minimum: 0,
    description:
      'failed authentications (401 for API or agent credentials) one source address may have per window; beyond it, its requests with unverified credentials are 429 without being checked (0: no limit)',
  }),
  RATE_LIMIT_PLATFORMS: Type.String({
    default: '',
    pattern: `^(${PLATFORM_LIMIT}(,${PLATFORM_LIMIT})*)?$`,
    description:
      'limits of given platforms instead of RATE_LIMIT_PER_TOKEN / RATE_LIMIT_PER_AGENT: comma-separated `<platform id>=<per token>[/<per agent>]`, e.g. `Platform:0195f0a4-…=6000/600` (per window, 0: no limit)',
  }),
  RATE_LIMIT_PURGE_INTERVAL_MS: Type.Integer({
    default: 60000,
    minimum: 1000,
    description: 'how often counters of ended rate-limit windows are deleted',
  }),
  CURSOR_SIGNING_KEY: Type.Optional(
    Type.String({
      minLength: 1,
      description: `key (at least ${MIN_CURSOR_KEY_LENGTH} characters, e.g. \`openssl rand -base64 32\`) authenticating list cursors, so a cursor only works for the platform, list and filters it came from; the same on every replica; required when NODE_ENV=production, a random key per process otherwise (cursors then end with the process)`,
    }),
  ),
});

export type GatewayConfig = Static<typeof gatewayConfigSchema>;
