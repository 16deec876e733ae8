import { Type, grpcClientConfig, sandboxConfig } from '@sluice/config';
import { defineService, type ServiceConfig } from '@sluice/runtime';
import { migrations } from './store/migrations.js';
import { DEFAULT_RETRY_SCHEDULE } from './domain/retry-schedule.js';
import { composeWebhookDispatcher } from './compose.js';

const DURATION_LIST = '^\\s*\\d+(\\.\\d+)?(ms|s|m|h)(\\s*,\\s*\\d+(\\.\\d+)?(ms|s|m|h))*\\s*$';

const config = Type.Object({
  ...grpcClientConfig('identity'),
  SANDBOX_TIME_SCALE: sandboxConfig.SANDBOX_TIME_SCALE,
  WEBHOOK_DISABLE_AFTER_HOURS: Type.Number({
    default: 72,
    exclusiveMinimum: 0,
    maximum: 8760,
    description:
      'an endpoint that has failed every attempt for this long is disabled (WEBHOOK_ENDPOINT.DISABLED); 410 Gone disables it at once',
  }),
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
    description:
      'delays between webhook attempts (ms, s, m, h), ±20 % jitter, × SANDBOX_TIME_SCALE for sandbox platforms, never less than Retry-After; FAILED after the last',
  }),
  WEBHOOK_CONCURRENCY: Type.Integer({
    default: 16,
    minimum: 1,
    maximum: 512,
    description: 'platforms a dispatcher replica delivers to at once',
  }),
  WEBHOOK_POLL_INTERVAL_MS: Type.Integer({
    default: 10_000,
    minimum: 10,
    maximum: 60_000,
    description:
      'safety poll of the delivery worker: new deliveries wake it at once (LISTEN/NOTIFY) and it sleeps until the next retry is due, so this only bounds how late a lost notification is noticed',
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

/** The validated configuration of the webhook-dispatcher. */
export type WebhookDispatcherConfig = ServiceConfig<typeof config>;

/**
 * The webhook-dispatcher: turns public webhook events of every domain into
 * signed deliveries to the platform's endpoint (retried, recorded) and serves
 * sluice.webhooks.v1.WebhooksService (SendTestWebhook, GetWebhookDelivery).
 */
export const webhookDispatcherService = defineService({
  name: 'webhook-dispatcher',
  schema: 'webhooks',
  domain: 'webhooks',
  config,
  migrations,
  compose: composeWebhookDispatcher,
});
