import { identity } from '@sluice/contracts';
import { createRpcClient } from '@sluice/rpc';
import type { Composition, ServiceDeps } from '@sluice/runtime';
import type { WebhookDispatcherConfig } from './service.js';
import { PgNotifications } from '@sluice/events';
import {
  DELIVERY_QUEUE_CHANNEL,
  DeliveryRepository,
  ENDPOINT_STATE_CHANNEL,
} from './store/delivery.repository.js';
import { EndpointStateCache } from './app/endpoint-state.cache.js';
import { parseRetrySchedule } from './domain/retry-schedule.js';
import { HttpWebhookSender } from './clients/http-webhook.sender.js';
import { IdentityWebhookTargets } from './clients/identity-webhook-targets.client.js';
import { DeliveryWorker } from './app/delivery.worker.js';
import { EventRelayService } from './app/event-relay.service.js';
import { WebhooksService } from './app/webhooks.service.js';
import { webhookEventConsumers } from './events/webhook-events.consumer.js';
import { OutboxDispatcherEvents } from './events/dispatcher.events.js';
import { webhooksRpc } from './rpc/webhooks.rpc.js';

/** The object graph of a running webhook-dispatcher. */
export interface WebhookDispatcherGraph extends Composition {
  repo: DeliveryRepository;
  worker: DeliveryWorker;
  service: WebhooksService;
  relay: EventRelayService;
}

/** The composition root of the webhook-dispatcher: every object of the service, built once. */
export function composeWebhookDispatcher(deps: ServiceDeps<WebhookDispatcherConfig>): WebhookDispatcherGraph {
  const { config: cfg, orm, clock, logger, bus, outbox, metrics } = deps;
  const identityClient = createRpcClient(identity.IdentityServiceClient, cfg.IDENTITY_GRPC_URL);
  const repo = new DeliveryRepository();
  const targets = new IdentityWebhookTargets(identityClient);
  const sender = new HttpWebhookSender({
    timeoutMs: cfg.WEBHOOK_TIMEOUT_MS,
    allowPrivateTargets: cfg.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    maxResponseBytes: cfg.WEBHOOK_RESPONSE_BODY_LIMIT,
    userAgent: cfg.WEBHOOK_USER_AGENT,
  });
  const events = new OutboxDispatcherEvents(outbox);
  const worker = new DeliveryWorker({
    orm,
    repo,
    targets,
    sender,
    events,
    clock,
    logger,
    schedule: parseRetrySchedule(cfg.WEBHOOK_RETRY_SCHEDULE),
    concurrency: cfg.WEBHOOK_CONCURRENCY,
    pollIntervalMs: cfg.WEBHOOK_POLL_INTERVAL_MS,
    timeoutMs: cfg.WEBHOOK_TIMEOUT_MS,
    retentionDays: cfg.WEBHOOK_RETENTION_DAYS,
    sandboxTimeScale: cfg.SANDBOX_TIME_SCALE,
    disableAfterMs: cfg.WEBHOOK_DISABLE_AFTER_HOURS * 3_600_000,
    metrics,
  });
  const endpoints: EndpointStateCache = new EndpointStateCache({
    repo,
    em: () => orm.em.fork(),
    listening: (): boolean => queue.listening,
  });
  // Every replica's worker hears of a new delivery at once (NOTIFY on insert) instead of polling,
  // and every replica's endpoint cache of a platform's changed endpoint.
  const queue: PgNotifications = new PgNotifications({
    connectionString: orm.config.get('clientUrl')!,
    channels: [DELIVERY_QUEUE_CHANNEL, ENDPOINT_STATE_CHANNEL],
    onNotify: (channel): void => (channel === ENDPOINT_STATE_CHANNEL ? endpoints.clear() : worker.nudge()),
    onReady: () => {
      endpoints.clear();
      worker.nudge();
    },
    logger,
    orm,
  });
  const service = new WebhooksService({ orm, repo, targets, sender, events, clock, logger });
  const relay = new EventRelayService({ repo, clock, logger, endpoints });
  return {
    repo,
    worker,
    service,
    relay,
    consumers: webhookEventConsumers({
      bus,
      orm,
      logger,
      prefix: cfg.EVENT_SUBJECT_PREFIX,
      relay,
      onQueued: () => worker.nudge(),
    }),
    // The delivery worker drains before the identity client closes (close runs after workers stop).
    workers: [worker, { start: () => queue.start(), stop: () => queue.stop() }],
    rpc: [webhooksRpc(service, logger)],
    close: () => identityClient.close(),
  };
}
