import { Migration } from '@sluice/store';
import type { Constructor } from '@mikro-orm/core';

/**
 * Platforms, their config and webhook signing secrets, API tokens and
 * customers. Timestamps are millisecond precision (timestamptz(3)) so they
 * round-trip through JavaScript Dates and keyset cursors exactly.
 */
export class IdentityInitialMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE platforms (
      id text PRIMARY KEY,
      name text NOT NULL,
      environment text NOT NULL CHECK (environment IN ('SANDBOX', 'PRODUCTION')),
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL
    )`);
    this.addSql(`CREATE INDEX platforms_environment_name ON platforms (environment, name)`);

    this.addSql(`CREATE TABLE platform_configs (
      platform_id text PRIMARY KEY REFERENCES platforms (id),
      uma_domain text,
      webhook_endpoint text,
      supported_currencies jsonb NOT NULL DEFAULT '[]',
      embedded_wallet_config jsonb,
      is_regulated_financial_institution boolean NOT NULL DEFAULT false,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL
    )`);

    this.addSql(`CREATE TABLE webhook_signing_secrets (
      id text PRIMARY KEY,
      platform_id text NOT NULL REFERENCES platforms (id),
      secret text NOT NULL,
      created_at timestamptz(3) NOT NULL,
      expires_at timestamptz(3)
    )`);
    // Exactly one current (non-expiring) secret per platform.
    this.addSql(
      `CREATE UNIQUE INDEX webhook_signing_secrets_current ON webhook_signing_secrets (platform_id) WHERE expires_at IS NULL`,
    );
    this.addSql(
      `CREATE INDEX webhook_signing_secrets_platform ON webhook_signing_secrets (platform_id, created_at DESC)`,
    );

    this.addSql(`CREATE TABLE api_tokens (
      id text PRIMARY KEY,
      platform_id text NOT NULL REFERENCES platforms (id),
      name text NOT NULL,
      permissions text[] NOT NULL,
      secret_hash bytea NOT NULL CHECK (octet_length(secret_hash) = 32),
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL,
      deleted_at timestamptz(3)
    )`);
    this.addSql(
      `CREATE INDEX api_tokens_platform_created ON api_tokens (platform_id, created_at DESC, id DESC) WHERE deleted_at IS NULL`,
    );

    this.addSql(`CREATE TABLE customers (
      id text PRIMARY KEY,
      platform_id text NOT NULL REFERENCES platforms (id),
      platform_customer_id text NOT NULL,
      customer_type text NOT NULL CHECK (customer_type IN ('INDIVIDUAL', 'BUSINESS')),
      region text,
      currencies text[] NOT NULL,
      email text,
      uma_address text NOT NULL,
      verification_status text NOT NULL CHECK (verification_status IN ('UNVERIFIED', 'PENDING', 'APPROVED', 'REJECTED')),
      full_name text,
      birth_date date,
      nationality text,
      address jsonb,
      business_info jsonb,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL,
      deleted_at timestamptz(3),
      request_key text
    )`);
    // A retried creation (same Idempotency-Key) finds the customer it created.
    this.addSql(
      `CREATE UNIQUE INDEX customers_request_key ON customers (platform_id, request_key) WHERE request_key IS NOT NULL`,
    );
    // Uniqueness among the platform's live customers: a deleted customer frees its ids.
    this.addSql(
      `CREATE UNIQUE INDEX customers_platform_customer_id ON customers (platform_id, platform_customer_id) WHERE deleted_at IS NULL`,
    );
    this.addSql(
      `CREATE UNIQUE INDEX customers_uma_address ON customers (platform_id, uma_address) WHERE deleted_at IS NULL`,
    );
    this.addSql(
      `CREATE INDEX customers_platform_created ON customers (platform_id, created_at DESC, id DESC)`,
    );
    this.addSql(`CREATE INDEX customers_platform_updated ON customers (platform_id, updated_at)`);
    this.addSql(`CREATE INDEX customers_currencies ON customers USING gin (currencies)`);
  }
}

/** The webhook-dispatcher may disable a platform's endpoint (WEBHOOK_ENDPOINT.DISABLED, issue 13). */
class WebhookEndpointDisabledMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `ALTER TABLE platform_configs ADD COLUMN webhook_endpoint_disabled_at timestamptz(3), ADD COLUMN webhook_endpoint_disabled_reason text`,
    );
  }
}

/** Each platform may set where its hosted KYC links point (kycLinkUrlTemplate, issue 12). */
class KycLinkUrlTemplateMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE platform_configs ADD COLUMN kyc_link_url_template text`);
  }
}

/** UMA invitations of platforms' customers (issue 14): one row per code, claimed at most once. */
class InvitationsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE invitations (
      code text PRIMARY KEY,
      platform_id text NOT NULL REFERENCES platforms (id),
      inviter_customer_id text NOT NULL REFERENCES customers (id),
      inviter_uma text NOT NULL,
      url text NOT NULL,
      invitee_uma text,
      status text NOT NULL CHECK (status IN ('PENDING', 'CLAIMED', 'CANCELLED')),
      first_name text,
      amount_to_send bigint,
      amount_currency text,
      expires_at timestamptz(3),
      claimed_at timestamptz(3),
      cancelled_at timestamptz(3),
      created_at timestamptz(3) NOT NULL,
      CHECK ((amount_to_send IS NULL) = (amount_currency IS NULL)),
      CHECK ((status = 'CLAIMED') = (invitee_uma IS NOT NULL AND claimed_at IS NOT NULL))
    )`);
    this.addSql(`CREATE INDEX invitations_platform ON invitations (platform_id, created_at DESC)`);
  }
}

/**
 * Bulk customer imports (issue 14): a job per uploaded CSV file and a row per data row. A row
 * keeps its values only until it is processed (then its outcome: the customer, or the error).
 */
class BulkImportsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE bulk_import_jobs (
      id text PRIMARY KEY,
      platform_id text NOT NULL REFERENCES platforms (id),
      status text NOT NULL CHECK (status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED')),
      file_name text NOT NULL,
      total integer NOT NULL CHECK (total >= 0),
      processed integer NOT NULL DEFAULT 0,
      successful integer NOT NULL DEFAULT 0,
      failed integer NOT NULL DEFAULT 0,
      created_at timestamptz(3) NOT NULL,
      updated_at timestamptz(3) NOT NULL,
      completed_at timestamptz(3),
      CHECK (processed = successful + failed AND processed <= total),
      CHECK ((status IN ('COMPLETED', 'FAILED')) = (completed_at IS NOT NULL))
    )`);
    this.addSql(
      `CREATE INDEX bulk_import_jobs_open ON bulk_import_jobs (updated_at, id) WHERE status IN ('PENDING', 'PROCESSING')`,
    );
    this.addSql(`CREATE TABLE bulk_import_rows (
      job_id text NOT NULL REFERENCES bulk_import_jobs (id) ON DELETE CASCADE,
      row_number integer NOT NULL,
      line integer NOT NULL,
      record jsonb,
      extra_values integer,
      outcome text CHECK (outcome IN ('CREATED', 'EXISTED', 'FAILED')),
      customer_id text,
      error jsonb,
      PRIMARY KEY (job_id, row_number),
      CHECK ((outcome IS NULL) = (record IS NOT NULL)),
      CHECK ((outcome = 'FAILED') = (error IS NOT NULL))
    )`);
    this.addSql(
      `CREATE INDEX bulk_import_rows_pending ON bulk_import_rows (job_id, row_number) WHERE outcome IS NULL`,
    );
    this.addSql(
      `CREATE INDEX bulk_import_rows_failed ON bulk_import_rows (job_id, row_number) WHERE outcome = 'FAILED'`,
    );
  }
}

/**
 * Personal data at rest (issue 17): a customer's personal fields are sealed together in
 * `personal_data` (envelope encryption, store/sealing.ts) and their own columns stay null;
 * webhook signing secrets are sealed in place. SQL has no key, so rows written before stay as
 * they are here: they are read as they are, and `main.ts rewrap` seals them.
 */
class SealedPersonalDataMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE customers ADD COLUMN personal_data text`);
  }
}

/**
 * Bulk import rows at rest (issue 17): a row's values wait to be processed sealed in
 * `sealed_record` (envelope encryption, store/sealing.ts), `record` stays null, and processing
 * clears both. SQL has no key: rows stored before keep `record` (read as they are) until they are
 * processed or `main.ts rewrap` seals them.
 */
class SealedBulkImportRowsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE bulk_import_rows ADD COLUMN sealed_record text, DROP CONSTRAINT bulk_import_rows_check,
      ADD CONSTRAINT bulk_import_rows_values_until_processed
        CHECK ((outcome IS NULL) = (record IS NOT NULL OR sealed_record IS NOT NULL))`);
  }
}

/**
 * Customers' UMA addresses at rest (issue 17): sealed in `sealed_uma_address` (envelope
 * encryption, store/sealing.ts) beside `uma_address_index`, their blind index (keyed HMAC),
 * which the API's lookups and filters use and which is unique among a platform's live customers;
 * `uma_address` stays null. SQL has no key: rows written before keep `uma_address` (read, looked
 * up and counted as duplicates as they are; `customers_uma_address` still covers them) until
 * `main.ts rewrap` seals them.
 */
class SealedUmaAddressesMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE customers ALTER COLUMN uma_address DROP NOT NULL,
      ADD COLUMN sealed_uma_address text, ADD COLUMN uma_address_index text,
      ADD CONSTRAINT customers_uma_address_kept
        CHECK (uma_address IS NOT NULL OR (sealed_uma_address IS NOT NULL AND uma_address_index IS NOT NULL))`);
    this.addSql(
      `CREATE UNIQUE INDEX customers_uma_address_index ON customers (platform_id, uma_address_index) WHERE deleted_at IS NULL`,
    );
  }
}

/**
 * Invitations' UMA addresses at rest (issue 17): the inviter's (a copy of the customer's) sealed in
 * `sealed_inviter_uma`, the invitee's in `sealed_invitee_uma` (envelope encryption,
 * store/sealing.ts, bound to the code); `inviter_uma` and `invitee_uma` stay null. Invitations are
 * found by their code only, so there is no blind index. SQL has no key: rows written before keep
 * their plain columns (read as they are) until `main.ts rewrap` seals them. A claimed invitation
 * holds its invitee in either form (`invitations_check1`, which named the plain column, replaced).
 */
class SealedInvitationUmaAddressesMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE invitations ALTER COLUMN inviter_uma DROP NOT NULL,
      ADD COLUMN sealed_inviter_uma text, ADD COLUMN sealed_invitee_uma text,
      ADD CONSTRAINT invitations_inviter_uma_kept CHECK (inviter_uma IS NOT NULL OR sealed_inviter_uma IS NOT NULL),
      DROP CONSTRAINT invitations_check1,
      ADD CONSTRAINT invitations_claimed_by_invitee CHECK ((status = 'CLAIMED') =
        ((invitee_uma IS NOT NULL OR sealed_invitee_uma IS NOT NULL) AND claimed_at IS NOT NULL))`);
  }
}

/** Migrations of the identity schema, in order (the outbox/inbox tables come from the events kit). */
export const migrations: { name: string; class: Constructor<Migration> }[] = [
  { name: '0001_identity_initial', class: IdentityInitialMigration },
  { name: '0030_webhook_endpoint_disabled', class: WebhookEndpointDisabledMigration },
  { name: '0040_kyc_link_url_template', class: KycLinkUrlTemplateMigration },
  { name: '0051_invitations', class: InvitationsMigration },
  { name: '0055_bulk_imports', class: BulkImportsMigration },
  { name: '0060_sealed_personal_data', class: SealedPersonalDataMigration },
  { name: '0070_sealed_bulk_import_rows', class: SealedBulkImportRowsMigration },
  { name: '0080_sealed_uma_addresses', class: SealedUmaAddressesMigration },
  { name: '0090_sealed_invitation_uma_addresses', class: SealedInvitationUmaAddressesMigration },
];
