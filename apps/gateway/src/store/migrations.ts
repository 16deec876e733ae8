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

/** Migrations of the gateway schema, in order; never edit one that has landed. */
export const migrations: { name: string; class: Constructor<Migration> }[] = [
  { name: '0001_idempotency_keys', class: IdempotencyKeysMigration },
];
