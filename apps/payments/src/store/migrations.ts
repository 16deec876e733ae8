import { Migration } from '@sluice/store';
import type { Constructor } from '@mikro-orm/core';

/**
 * Durable scheduler: one row per timed job. A job is due when run_at <= now and
 * it is neither done nor dead; a worker claims it by setting a lease
 * (locked_until, locked_by) with FOR UPDATE SKIP LOCKED, and marks it done in
 * the same transaction as the handler's writes.
 */
class ScheduledJobsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE scheduled_jobs (
      id text PRIMARY KEY CONSTRAINT scheduled_jobs_id_length CHECK (length(id) BETWEEN 1 AND 200),
      kind text NOT NULL,
      payload jsonb NOT NULL DEFAULT '{}'::jsonb,
      run_at timestamptz NOT NULL,
      attempts integer NOT NULL DEFAULT 0 CONSTRAINT scheduled_jobs_attempts_nonneg CHECK (attempts >= 0),
      locked_until timestamptz,
      locked_by text,
      done_at timestamptz,
      failed_at timestamptz,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT scheduled_jobs_not_done_and_dead CHECK (done_at IS NULL OR failed_at IS NULL)
    )`);
    this.addSql(
      `CREATE INDEX scheduled_jobs_due ON scheduled_jobs (run_at, id) WHERE done_at IS NULL AND failed_at IS NULL`,
    );
  }
}

/**
 * Receiver lookups: what a counterparty answered for a receiver (currencies,
 * required payer data, sandbox behaviour), kept until expires_at so a quote can
 * refer to it by `lookupId`.
 */
class ReceiverLookupsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE receiver_lookups (
      id text PRIMARY KEY CONSTRAINT receiver_lookups_id_form CHECK (id LIKE 'Lookup:%'),
      platform_id text NOT NULL,
      kind text NOT NULL CONSTRAINT receiver_lookups_kind CHECK (kind IN ('UMA', 'EXTERNAL_ACCOUNT')),
      receiver_uma_address text,
      external_account_id text,
      sender_uma_address text,
      customer_id text,
      sending_currency text NOT NULL,
      supported_currencies jsonb NOT NULL,
      required_payer_data_fields jsonb NOT NULL,
      sandbox_behavior text,
      counterparty_name text,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      CONSTRAINT receiver_lookups_target CHECK ((kind = 'UMA') = (receiver_uma_address IS NOT NULL)
        AND (kind = 'EXTERNAL_ACCOUNT') = (external_account_id IS NOT NULL)),
      CONSTRAINT receiver_lookups_expiry CHECK (expires_at > created_at)
    )`);
    this.addSql(`CREATE INDEX receiver_lookups_platform ON receiver_lookups (platform_id, created_at)`);
    this.addSql(`CREATE INDEX receiver_lookups_expires ON receiver_lookups (expires_at)`);
  }
}

/** Migrations of the payments schema, in order (the outbox/inbox tables come from the events kit). */
export const migrations: { name: string; class: Constructor<Migration> }[] = [
  { name: '0001_scheduled_jobs', class: ScheduledJobsMigration },
  { name: '0002_receiver_lookups', class: ReceiverLookupsMigration },
];
