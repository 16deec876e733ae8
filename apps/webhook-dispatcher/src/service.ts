import { Type, grpcClientConfig } from '@sluice/config';
import { identity } from '@sluice/contracts';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import type { ServiceDeps, ServiceSpec, Worker, serviceConfigSchema } from '@sluice/runtime';
import type { Static } from '@sluice/config';
import { migrations } from './store/migrations.js';
import { DeliveryRepository } from './store/delivery.repository.js';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from './domain/retry-schedule.js';
import { WebhookSender } from './delivery/webhook-sender.js';
import { IdentityWebhookTargets } from './delivery/webhook-target.client.js';
import { DeliveryWorker } from './delivery/delivery.worker.js';
import { WebhooksService } from './delivery/webhooks.service.js';
import { webhookEventConsumers } from './events/webhook-events.consumer.js';
import { webhooksRpc } from './rpc/webhooks.rpc.js';

const DURATION_LIST = '^\\s*\\d+(\\.\\d+)?(ms|s|m|h)(\\s*,\\s*\\d+(\\.\\d+)?(ms|s|m|h))*\\s*$';

const config = Type.Object({
  ...grpcClientConfig('identity'),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: Type.Boolean({
    default: false,
    description:
      'allow webhook endpoints on private, loopback, link-local and other non-public addresses (local runs only)',
  }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({
    default: 10_000,
    minimum: 100,
    maximum: 120_000,
    description: 'timeout of one webhook HTTP attempt',
  }),
  WEBHOOK_RETRY_SCHEDULE: Type.String({
    default: DEFAULT_RETRY_SCHEDULE,
    pattern: DURATION_LIST,
    description: 'delays between webhook attempts (ms, s, m, h), ±20 % jitter; FAILED after the last',
  }),
  WEBHOOK_CONCURRENCY: Type.Integer({
    default: 16,
    minimum: 1,
    maximum: 512,
    description: 'platforms a dispatcher replica delivers to at once',
  }),
  WEBHOOK_POLL_INTERVAL_MS: Type.Integer({
    default: 500,
    minimum: 10,
    maximum: 60_000,
    description: 'how often the delivery worker looks for due deliveries',
  }),
  WEBHOOK_RESPONSE_BODY_LIMIT: Type.Integer({
    default: 4096,
    minimum: 0,
    maximum: 1_048_576,
    description: 'bytes of an endpoint response body kept',
  }),
  WEBHOOK_RETENTION_DAYS: Type.Integer({
    default: 30,
    minimum: 0,
    maximum: 3650,
    description:
      'finished webhook deliveries (and their attempts) are deleted after this many days; 0 keeps them',
  }),
  WEBHOOK_USER_AGENT: Type.String({
    default: 'Sluice-Webhooks/1.0',
    minLength: 1,
    description: 'User-Agent of webhook requests',
  }),
});

type Config = Static<ReturnType<typeof serviceConfigSchema<typeof config>>> & {
  IDENTITY_GRPC_URL: string;
  WEBHOOK_ALLOW_PRIVATE_TARGETS: boolean;
  WEBHOOK_TIMEOUT_MS: number;
  WEBHOOK_RETRY_SCHEDULE: string;
  WEBHOOK_CONCURRENCY: number;
  WEBHOOK_POLL_INTERVAL_MS: number;
  WEBHOOK_RESPONSE_BODY_LIMIT: number;
  WEBHOOK_USER_AGENT: string;
  WEBHOOK_RETENTION_DAYS: number;
};

interface Components {
  identityClient: PromiseClient<identity.IdentityServiceClient>;
  repo: DeliveryRepository;
  worker: DeliveryWorker;
  service: WebhooksService;
}

// The spec's factories (rpc, consumers, workers) share one set of components per running instance.
const built = new WeakMap<object, Components>();

function components(deps: ServiceDeps<Config>): Components {
  let c = built.get(deps);
  if (c) return c;
  const cfg = deps.config;
  const identityClient = createRpcClient(identity.IdentityServiceClient, cfg.IDENTITY_GRPC_URL);
  const repo = new DeliveryRepository();
  const targets = new IdentityWebhookTargets(identityClient);
  const sender = new WebhookSender({
    timeoutMs: cfg.WEBHOOK_TIMEOUT_MS,
    allowPrivateTargets: cfg.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    maxResponseBytes: cfg.WEBHOOK_RESPONSE_BODY_LIMIT,
    userAgent: cfg.WEBHOOK_USER_AGENT,
  });
  const worker = new DeliveryWorker({
    orm: deps.orm,
    repo,
    targets,
    sender,
    clock: deps.clock,
    logger: deps.logger,
    schedule: parseRetrySchedule(cfg.WEBHOOK_RETRY_SCHEDULE),
    concurrency: cfg.WEBHOOK_CONCURRENCY,
    pollIntervalMs: cfg.WEBHOOK_POLL_INTERVAL_MS,
    timeoutMs: cfg.WEBHOOK_TIMEOUT_MS,
    retentionDays: cfg.WEBHOOK_RETENTION_DAYS,
  });
  const service = new WebhooksService({
    orm: deps.orm,
    repo,
    targets,
    sender,
    clock: deps.clock,
    logger: deps.logger,
  });
  c = { identityClient, repo, worker, service };
  built.set(deps, c);
  return c;
}

/**
 * The webhook-dispatcher: turns public webhook events of every domain into
 * signed deliveries to the platform's endpoint (retried, recorded) and serves
 * sluice.webhooks.v1.WebhooksService (SendTestWebhook, GetWebhookDelivery).
 */
export const webhookDispatcherService: ServiceSpec<typeof config> = {
  name: 'webhook-dispatcher',
  schema: 'webhooks',
  domain: 'webhooks',
  config,
  entities: [],
  migrations,
  consumers: (deps) => {
    const c = components(deps as ServiceDeps<Config>);
    return webhookEventConsumers({
      bus: deps.bus,
      orm: deps.orm,
      logger: deps.logger,
      clock: deps.clock,
      prefix: deps.config.EVENT_SUBJECT_PREFIX,
      repo: c.repo,
      onQueued: () => c.worker.nudge(),
    });
  },
  workers: (deps) => {
    const c = components(deps as ServiceDeps<Config>);
    const identityClient: Worker = { start() {}, stop: async () => c.identityClient.close() };
    // Stopped in reverse order: the delivery worker drains before the identity client closes.
    return [identityClient, c.worker];
  },
  rpc: (deps) => [webhooksRpc(components(deps as ServiceDeps<Config>).service, deps.logger)],
};
