import { Migration } from '@sluice/store';
import type { Constructor } from '@mikro-orm/core';

/**
 * Beneficial owners, documents (metadata and, for the Postgres document store, their encrypted
 * chunks), verifications and issued KYC links.
 */
class ComplianceTables extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE beneficial_owners (
      id text PRIMARY KEY CONSTRAINT beneficial_owners_id_form CHECK (id LIKE 'BeneficialOwner:%'),
      platform_id text NOT NULL,
      customer_id text NOT NULL,
      roles text[] NOT NULL,
      ownership_percentage integer NOT NULL CONSTRAINT beneficial_owners_percentage CHECK (ownership_percentage BETWEEN 0 AND 100),
      personal_info jsonb NOT NULL,
      kyc_status text NOT NULL CONSTRAINT beneficial_owners_kyc_status CHECK (kyc_status IN ('UNVERIFIED', 'PENDING', 'APPROVED', 'REJECTED')),
      environment text NOT NULL CONSTRAINT beneficial_owners_environment CHECK (environment IN ('SANDBOX', 'PRODUCTION')),
      kyc_due_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`);
    this.addSql(
      `CREATE INDEX beneficial_owners_customer ON beneficial_owners (platform_id, customer_id, created_at, id)`,
    );
    this.addSql(
      `CREATE INDEX beneficial_owners_kyc_due ON beneficial_owners (kyc_due_at) WHERE kyc_due_at IS NOT NULL`,
    );

    this.addSql(`CREATE TABLE documents (
      id text PRIMARY KEY CONSTRAINT documents_id_form CHECK (id LIKE 'Document:%'),
      platform_id text NOT NULL,
      document_holder text NOT NULL,
      customer_id text NOT NULL,
      document_type text NOT NULL,
      country text NOT NULL,
      file_name text NOT NULL,
      side text CONSTRAINT documents_side CHECK (side IN ('FRONT', 'BACK')),
      document_number text,
      blob_id text NOT NULL UNIQUE,
      content_type text NOT NULL CONSTRAINT documents_content_type CHECK (content_type IN ('application/pdf', 'image/jpeg', 'image/png')),
      size_bytes bigint NOT NULL CONSTRAINT documents_size CHECK (size_bytes BETWEEN 1 AND 10485760),
      sha256 text NOT NULL,
      chunk_count integer NOT NULL CONSTRAINT documents_chunks CHECK (chunk_count >= 1),
      key_id text NOT NULL,
      wrapped_key bytea NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`);
    this.addSql(`CREATE INDEX documents_platform ON documents (platform_id, created_at DESC, id DESC)`);
    this.addSql(
      `CREATE INDEX documents_holder ON documents (platform_id, document_holder, created_at DESC, id DESC)`,
    );
    this.addSql(`CREATE INDEX documents_customer ON documents (platform_id, customer_id)`);

    // The Postgres DocumentStore: encrypted chunks of a blob (the S3 store keeps them as objects).
    this.addSql(`CREATE TABLE document_chunks (
      blob_id text NOT NULL,
      idx integer NOT NULL CONSTRAINT document_chunks_idx CHECK (idx >= 0),
      data bytea NOT NULL,
      PRIMARY KEY (blob_id, idx)
    )`);

    this.addSql(`CREATE TABLE verifications (
      id text PRIMARY KEY CONSTRAINT verifications_id_form CHECK (id LIKE 'Verification:%'),
      platform_id text NOT NULL,
      customer_id text NOT NULL,
      customer_type text NOT NULL CONSTRAINT verifications_customer_type CHECK (customer_type IN ('INDIVIDUAL', 'BUSINESS')),
      environment text NOT NULL CONSTRAINT verifications_environment CHECK (environment IN ('SANDBOX', 'PRODUCTION')),
      status text NOT NULL CONSTRAINT verifications_status CHECK (status IN ('RESOLVE_ERRORS', 'PENDING_MANUAL_REVIEW', 'IN_PROGRESS', 'APPROVED', 'REJECTED', 'READY_FOR_VERIFICATION')),
      errors jsonb NOT NULL DEFAULT '[]',
      subject text,
      decision_due_at timestamptz,
      -- decided by the screening, shown once identity confirms it applied the customer's status
      decided_status text CONSTRAINT verifications_decided_status CHECK (decided_status IN ('PENDING_MANUAL_REVIEW', 'APPROVED', 'REJECTED')),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`);
    this.addSql(
      `CREATE INDEX verifications_platform ON verifications (platform_id, created_at DESC, id DESC)`,
    );
    this.addSql(
      `CREATE INDEX verifications_customer ON verifications (platform_id, customer_id, created_at DESC, id DESC)`,
    );
    this.addSql(
      `CREATE INDEX verifications_due ON verifications (decision_due_at) WHERE decision_due_at IS NOT NULL`,
    );

    this.addSql(`CREATE TABLE kyc_links (
      token_sha256 text PRIMARY KEY,
      platform_id text NOT NULL,
      customer_id text NOT NULL,
      redirect_uri text,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL
    )`);
  }
}

/**
 * Personal data at rest (issue 17): a beneficial owner's personal info is sealed in
 * `personal_data`, a document's file name and number in `sealed_details`, a verification's
 * screened subject in `sealed_subject` (envelope encryption under DOCUMENT_MASTER_KEY,
 * store/sealing.ts); their plaintext columns stay null. SQL has no key: rows written before keep
 * their plaintext columns (read as they are) until `main.ts rewrap` seals them, hence those
 * columns become nullable.
 */
class SealedPersonalDataMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE beneficial_owners ADD COLUMN personal_data text, ALTER COLUMN personal_info DROP NOT NULL,
      ADD CONSTRAINT beneficial_owners_sealed_or_plain CHECK (personal_data IS NOT NULL OR personal_info IS NOT NULL)`);
    this.addSql(`ALTER TABLE documents ADD COLUMN sealed_details text, ALTER COLUMN file_name DROP NOT NULL,
      ADD CONSTRAINT documents_sealed_or_plain CHECK (sealed_details IS NOT NULL OR file_name IS NOT NULL)`);
    this.addSql(`ALTER TABLE verifications ADD COLUMN sealed_subject text`);
  }
}

/**
 * A new document's request key (the upload's Idempotency-Key), unique per platform: a retry of an
 * upload that was stored but never answered (its gateway died before recording the key) finds the
 * document instead of storing a second one.
 */
class DocumentRequestKeyMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE documents ADD COLUMN request_key text`);
    this.addSql(
      `CREATE UNIQUE INDEX documents_request_key ON documents (platform_id, request_key) WHERE request_key IS NOT NULL`,
    );
  }
}

/**
 * Blobs whose chunks may be in the DocumentStore while no document row references them
 * (store/unreferenced-blob.repository.ts): an upload's, from before its first chunk until its
 * document commits or its chunks are deleted, and a replaced or deleted document's old file until
 * its chunks are deleted. The orphan sweeper deletes the chunks of the rows older than
 * DOCUMENT_UPLOAD_ABANDON_AFTER_SECONDS. The chunk rows of the Postgres store that no document
 * references already (uploads cut before this migration) are entered now, so they are swept too;
 * an upload still streaming on a replica of the release before, whose document commits later, is
 * found referenced by the sweeper, which then drops only the row.
 */
class UnreferencedBlobsMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE unreferenced_blobs (
      blob_id text PRIMARY KEY,
      since timestamptz NOT NULL DEFAULT now()
    )`);
    this.addSql(`CREATE INDEX unreferenced_blobs_since ON unreferenced_blobs (since)`);
    this.addSql(`INSERT INTO unreferenced_blobs (blob_id)
      SELECT DISTINCT c.blob_id FROM document_chunks c
       WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.blob_id = c.blob_id)`);
  }
}

/** Migrations of the compliance schema, in order (the outbox/inbox tables come from the events kit). */
export const migrations: { name: string; class: Constructor<Migration> }[] = [
  { name: '0001_compliance_tables', class: ComplianceTables },
  { name: '0010_sealed_personal_data', class: SealedPersonalDataMigration },
  { name: '0011_document_request_key', class: DocumentRequestKeyMigration },
  { name: '0012_unreferenced_blobs', class: UnreferencedBlobsMigration },
];
