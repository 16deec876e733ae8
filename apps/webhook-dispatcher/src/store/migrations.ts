import { Migration } from '@sluice/store';
import type { Constructor } from '@mikro-orm/core';

class CreateDeliveries extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE webhook_deliveries (
      seq bigserial NOT NULL UNIQUE,
      id text PRIMARY KEY,
      webhook_id text NOT NULL UNIQUE,
      platform_id text NOT NULL,
      event_id text,
      type text NOT NULL,
      origin text NOT NULL CHECK (origin IN ('EVENT', 'TEST')),
      payload text NOT NULL,
      status text NOT NULL CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED', 'SKIPPED')),
      attempt_count integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      lease_owner text,
      lease_until timestamptz,
      url text,
      last_attempt_at timestamptz,
      last_response_status integer,
      last_error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      completed_at timestamptz,
      CHECK (status <> 'PENDING' OR next_attempt_at IS NOT NULL)
    )`);
    this.addSql(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, seq) WHERE status = 'PENDING'`,
    );
    this.addSql(
      `CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (platform_id, lease_until) WHERE status = 'PENDING' AND lease_until IS NOT NULL`,
    );
    this.addSql(`CREATE INDEX webhook_deliveries_platform ON webhook_deliveries (platform_id, seq)`);
    this.addSql(
      `CREATE INDEX webhook_deliveries_completed ON webhook_deliveries (completed_at) WHERE status <> 'PENDING'`,
    );
    this.addSql(`CREATE TABLE webhook_delivery_attempts (
      id bigserial PRIMARY KEY,
      delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      attempt integer NOT NULL,
      url text NOT NULL,
      attempted_at timestamptz NOT NULL,
      duration_ms integer NOT NULL,
      response_status integer,
      response_body text,
      error text,
      succeeded boolean NOT NULL
    )`);
    this.addSql(
      `CREATE INDEX webhook_delivery_attempts_delivery ON webhook_delivery_attempts (delivery_id, attempt)`,
    );
  }
}

/**
 * Request–response webhooks (INCOMING_PAYMENT.PENDING): one attempt, whose answer is relayed back
 * to the event's owner (INCOMING_PAYMENT.APPROVAL_ANSWERED) in the transaction that records it.
 */
class AnsweredDeliveries extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE webhook_deliveries ADD COLUMN answered boolean NOT NULL DEFAULT false`);
  }
}

/**
 * What the dispatcher knows of each platform's endpoint (from identity's PLATFORM.CREATED and
 * PLATFORM_CONFIG.UPDATED events, and from identity's answers): an event of a platform known to have
 * no endpoint costs no delivery row, claim or identity call. `as_of` orders the facts.
 */
class WebhookPlatforms extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE webhook_platforms (
      platform_id text PRIMARY KEY,
      has_endpoint boolean NOT NULL,
      as_of timestamptz NOT NULL
    )`);
  }
}

/**
 * Endpoint health: since when every attempt to a platform's endpoint has failed, and whether (and why)
 * the dispatcher disabled it (410 Gone, or failing for WEBHOOK_DISABLE_AFTER_HOURS).
 */
class EndpointHealth extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE webhook_platforms ADD COLUMN failing_since timestamptz,
      ADD COLUMN disabled_at timestamptz, ADD COLUMN disabled_reason text`);
  }
}

/**
 * The delivery log: each delivery's resource (`data.id` of its body, for filtering) and where its
 * current round of the retry schedule started (a redelivery starts a new round).
 */
class DeliveryLog extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE webhook_deliveries
      ADD COLUMN resource_id text GENERATED ALWAYS AS ((payload::jsonb) -> 'data' ->> 'id') STORED,
      ADD COLUMN round_start integer NOT NULL DEFAULT 0`);
    this.addSql(
      `CREATE INDEX webhook_deliveries_log ON webhook_deliveries (platform_id, created_at DESC, id DESC)`,
    );
    this.addSql(`CREATE INDEX webhook_deliveries_resource ON webhook_deliveries (platform_id, resource_id)`);
  }
}

/**
 * The W3C `traceparent` of the event's consumer span (NULL when tracing is off): each HTTP attempt of the
 * delivery, made later by the worker, continues the trace of the request that caused the event.
 */
class DeliveryTrace extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE webhook_deliveries ADD COLUMN traceparent text`);
  }
}

/** Migrations of the webhooks schema, in order (the outbox/inbox tables come from the events kit). */
export const migrations: { name: string; class: Constructor<Migration> }[] = [
  { name: '0001_webhook_deliveries', class: CreateDeliveries },
  { name: '0002_answered_deliveries', class: AnsweredDeliveries },
  { name: '0003_webhook_platforms', class: WebhookPlatforms },
  { name: '0004_endpoint_health', class: EndpointHealth },
  { name: '0005_delivery_log', class: DeliveryLog },
  { name: '0006_delivery_trace', class: DeliveryTrace },
];
