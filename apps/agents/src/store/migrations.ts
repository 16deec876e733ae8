import { Migration } from '@sluice/store';
import type { Constructor } from '@mikro-orm/core';

/**
 * Agents, their device codes (hashes only), the agent-created quotes, the device-code failure
 * counters and the agent actions. An agent row carries its policy (jsonb, bigints as text), its
 * usage counters (reserved under the row's lock) and the hash of its one access token.
 */
class AgentsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE agents (
      id text PRIMARY KEY CONSTRAINT agents_id_form CHECK (id LIKE 'Agent:%'),
      platform_id text NOT NULL,
      environment text NOT NULL CONSTRAINT agents_environment CHECK (environment IN ('SANDBOX', 'PRODUCTION')),
      name text NOT NULL,
      customer_id text NOT NULL,
      platform_customer_id text NOT NULL,
      is_paused boolean NOT NULL DEFAULT false,
      is_connected boolean NOT NULL DEFAULT false,
      policy jsonb NOT NULL,
      usage_day text,
      usage_month text,
      daily_transaction_count bigint NOT NULL DEFAULT 0 CONSTRAINT agents_count_nonneg CHECK (daily_transaction_count >= 0),
      daily_spend bigint NOT NULL DEFAULT 0 CONSTRAINT agents_daily_nonneg CHECK (daily_spend >= 0),
      monthly_spend bigint NOT NULL DEFAULT 0 CONSTRAINT agents_monthly_nonneg CHECK (monthly_spend >= 0),
      token_hash text CONSTRAINT agents_token_hash UNIQUE,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz
    )`);
    this.addSql(`CREATE INDEX agents_platform ON agents (platform_id, created_at DESC, id DESC) WHERE deleted_at IS NULL`);
    this.addSql(`CREATE TABLE device_codes (
      code_hash text PRIMARY KEY,
      agent_id text NOT NULL REFERENCES agents (id),
      expires_at timestamptz NOT NULL,
      redeemed_at timestamptz,
      superseded_at timestamptz,
      created_at timestamptz NOT NULL
    )`);
    this.addSql(`CREATE INDEX device_codes_agent ON device_codes (agent_id)`);
    this.addSql(`CREATE TABLE device_code_failures (
      key text PRIMARY KEY,
      window_start timestamptz NOT NULL,
      failures integer NOT NULL
    )`);
    this.addSql(`CREATE TABLE agent_quotes (
      quote_id text PRIMARY KEY,
      agent_id text NOT NULL REFERENCES agents (id),
      created_at timestamptz NOT NULL
    )`);
    this.addSql(`CREATE TABLE agent_actions (
      id text PRIMARY KEY CONSTRAINT agent_actions_id_form CHECK (id LIKE 'AgentAction:%'),
      platform_id text NOT NULL,
      agent_id text NOT NULL REFERENCES agents (id),
      customer_id text NOT NULL,
      platform_customer_id text NOT NULL,
      type text NOT NULL CONSTRAINT agent_actions_type CHECK (type IN ('EXECUTE_QUOTE', 'TRANSFER_OUT', 'TRANSFER_IN')),
      state text NOT NULL CONSTRAINT agent_actions_state
        CHECK (state IN ('PENDING_APPROVAL', 'EXECUTING', 'APPROVED', 'REJECTED', 'FAILED')),
      quote_id text,
      transfer jsonb,
      description text,
      wallet_signature text,
      signing_request_id text,
      transaction_id text,
      rejection_reason text,
      failure_reason text,
      reserved_day text NOT NULL,
      reserved_month text NOT NULL,
      reserved_amount bigint NOT NULL,
      expires_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT agent_actions_subject CHECK ((type = 'EXECUTE_QUOTE') = (quote_id IS NOT NULL)
        AND (type = 'EXECUTE_QUOTE') = (transfer IS NULL))
    )`);
    this.addSql(`CREATE INDEX agent_actions_agent ON agent_actions (agent_id, created_at DESC, id DESC)`);
    this.addSql(`CREATE INDEX agent_actions_platform_state ON agent_actions (platform_id, state, created_at DESC, id DESC)`);
    this.addSql(`CREATE INDEX agent_actions_open ON agent_actions (state, updated_at) WHERE state IN ('PENDING_APPROVAL', 'EXECUTING')`);
    // A quote has at most one live action: a second execute of it is answered with the first.
    this.addSql(
      `CREATE UNIQUE INDEX agent_actions_live_quote ON agent_actions (quote_id) WHERE quote_id IS NOT NULL AND state NOT IN ('REJECTED', 'FAILED')`,
    );
  }
}

/** The key a transfer action was submitted with: a retry with the same key answers the first action. */
class ActionRequestKeyMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE agent_actions ADD COLUMN request_key text`);
    this.addSql(`CREATE UNIQUE INDEX agent_actions_request_key ON agent_actions (agent_id, request_key) WHERE request_key IS NOT NULL`);
  }
}

/**
 * The key of the request that created an agent (unique per platform: a retry whose answer was lost
 * answers that agent instead of making a second one) and of the request that issued a device code
 * (per agent; several rows carry it when a retry put a fresh code in place of the lost one, the
 * newest is the request's code).
 */
class RequestKeysMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE agents ADD COLUMN request_key text`);
    this.addSql(`CREATE UNIQUE INDEX agents_request_key ON agents (platform_id, request_key) WHERE request_key IS NOT NULL`);
    this.addSql(`ALTER TABLE device_codes ADD COLUMN request_key text`);
    this.addSql(
      `CREATE INDEX device_codes_request_key ON device_codes (agent_id, request_key, created_at DESC) WHERE request_key IS NOT NULL`,
    );
  }
}

/** The refusal an AUTO submission was answered with (a retry with its request key answers it again). */
class ActionRefusalMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE agent_actions ADD COLUMN refusal jsonb`);
  }
}

/** Migrations of the agents schema, in order (the outbox/inbox tables come from the events kit). */
export const migrations: { name: string; class: Constructor<Migration> }[] = [
  { name: '0001_agents', class: AgentsMigration },
  { name: '0002_action_request_key', class: ActionRequestKeyMigration },
  { name: '0003_request_keys', class: RequestKeysMigration },
  { name: '0004_action_refusal', class: ActionRefusalMigration },
];
