import { Migration } from '@sluice/store';
import type { Constructor } from '@mikro-orm/core';

/** Gateway schema name (tables are reached through the connection's search_path). */
export const GATEWAY_SCHEMA = 'gateway';

class IdempotencyKeysMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE idempotency_keys (
        platform_id       text        NOT NULL,
        idempotency_key   text        NOT NULL,
        request_method    text        NOT NULL,
        request_path      text        NOT NULL,
        request_hash      text        NOT NULL,
        state             text        NOT NULL CHECK (state IN ('IN_PROGRESS', 'COMPLETED')),
        owner_request_id  text        NOT NULL,
        locked_until      timestamptz NOT NULL,
        response_status   integer,
        response_headers  jsonb,
        response_body     text,
        created_at        timestamptz NOT NULL DEFAULT now(),
        completed_at      timestamptz,
        expires_at        timestamptz NOT NULL,
        PRIMARY KEY (platform_id, idempotency_key)
      )`);
    this.addSql(`CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at)`);
  }
}

/**
 * Request counters of the rate limiter (store/rate-limit.repository.ts): one row per key and fixed window.
 * UNLOGGED: counters are not money; a crash of Postgres empties the table (every client starts a fresh
 * window) and replicas do not receive it, which is acceptable for a limiter and saves the WAL write of
 * every request. fillfactor leaves room in each page so the per-request `count + 1` is a HOT update.
 */
class RateLimitCountersMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE UNLOGGED TABLE rate_limit_counters (
        key           text        NOT NULL,
        window_start  timestamptz NOT NULL,
        count         integer     NOT NULL,
        PRIMARY KEY (key, window_start)
      ) WITH (fillfactor = 70)`);
  }
}

/** Migrations of the gateway schema, in order; never edit one that has landed. */
export const migrations: { name: string; class: Constructor<Migration> }[] = [
  { name: '0001_idempotency_keys', class: IdempotencyKeysMigration },
  { name: '0095_rate_limit_counters', class: RateLimitCountersMigration },
];
