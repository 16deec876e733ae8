import { Migration } from '@sluice/store';
import type { Constructor } from '@mikro-orm/core';

class M0001Initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      CREATE TABLE auth_method (
        id text PRIMARY KEY,
        platform_id text NOT NULL,
        account_id text NOT NULL,
        type text NOT NULL CHECK (type IN ('OAUTH', 'EMAIL_OTP', 'PASSKEY')),
        nickname text NOT NULL,
        email text,
        credential_id text,
        webauthn_public_key bytea,
        webauthn_counter bigint,
        webauthn_transports text[] NOT NULL DEFAULT '{}',
        oidc_issuer text,
        oidc_subject text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        revoked_at timestamptz,
        CHECK (type <> 'PASSKEY' OR (credential_id IS NOT NULL AND webauthn_public_key IS NOT NULL)),
        CHECK (type <> 'EMAIL_OTP' OR email IS NOT NULL),
        CHECK (type <> 'OAUTH' OR (oidc_issuer IS NOT NULL AND oidc_subject IS NOT NULL))
      )`);
    this.addSql(`CREATE INDEX auth_method_account ON auth_method (platform_id, account_id, created_at)`);
    this.addSql(`CREATE UNIQUE INDEX auth_method_one_email_otp ON auth_method (account_id) WHERE type = 'EMAIL_OTP' AND revoked_at IS NULL`);
    this.addSql(`CREATE UNIQUE INDEX auth_method_one_passkey ON auth_method (account_id) WHERE type = 'PASSKEY' AND revoked_at IS NULL`);
    this.addSql(`CREATE UNIQUE INDEX auth_method_oauth_identity ON auth_method (account_id, oidc_issuer, oidc_subject) WHERE type = 'OAUTH' AND revoked_at IS NULL`);
    this.addSql(`CREATE UNIQUE INDEX auth_method_webauthn_credential ON auth_method (platform_id, credential_id) WHERE credential_id IS NOT NULL AND revoked_at IS NULL`);
    this.addSql(`
      CREATE TABLE otp_challenge (
        id text PRIMARY KEY,
        auth_method_id text NOT NULL REFERENCES auth_method (id),
        code_hash text NOT NULL,
        attempts int NOT NULL DEFAULT 0,
        expires_at timestamptz NOT NULL,
        consumed_at timestamptz,
        created_at timestamptz NOT NULL
      )`);
    this.addSql(`CREATE INDEX otp_challenge_method ON otp_challenge (auth_method_id, created_at DESC)`);
    this.addSql(`
      CREATE TABLE passkey_challenge (
        request_id text PRIMARY KEY,
        auth_method_id text NOT NULL REFERENCES auth_method (id),
        challenge text NOT NULL,
        client_public_key text NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL
      )`);
    this.addSql(`
      CREATE TABLE session (
        id text PRIMARY KEY,
        platform_id text NOT NULL,
        account_id text NOT NULL,
        auth_method_id text NOT NULL REFERENCES auth_method (id),
        public_key text NOT NULL,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz,
        created_at timestamptz NOT NULL
      )`);
    this.addSql(`CREATE INDEX session_public_key ON session (public_key)`);
    this.addSql(`CREATE INDEX session_account ON session (platform_id, account_id, created_at)`);
    this.addSql(`
      CREATE TABLE signing_request (
        request_id text PRIMARY KEY,
        platform_id text NOT NULL,
        account_id text NOT NULL,
        action text NOT NULL,
        body_sha256 text NOT NULL,
        payload_to_sign text NOT NULL,
        issued_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        consumed_at timestamptz,
        session_id text
      )`);
    this.addSql(`
      CREATE TABLE oidc_token_use (
        token_sha256 text PRIMARY KEY,
        used_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL
      )`);
    this.addSql(`
      CREATE TABLE wallet_key (
        account_id text PRIMARY KEY,
        platform_id text NOT NULL,
        sealed_mnemonic text NOT NULL,
        created_at timestamptz NOT NULL
      )`);
  }
}

/** Finds the live EMAIL_OTP credentials of a platform with an address (PATCH answers 409 EMAIL_OTP_EMAIL_ALREADY_EXISTS). */
class M0050EmailOtpAddress extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE INDEX auth_method_email_otp_address ON auth_method (platform_id, lower(email)) WHERE type = 'EMAIL_OTP' AND revoked_at IS NULL`);
  }
}

/** Migrations of the wallet_auth schema, in order (the outbox/inbox tables come from the events kit). */
export const migrations: { name: string; class: Constructor<Migration> }[] = [
  { name: '0001_initial', class: M0001Initial },
  { name: '0050_email_otp_address', class: M0050EmailOtpAddress },
];
