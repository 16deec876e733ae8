import { Migration } from '@sluice/store';
import type { Constructor } from '@mikro-orm/core';

/**
 * Internal accounts and the ledger.
 *
 * - internal_accounts: the public accounts, one per (platform, owner, customer, currency, type).
 * - ledger_accounts: every account the journal can touch (internal accounts share their id;
 *   system accounts such as `system:sandbox-funding:<CUR>:<platform>` stand for the outside world)
 *   with running totals kept in the same transaction as the lines and guarded by CHECKs.
 * - journal_entries / journal_lines: append-only; every entry balances per currency
 *   (deferred constraint trigger), an entry id is unique per platform (retries are no-ops).
 */
class LedgerMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE SEQUENCE internal_account_funding_seq AS bigint START 1 MAXVALUE 1099511627775`);

    this.addSql(`CREATE TABLE ledger_accounts (
      id text PRIMARY KEY,
      platform_id text NOT NULL,
      currency text NOT NULL,
      kind text NOT NULL CONSTRAINT ledger_accounts_kind CHECK (kind IN ('INTERNAL', 'SYSTEM')),
      allow_negative boolean NOT NULL,
      posted_debits numeric(38, 0) NOT NULL DEFAULT 0 CONSTRAINT ledger_accounts_posted_debits_nonneg CHECK (posted_debits >= 0),
      posted_credits numeric(38, 0) NOT NULL DEFAULT 0 CONSTRAINT ledger_accounts_posted_credits_nonneg CHECK (posted_credits >= 0),
      pending_debits numeric(38, 0) NOT NULL DEFAULT 0 CONSTRAINT ledger_accounts_pending_debits_nonneg CHECK (pending_debits >= 0),
      pending_credits numeric(38, 0) NOT NULL DEFAULT 0 CONSTRAINT ledger_accounts_pending_credits_nonneg CHECK (pending_credits >= 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT ledger_accounts_no_overdraft CHECK (allow_negative OR posted_credits - posted_debits - pending_debits >= 0),
      CONSTRAINT ledger_accounts_balance_limit CHECK (allow_negative OR posted_credits - posted_debits + pending_credits <= 9000000000000000),
      CONSTRAINT ledger_accounts_internal_no_negative CHECK (kind = 'SYSTEM' OR NOT allow_negative),
      CONSTRAINT ledger_accounts_id_platform_currency UNIQUE (id, platform_id, currency)
    )`);

    this.addSql(`CREATE TABLE internal_accounts (
      id text PRIMARY KEY CONSTRAINT internal_accounts_id_form CHECK (id LIKE 'InternalAccount:%'),
      platform_id text NOT NULL,
      owner text NOT NULL CONSTRAINT internal_accounts_owner CHECK (owner IN ('CUSTOMER', 'PLATFORM')),
      customer_id text,
      type text NOT NULL CONSTRAINT internal_accounts_type CHECK (type IN ('INTERNAL_FIAT', 'INTERNAL_CRYPTO', 'EMBEDDED_WALLET')),
      currency text NOT NULL,
      environment text NOT NULL CONSTRAINT internal_accounts_environment CHECK (environment IN ('SANDBOX', 'PRODUCTION')),
      funding_seq bigint NOT NULL CONSTRAINT internal_accounts_funding_seq_key UNIQUE,
      funding_reference text NOT NULL CONSTRAINT internal_accounts_funding_reference_key UNIQUE,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT internal_accounts_owner_customer CHECK ((owner = 'CUSTOMER') = (customer_id IS NOT NULL)),
      CONSTRAINT internal_accounts_one_per_currency UNIQUE NULLS NOT DISTINCT (platform_id, owner, customer_id, currency, type),
      CONSTRAINT internal_accounts_ledger_account FOREIGN KEY (id, platform_id, currency)
        REFERENCES ledger_accounts (id, platform_id, currency) DEFERRABLE INITIALLY DEFERRED
    )`);
    this.addSql(
      `CREATE INDEX internal_accounts_by_owner ON internal_accounts (platform_id, owner, created_at, id)`,
    );
    this.addSql(
      `CREATE INDEX internal_accounts_by_customer ON internal_accounts (platform_id, customer_id, created_at, id) WHERE customer_id IS NOT NULL`,
    );

    this.addSql(`CREATE TABLE journal_entries (
      platform_id text NOT NULL,
      id text NOT NULL,
      kind text NOT NULL,
      phase text NOT NULL CONSTRAINT journal_entries_phase CHECK (phase IN ('POSTED', 'PENDING', 'POST_PENDING', 'VOID_PENDING')),
      pending_entry_id text,
      fingerprint text NOT NULL,
      description text,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (platform_id, id),
      CONSTRAINT journal_entries_pending_ref CHECK ((phase IN ('POST_PENDING', 'VOID_PENDING')) = (pending_entry_id IS NOT NULL)),
      CONSTRAINT journal_entries_resolve_once UNIQUE (platform_id, pending_entry_id),
      CONSTRAINT journal_entries_pending_fk FOREIGN KEY (platform_id, pending_entry_id) REFERENCES journal_entries (platform_id, id)
    )`);

    this.addSql(`CREATE TABLE journal_lines (
      platform_id text NOT NULL,
      entry_id text NOT NULL,
      line_no smallint NOT NULL,
      account_id text NOT NULL,
      currency text NOT NULL,
      amount bigint NOT NULL CONSTRAINT journal_lines_amount CHECK (amount <> 0 AND amount BETWEEN -9000000000000000 AND 9000000000000000),
      PRIMARY KEY (platform_id, entry_id, line_no),
      CONSTRAINT journal_lines_entry_fk FOREIGN KEY (platform_id, entry_id) REFERENCES journal_entries (platform_id, id),
      CONSTRAINT journal_lines_account_fk FOREIGN KEY (account_id, platform_id, currency) REFERENCES ledger_accounts (id, platform_id, currency)
    )`);
    this.addSql(`CREATE INDEX journal_lines_by_account ON journal_lines (account_id)`);

    // Every entry balances per currency, checked at commit (all its lines are in by then).
    this
      .addSql(`CREATE FUNCTION journal_entry_balanced() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
      BEGIN
        IF EXISTS (
          SELECT 1 FROM journal_lines
          WHERE platform_id = NEW.platform_id AND entry_id = NEW.entry_id
          GROUP BY currency HAVING sum(amount) <> 0
        ) THEN
          RAISE EXCEPTION 'journal entry % does not balance', NEW.entry_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'journal_entry_balanced';
        END IF;
        RETURN NULL;
      END $$`);
    this.addSql(`CREATE CONSTRAINT TRIGGER journal_lines_balanced AFTER INSERT ON journal_lines
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION journal_entry_balanced()`);

    // The journal is append-only: corrections are new entries.
    this.addSql(`CREATE FUNCTION journal_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'the journal is append-only (% on %)', TG_OP, TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
      END $$`);
    this.addSql(
      `CREATE TRIGGER journal_entries_append_only BEFORE UPDATE OR DELETE ON journal_entries FOR EACH ROW EXECUTE FUNCTION journal_append_only()`,
    );
    this.addSql(
      `CREATE TRIGGER journal_entries_no_truncate BEFORE TRUNCATE ON journal_entries FOR EACH STATEMENT EXECUTE FUNCTION journal_append_only()`,
    );
    this.addSql(
      `CREATE TRIGGER journal_lines_append_only BEFORE UPDATE OR DELETE ON journal_lines FOR EACH ROW EXECUTE FUNCTION journal_append_only()`,
    );
    this.addSql(
      `CREATE TRIGGER journal_lines_no_truncate BEFORE TRUNCATE ON journal_lines FOR EACH STATEMENT EXECUTE FUNCTION journal_append_only()`,
    );
  }
}

/**
 * External accounts: bank accounts and wallets of customers (owner CUSTOMER) or of the
 * platform (owner PLATFORM). Soft delete (deleted_at); among live rows the same account
 * (dedupe_key) is registered once per owner and currency, and a customer has at most one
 * default UMA deposit account.
 */
class ExternalAccountsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE external_accounts (
      id text PRIMARY KEY CONSTRAINT external_accounts_id_form CHECK (id LIKE 'ExternalAccount:%'),
      platform_id text NOT NULL,
      owner text NOT NULL CONSTRAINT external_accounts_owner CHECK (owner IN ('CUSTOMER', 'PLATFORM')),
      customer_id text,
      currency text NOT NULL,
      account_type text NOT NULL,
      account_info jsonb NOT NULL,
      primary_identifier text NOT NULL,
      dedupe_key text NOT NULL,
      platform_account_id text,
      default_uma_deposit boolean NOT NULL DEFAULT false,
      status text NOT NULL CONSTRAINT external_accounts_status CHECK (status IN ('PENDING', 'ACTIVE', 'UNDER_REVIEW', 'INACTIVE')),
      verification_status text NOT NULL CONSTRAINT external_accounts_verification_status
        CHECK (verification_status IN ('MATCHED', 'PARTIAL_MATCH', 'NOT_MATCHED', 'UNSUPPORTED', 'CHECKED_BY_RECEIVING_FI', 'PENDING')),
      verified_full_name text,
      environment text NOT NULL CONSTRAINT external_accounts_environment CHECK (environment IN ('SANDBOX', 'PRODUCTION')),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz,
      CONSTRAINT external_accounts_owner_customer CHECK ((owner = 'CUSTOMER') = (customer_id IS NOT NULL)),
      CONSTRAINT external_accounts_uma_default_customer CHECK (NOT default_uma_deposit OR owner = 'CUSTOMER')
    )`);
    this.addSql(`CREATE UNIQUE INDEX external_accounts_once_per_owner ON external_accounts
      (platform_id, owner, customer_id, currency, dedupe_key) NULLS NOT DISTINCT WHERE deleted_at IS NULL`);
    this.addSql(`CREATE UNIQUE INDEX external_accounts_one_uma_default ON external_accounts
      (platform_id, customer_id) WHERE default_uma_deposit AND deleted_at IS NULL`);
    this.addSql(`CREATE INDEX external_accounts_by_owner ON external_accounts
      (platform_id, owner, created_at, id) WHERE deleted_at IS NULL`);
    this.addSql(`CREATE INDEX external_accounts_by_customer ON external_accounts
      (platform_id, customer_id, created_at, id) WHERE deleted_at IS NULL AND customer_id IS NOT NULL`);
  }
}

class EmbeddedWalletMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE internal_accounts ADD COLUMN private_enabled boolean NOT NULL DEFAULT false`);
    this.addSql(`CREATE INDEX internal_accounts_customers_of_platform ON internal_accounts (platform_id, customer_id) WHERE customer_id IS NOT NULL`);
  }
}

/**
 * External accounts at rest (issue 17): what identifies an account is sealed in `sealed_data`
 * (envelope encryption, store/sealing.ts) and `dedupe_key` becomes a blind index. SQL has no
 * key: rows written before keep their plaintext columns (read as they are) until `main.ts rewrap`
 * seals them, hence those columns become nullable.
 */
class SealedExternalAccountsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE external_accounts ADD COLUMN sealed_data text,
      ALTER COLUMN account_info DROP NOT NULL, ALTER COLUMN primary_identifier DROP NOT NULL,
      ADD CONSTRAINT external_accounts_sealed_or_plain CHECK (sealed_data IS NOT NULL OR account_info IS NOT NULL)`);
  }
}

/**
 * The scheduled ledger reconciliation's runs (LedgerReconcileWorker): one row per sweep, written by the
 * one replica that held the sweep's advisory lock, so every replica knows when the last sweep ran and
 * none starts another before the interval has passed.
 */
class LedgerReconcileRunsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE ledger_reconcile_runs (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      started_at timestamptz NOT NULL,
      finished_at timestamptz NOT NULL,
      platforms integer NOT NULL CONSTRAINT ledger_reconcile_runs_platforms_nonneg CHECK (platforms >= 0),
      inconsistent_platform_ids jsonb NOT NULL
    )`);
    this.addSql(`CREATE INDEX ledger_reconcile_runs_by_start ON ledger_reconcile_runs (started_at)`);
  }
}

/** Migrations of the accounts schema, in order (the outbox/inbox tables come from the events kit). */
export const migrations: { name: string; class: Constructor<Migration> }[] = [
  { name: '0001_internal_accounts_and_ledger', class: LedgerMigration },
  { name: '0002_external_accounts', class: ExternalAccountsMigration },
  { name: '0003_embedded_wallet_private_enabled', class: EmbeddedWalletMigration },
  { name: '0010_sealed_external_accounts', class: SealedExternalAccountsMigration },
  { name: '0030_ledger_reconcile_runs', class: LedgerReconcileRunsMigration },
];
