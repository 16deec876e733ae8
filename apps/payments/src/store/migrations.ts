import { Migration } from '@sluice/store';
import type { Constructor } from '@mikro-orm/core';

/**
 * Durable scheduler: one row per timed job. A job is due when run_at <= now and
 * it is neither done nor dead; a worker claims it by setting a lease
 * (locked_until, locked_by) with FOR UPDATE SKIP LOCKED, and marks it done in
 * the same transaction as the handler's writes (store/job-scheduler.ts).
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

/**
 * Transactions: every money movement. Status changes only through the state
 * machine (guarded UPDATE ... WHERE status = <from>); request_key makes
 * transfer requests idempotent per platform; reference is globally unique.
 */
class TransactionsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE transactions (
      id text PRIMARY KEY CONSTRAINT transactions_id_form CHECK (id LIKE 'Transaction:%'),
      platform_id text NOT NULL,
      type text NOT NULL CONSTRAINT transactions_type CHECK (type IN ('INCOMING', 'OUTGOING')),
      status text NOT NULL CONSTRAINT transactions_status CHECK (status IN
        ('CREATED', 'PENDING', 'PROCESSING', 'COMPLETED', 'REJECTED', 'FAILED', 'REFUNDED', 'EXPIRED')),
      source_kind text NOT NULL,
      source_account_id text,
      source_uma_address text,
      source_currency text NOT NULL,
      destination_kind text NOT NULL,
      destination_account_id text,
      destination_uma_address text,
      destination_currency text NOT NULL,
      customer_id text,
      platform_customer_id text,
      sent_amount bigint NOT NULL CONSTRAINT transactions_sent_positive CHECK (sent_amount > 0),
      received_amount bigint NOT NULL CONSTRAINT transactions_received_nonneg CHECK (received_amount >= 0),
      fees bigint NOT NULL DEFAULT 0 CONSTRAINT transactions_fees_nonneg CHECK (fees >= 0),
      reference text NOT NULL CONSTRAINT transactions_reference_unique UNIQUE,
      description text,
      failure_reason text,
      failure_detail text,
      counterparty_information jsonb NOT NULL DEFAULT '{}'::jsonb,
      quote_id text,
      request_key text,
      hold_id text,
      counterparty_identifier text,
      settled_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT transactions_request_key_unique UNIQUE (platform_id, request_key)
    )`);
    this.addSql(`CREATE INDEX transactions_platform_created ON transactions (platform_id, created_at, id)`);
    this.addSql(`CREATE INDEX transactions_customer ON transactions (platform_id, customer_id, created_at)`);
    this.addSql(`CREATE INDEX transactions_source_account ON transactions (platform_id, source_account_id)`);
    this.addSql(
      `CREATE INDEX transactions_destination_account ON transactions (platform_id, destination_account_id)`,
    );
  }
}

/**
 * Quotes: locked amounts of one cross-currency payment (amounts jsonb holds the
 * exact QuoteAmounts: bigints and rationals as strings). Status changes only by
 * guarded UPDATE ... WHERE status = <from>; transaction_id is unique, so one
 * quote is executed into at most one transaction.
 */
class QuotesMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE quotes (
      id text PRIMARY KEY CONSTRAINT quotes_id_form CHECK (id LIKE 'Quote:%'),
      platform_id text NOT NULL,
      status text NOT NULL CONSTRAINT quotes_status CHECK (status IN
        ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED')),
      source jsonb NOT NULL,
      destination jsonb NOT NULL,
      customer_id text,
      sending_currency text NOT NULL,
      receiving_currency text NOT NULL,
      total_sending_amount bigint NOT NULL CONSTRAINT quotes_sending_positive CHECK (total_sending_amount > 0),
      total_receiving_amount bigint NOT NULL CONSTRAINT quotes_receiving_positive CHECK (total_receiving_amount > 0),
      amounts jsonb NOT NULL,
      lookup_id text,
      description text,
      purpose_of_payment text,
      sender_customer_info jsonb NOT NULL DEFAULT '{}'::jsonb,
      counterparty_information jsonb NOT NULL DEFAULT '{}'::jsonb,
      transaction_id text CONSTRAINT quotes_transaction_unique UNIQUE,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT quotes_currencies_differ CHECK (sending_currency <> receiving_currency),
      CONSTRAINT quotes_expiry CHECK (expires_at > created_at)
    )`);
    this.addSql(`CREATE INDEX quotes_platform_created ON quotes (platform_id, created_at)`);
    this.addSql(`CREATE INDEX quotes_pending_expiry ON quotes (expires_at) WHERE status = 'PENDING'`);
  }
}

/**
 * Incoming payments awaiting the platform's decision (issue 3): one row per INCOMING
 * transaction that needs approval; `decision` is set once (APPROVED, REJECTED or
 * TIMED_OUT) under the transaction's row lock.
 */
class IncomingApprovalsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE incoming_approvals (
      transaction_id text PRIMARY KEY REFERENCES transactions (id) ON DELETE CASCADE,
      platform_id text NOT NULL,
      expires_at timestamptz NOT NULL,
      decision text CONSTRAINT incoming_approvals_decision CHECK (decision IN ('APPROVED', 'REJECTED', 'TIMED_OUT')),
      reason text,
      receiver_customer_info jsonb,
      decided_at timestamptz,
      created_at timestamptz NOT NULL,
      CONSTRAINT incoming_approvals_decided CHECK ((decision IS NULL) = (decided_at IS NULL))
    )`);
  }
}

/**
 * The approval webhook (issue 13): an answer that is neither approval nor rejection, or a
 * refused endpoint, ends the payment with PAYMENT_APPROVAL_WEBHOOK_ERROR.
 */
class IncomingApprovalWebhookErrorMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE incoming_approvals DROP CONSTRAINT incoming_approvals_decision`);
    this.addSql(
      `ALTER TABLE incoming_approvals ADD CONSTRAINT incoming_approvals_decision CHECK (decision IN ('APPROVED', 'REJECTED', 'TIMED_OUT', 'WEBHOOK_ERROR'))`,
    );
  }
}

/**
 * Quotes from an EMBEDDED_WALLET source carry the wallet-auth signing request that
 * authorizes their execution (issue 4's EXECUTE_QUOTE signed retry).
 */
class QuoteSigningRequestMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE quotes ADD COLUMN signing_request_id text, ADD COLUMN payload_to_sign text`);
  }
}

/**
 * Quote payments (issue 3): a transaction keeps its quote's exchange rate (exact,
 * `num/den`) and fee breakdown, and the refund of a payout whose money came back;
 * a REALTIME_FUNDING quote keeps the payment instructions it was issued with.
 */
class QuotePaymentsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `ALTER TABLE transactions ADD COLUMN exchange_rate text, ADD COLUMN rate_details jsonb, ADD COLUMN refund jsonb`,
    );
    this.addSql(
      `ALTER TABLE transactions ADD CONSTRAINT transactions_refund_status CHECK (refund IS NULL OR refund->>'status' IN ('PENDING', 'COMPLETED', 'FAILED'))`,
    );
    this.addSql(`ALTER TABLE quotes ADD COLUMN payment_instructions jsonb`);
  }
}

/**
 * A quote records whether its source is an EMBEDDED_WALLET when it is created, so
 * execution needs no second look at the account (NULL for older quotes: asked then).
 */
class QuoteSourceWalletMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE quotes ADD COLUMN source_embedded_wallet boolean`);
  }
}

/** The payment rail of a quote payment to an external account (domain/payment-rails.ts; NULL otherwise). */
class TransactionPaymentRailMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE transactions ADD COLUMN destination_payment_rail text`);
  }
}

/** The agent whose action initiated a payment (set by the agents service; NULL otherwise). */
class TransactionAgentMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE transactions ADD COLUMN agent_id text`);
  }
}

/**
 * Personal data at rest (issue 17): a receiver lookup's counterparty name (a person's name) is
 * sealed in `sealed_counterparty_name` (envelope encryption under PAYMENTS_DATA_MASTER_KEY,
 * store/sealing.ts) and `counterparty_name` stays null. SQL has no key: rows written before keep
 * `counterparty_name` (read as it is) until `main.ts rewrap` seals them, or the lookup is purged
 * (a day after it expired).
 */
class SealedCounterpartyNamesMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE receiver_lookups ADD COLUMN sealed_counterparty_name text`);
  }
}

/**
 * Personal data at rest (issue 17): a quote's and a transaction's counterpartyInformation (the
 * receiver's FULL_NAME copied from a receiver lookup, an incoming payment's senderUmaAddress) is
 * sealed in `sealed_counterparty_information` (the map as JSON, envelope encryption under
 * PAYMENTS_DATA_MASTER_KEY, store/sealing.ts) and `counterparty_information` holds `{}`. An empty
 * map is not sealed (the sealed column stays null). SQL has no key: rows written before keep their
 * map in `counterparty_information` (read as it is) until `main.ts rewrap` seals them. A nullable
 * column without a default: adding it rewrites no row.
 */
class SealedCounterpartyInformationMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE quotes ADD COLUMN sealed_counterparty_information text`);
    this.addSql(`ALTER TABLE transactions ADD COLUMN sealed_counterparty_information text`);
  }
}

/**
 * Personal data at rest (issue 17): the payer data a quote sends to a UMA receiver's institution
 * (`senderCustomerInfo`: the sender's FULL_NAME, BIRTH_DATE...) is sealed in
 * `quotes.sealed_sender_customer_info` and `sender_customer_info` holds `{}`; what a platform
 * answers about its receiver when it approves an incoming payment (`receiverCustomerInfo`) is
 * sealed in `incoming_approvals.sealed_receiver_customer_info` and `receiver_customer_info` stays
 * null (the maps as JSON, envelope encryption under PAYMENTS_DATA_MASTER_KEY, store/sealing.ts). An
 * empty map is not sealed. SQL has no key: rows written before keep their map in the plaintext
 * column (read as it is) until `main.ts rewrap` seals them. Nullable columns without a default:
 * adding them rewrites no row.
 */
class SealedCustomerInfoMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE quotes ADD COLUMN sealed_sender_customer_info text`);
    this.addSql(`ALTER TABLE incoming_approvals ADD COLUMN sealed_receiver_customer_info text`);
  }
}

/**
 * Personal data at rest (issue 17): what the rail pays to or is paid from
 * (`counterpartyIdentifier`: an external account's account number, IBAN, CLABE, PIX key or wallet
 * address, a copy of what accounts keeps sealed; the UMA address of a UMA payment) is sealed in
 * `transactions.sealed_counterparty_identifier` (envelope encryption under
 * PAYMENTS_DATA_MASTER_KEY, bound to the transaction id, store/sealing.ts) and
 * `counterparty_identifier` (nullable, no default, no index, no filter) stays null. SQL has no key:
 * rows written before keep the value in `counterparty_identifier` (read as it is) until
 * `main.ts rewrap` seals them. A nullable column without a default: adding it rewrites no row.
 */
class SealedCounterpartyIdentifierMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE transactions ADD COLUMN sealed_counterparty_identifier text`);
  }
}

/**
 * Personal data at rest (issue 17): UMA addresses (a person at an institution, as an email address
 * names one) are sealed under PAYMENTS_DATA_MASTER_KEY (store/sealing.ts, `spu1.…`, bound to the
 * row id): a transaction's source and destination address in `sealed_source_uma_address` /
 * `sealed_destination_uma_address`, a quote's destination address in
 * `quotes.sealed_destination_uma_address` (its `destination` jsonb then has no `umaAddress`), a
 * receiver lookup's in `sealed_receiver_uma_address` / `sealed_sender_uma_address`; the plaintext
 * columns stay null. GET /transactions filters on a transaction's two by equality: each has a blind
 * index (`source_uma_address_index`, `destination_uma_address_index`: HMAC-SHA256 under a key derived
 * from the master key, `bi1.<keyId>.<hex>`). No index was ever on the plaintext columns (the filter
 * is an OR beside the indexed account ids, within the platform), so none is on the blind indexes
 * either. A lookup's target check accepts a sealed receiver address. SQL has no key: rows written
 * before keep their addresses in the plaintext columns (read, and matched by the filters, as they
 * are) until `main.ts rewrap` seals and indexes them. Nullable columns without a default: adding
 * them rewrites no row; the new check scans `receiver_lookups` once (a table purged a day after
 * each lookup expired).
 */
class SealedUmaAddressesMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `ALTER TABLE transactions ADD COLUMN sealed_source_uma_address text, ADD COLUMN source_uma_address_index text,
         ADD COLUMN sealed_destination_uma_address text, ADD COLUMN destination_uma_address_index text`,
    );
    this.addSql(`ALTER TABLE quotes ADD COLUMN sealed_destination_uma_address text`);
    this.addSql(
      `ALTER TABLE receiver_lookups ADD COLUMN sealed_receiver_uma_address text, ADD COLUMN sealed_sender_uma_address text`,
    );
    this.addSql(`ALTER TABLE receiver_lookups DROP CONSTRAINT receiver_lookups_target,
      ADD CONSTRAINT receiver_lookups_target CHECK (
        (kind = 'UMA') = (receiver_uma_address IS NOT NULL OR sealed_receiver_uma_address IS NOT NULL)
        AND (kind = 'EXTERNAL_ACCOUNT') = (external_account_id IS NOT NULL))`);
  }
}

/** Migrations of the payments schema, in order (the outbox/inbox tables come from the events kit). */
export const migrations: { name: string; class: Constructor<Migration> }[] = [
  { name: '0001_scheduled_jobs', class: ScheduledJobsMigration },
  { name: '0002_receiver_lookups', class: ReceiverLookupsMigration },
  { name: '0003_transactions', class: TransactionsMigration },
  { name: '0004_quotes', class: QuotesMigration },
  { name: '0005_incoming_approvals', class: IncomingApprovalsMigration },
  { name: '0006_quote_signing_request', class: QuoteSigningRequestMigration },
  { name: '0007_quote_payments', class: QuotePaymentsMigration },
  { name: '0008_quote_source_wallet', class: QuoteSourceWalletMigration },
  { name: '0009_transaction_payment_rail', class: TransactionPaymentRailMigration },
  { name: '0020_transaction_agent', class: TransactionAgentMigration },
  { name: '0030_incoming_approval_webhook_error', class: IncomingApprovalWebhookErrorMigration },
  { name: '0040_sealed_counterparty_names', class: SealedCounterpartyNamesMigration },
  { name: '0050_sealed_counterparty_information', class: SealedCounterpartyInformationMigration },
  { name: '0060_sealed_customer_info', class: SealedCustomerInfoMigration },
  { name: '0070_sealed_counterparty_identifier', class: SealedCounterpartyIdentifierMigration },
  { name: '0080_sealed_uma_addresses', class: SealedUmaAddressesMigration },
];
