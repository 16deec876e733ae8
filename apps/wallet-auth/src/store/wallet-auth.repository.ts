import { transactional, isUniqueViolation, toBigInt, type EntityManager, type MikroORM } from '@sluice/store';
import { fail } from '../domain/errors.js';
import type { AuthMethodRecord, AuthMethodType, SessionRecord, SigningRequestRecord } from '../domain/model.js';

/** A transaction (or plain connection) the repository runs SQL on. */
export type Tx = EntityManager;

type Row = Record<string, unknown>;

async function all<T = Row>(tx: Tx, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await tx.getConnection().execute(sql, params, 'all', tx.getTransactionContext())) as T[];
}

async function one<T = Row>(tx: Tx, sql: string, params: unknown[] = []): Promise<T | undefined> {
  return (await all<T>(tx, sql, params))[0];
}

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const optDate = (v: unknown): Date | undefined => (v === null || v === undefined ? undefined : date(v));

function toAuthMethod(r: Row): AuthMethodRecord {
  return {
    id: r.id as string,
    platformId: r.platform_id as string,
    accountId: r.account_id as string,
    type: r.type as AuthMethodType,
    nickname: r.nickname as string,
    email: (r.email as string | null) ?? undefined,
    credentialId: (r.credential_id as string | null) ?? undefined,
    webauthnPublicKey: r.webauthn_public_key ? new Uint8Array(r.webauthn_public_key as Buffer) : undefined,
    webauthnCounter: r.webauthn_counter === null || r.webauthn_counter === undefined ? undefined : Number(toBigInt(r.webauthn_counter)),
    webauthnTransports: (r.webauthn_transports as string[] | null) ?? [],
    oidcIssuer: (r.oidc_issuer as string | null) ?? undefined,
    oidcSubject: (r.oidc_subject as string | null) ?? undefined,
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
    revokedAt: optDate(r.revoked_at),
  };
}

function toSession(r: Row): SessionRecord {
  return {
    id: r.id as string,
    platformId: r.platform_id as string,
    accountId: r.account_id as string,
    authMethodId: r.auth_method_id as string,
    publicKey: r.public_key as string,
    expiresAt: date(r.expires_at),
    revokedAt: optDate(r.revoked_at),
    createdAt: date(r.created_at),
  };
}

function toSigningRequest(r: Row): SigningRequestRecord {
  return {
    requestId: r.request_id as string,
    platformId: r.platform_id as string,
    accountId: r.account_id as string,
    action: r.action as string,
    bodySha256: r.body_sha256 as string,
    payloadToSign: r.payload_to_sign as string,
    issuedAt: date(r.issued_at),
    expiresAt: date(r.expires_at),
    consumedAt: optDate(r.consumed_at),
  };
}

/** SQL access to the wallet_auth schema (the connection's search_path). */
export class WalletAuthRepository {
  constructor(private readonly orm: MikroORM) {}

  /** Runs `fn` in a transaction (retried on serialization failures). */
  tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return transactional(this.orm, fn);
  }

  /** A non-transactional handle for single reads. */
  get read(): Tx {
    return this.orm.em.fork() as Tx;
  }

  // ---- credentials -------------------------------------------------------

  async insertAuthMethod(tx: Tx, m: Omit<AuthMethodRecord, 'revokedAt'>): Promise<void> {
    try {
      await all(
        tx,
        `INSERT INTO auth_method (id, platform_id, account_id, type, nickname, email, credential_id, webauthn_public_key,
           webauthn_counter, webauthn_transports, oidc_issuer, oidc_subject, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          m.id, m.platformId, m.accountId, m.type, m.nickname, m.email ?? null, m.credentialId ?? null,
          m.webauthnPublicKey ? Buffer.from(m.webauthnPublicKey) : null, m.webauthnCounter ?? null,
          `{${(m.webauthnTransports ?? []).map((t) => `"${t.replace(/["\\]/g, '')}"`).join(',')}}`,
          m.oidcIssuer ?? null, m.oidcSubject ?? null, m.createdAt, m.updatedAt,
        ],
      );
    } catch (err) {
      if (isUniqueViolation(err, 'auth_method_one_email_otp'))
        throw fail('EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS', 'The account already has an EMAIL_OTP credential');
      if (isUniqueViolation(err, 'auth_method_one_passkey'))
        throw fail('PASSKEY_CREDENTIAL_ALREADY_EXISTS', 'The account already has a PASSKEY credential');
      if (isUniqueViolation(err, 'auth_method_oauth_identity'))
        throw fail('OAUTH_CREDENTIAL_ALREADY_EXISTS', 'This OIDC identity is already a credential of the account');
      if (isUniqueViolation(err, 'auth_method_webauthn_credential'))
        throw fail('PASSKEY_CREDENTIAL_ALREADY_EXISTS', 'This passkey is already registered');
      throw err;
    }
  }

  async getAuthMethod(tx: Tx, platformId: string, id: string, lock = false): Promise<AuthMethodRecord | undefined> {
    const r = await one(tx, `SELECT * FROM auth_method WHERE id = ? AND platform_id = ? AND revoked_at IS NULL${lock ? ' FOR UPDATE' : ''}`, [id, platformId]);
    return r && toAuthMethod(r);
  }

  async listAuthMethods(tx: Tx, platformId: string, accountId: string): Promise<AuthMethodRecord[]> {
    const rows = await all(tx, `SELECT * FROM auth_method WHERE platform_id = ? AND account_id = ? AND revoked_at IS NULL ORDER BY created_at, id`, [platformId, accountId]);
    return rows.map(toAuthMethod);
  }

  /** Locks the account's credentials (serialises add/revoke on one account, the first registration included). */
  async lockAuthMethods(tx: Tx, platformId: string, accountId: string): Promise<AuthMethodRecord[]> {
    // Also serialises the very first registration, when there is no row to lock yet.
    await all(tx, `SELECT pg_advisory_xact_lock(hashtext(?))`, [`wallet-auth:account:${accountId}`]);
    const rows = await all(tx, `SELECT * FROM auth_method WHERE platform_id = ? AND account_id = ? AND revoked_at IS NULL ORDER BY created_at, id FOR UPDATE`, [platformId, accountId]);
    return rows.map(toAuthMethod);
  }

  async updateEmail(tx: Tx, id: string, email: string, now: Date): Promise<void> {
    await all(tx, `UPDATE auth_method SET email = ?, nickname = ?, updated_at = ? WHERE id = ?`, [email, email, now, id]);
  }

  async updateCounter(tx: Tx, id: string, counter: number, now: Date): Promise<void> {
    await all(tx, `UPDATE auth_method SET webauthn_counter = ?, updated_at = ? WHERE id = ?`, [counter, now, id]);
  }

  /** Revokes the credential and every session issued from it. */
  async revokeAuthMethod(tx: Tx, id: string, now: Date): Promise<void> {
    await all(tx, `UPDATE auth_method SET revoked_at = ?, updated_at = ? WHERE id = ? AND revoked_at IS NULL`, [now, now, id]);
    await all(tx, `UPDATE session SET revoked_at = ? WHERE auth_method_id = ? AND revoked_at IS NULL`, [now, id]);
  }

  // ---- OTP ---------------------------------------------------------------

  async replaceOtp(tx: Tx, o: { id: string; authMethodId: string; codeHash: string; expiresAt: Date; now: Date }): Promise<void> {
    await all(tx, `UPDATE otp_challenge SET consumed_at = ? WHERE auth_method_id = ? AND consumed_at IS NULL`, [o.now, o.authMethodId]);
    await all(tx, `INSERT INTO otp_challenge (id, auth_method_id, code_hash, expires_at, created_at) VALUES (?, ?, ?, ?, ?)`, [
      o.id, o.authMethodId, o.codeHash, o.expiresAt, o.now,
    ]);
  }

  /** When the credential's latest OTP was issued, if any. */
  async lastOtpIssuedAt(tx: Tx, authMethodId: string): Promise<Date | undefined> {
    const r = await one(tx, `SELECT max(created_at) AS at FROM otp_challenge WHERE auth_method_id = ?`, [authMethodId]);
    return optDate(r?.at);
  }

  /**
   * Counts one attempt on the live OTP of a credential, atomically; undefined when none is
   * live (none issued, expired, consumed or out of attempts).
   */
  async attemptOtp(tx: Tx, authMethodId: string, maxAttempts: number, now: Date): Promise<{ id: string; codeHash: string } | undefined> {
    const r = await one(
      tx,
      `UPDATE otp_challenge SET attempts = attempts + 1
        WHERE id = (SELECT id FROM otp_challenge WHERE auth_method_id = ? AND consumed_at IS NULL ORDER BY created_at DESC LIMIT 1)
          AND consumed_at IS NULL AND expires_at > ? AND attempts < ?
        RETURNING id, code_hash`,
      [authMethodId, now, maxAttempts],
    );
    return r && { id: r.id as string, codeHash: r.code_hash as string };
  }

  async consumeOtp(tx: Tx, id: string, now: Date): Promise<boolean> {
    const r = await all(tx, `UPDATE otp_challenge SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL RETURNING id`, [now, id]);
    return r.length === 1;
  }

  // ---- passkey challenges ------------------------------------------------

  async insertPasskeyChallenge(tx: Tx, c: { requestId: string; authMethodId: string; challenge: string; clientPublicKey: string; expiresAt: Date; now: Date }): Promise<void> {
    await all(tx, `INSERT INTO passkey_challenge (request_id, auth_method_id, challenge, client_public_key, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)`, [
      c.requestId, c.authMethodId, c.challenge, c.clientPublicKey, c.expiresAt, c.now,
    ]);
  }

  /** Marks the challenge used, once; undefined when unknown, of another credential, used or expired. */
  async consumePasskeyChallenge(tx: Tx, requestId: string, authMethodId: string, now: Date): Promise<{ challenge: string; clientPublicKey: string } | undefined> {
    const r = await one(
      tx,
      `UPDATE passkey_challenge SET used_at = ? WHERE request_id = ? AND auth_method_id = ? AND used_at IS NULL AND expires_at > ? RETURNING challenge, client_public_key`,
      [now, requestId, authMethodId, now],
    );
    return r && { challenge: r.challenge as string, clientPublicKey: r.client_public_key as string };
  }

  // ---- sessions ----------------------------------------------------------

  async insertSession(tx: Tx, s: Omit<SessionRecord, 'revokedAt'>): Promise<void> {
    await all(tx, `INSERT INTO session (id, platform_id, account_id, auth_method_id, public_key, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
      s.id, s.platformId, s.accountId, s.authMethodId, s.publicKey, s.expiresAt, s.createdAt,
    ]);
  }

  async listActiveSessions(tx: Tx, platformId: string, accountId: string, now: Date): Promise<SessionRecord[]> {
    const rows = await all(tx, `SELECT * FROM session WHERE platform_id = ? AND account_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at, id`, [platformId, accountId, now]);
    return rows.map(toSession);
  }

  async getSession(tx: Tx, platformId: string, id: string): Promise<SessionRecord | undefined> {
    const r = await one(tx, `SELECT * FROM session WHERE id = ? AND platform_id = ?`, [id, platformId]);
    return r && toSession(r);
  }

  /** Sessions bound to a public key (any account, any state), newest first. */
  async sessionsByKey(tx: Tx, platformId: string, publicKey: string): Promise<(SessionRecord & { credentialRevoked: boolean })[]> {
    const rows = await all(
      tx,
      `SELECT s.*, (m.revoked_at IS NOT NULL) AS credential_revoked FROM session s JOIN auth_method m ON m.id = s.auth_method_id
        WHERE s.platform_id = ? AND s.public_key = ? ORDER BY s.created_at DESC`,
      [platformId, publicKey],
    );
    return rows.map((r) => ({ ...toSession(r), credentialRevoked: Boolean(r.credential_revoked) }));
  }

  async revokeSession(tx: Tx, id: string, now: Date): Promise<void> {
    await all(tx, `UPDATE session SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, [now, id]);
  }

  // ---- signing requests --------------------------------------------------

  async insertSigningRequest(tx: Tx, r: Omit<SigningRequestRecord, 'consumedAt'>): Promise<void> {
    await all(
      tx,
      `INSERT INTO signing_request (request_id, platform_id, account_id, action, body_sha256, payload_to_sign, issued_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.requestId, r.platformId, r.accountId, r.action, r.bodySha256, r.payloadToSign, r.issuedAt, r.expiresAt],
    );
  }

  async getSigningRequest(tx: Tx, platformId: string, requestId: string): Promise<SigningRequestRecord | undefined> {
    const r = await one(tx, `SELECT * FROM signing_request WHERE request_id = ? AND platform_id = ?`, [requestId, platformId]);
    return r && toSigningRequest(r);
  }

  /** Consumes the request id atomically: true for exactly one caller while it is unexpired. */
  async consumeSigningRequest(tx: Tx, requestId: string, sessionId: string | undefined, now: Date): Promise<boolean> {
    const r = await all(
      tx,
      `UPDATE signing_request SET consumed_at = ?, session_id = ? WHERE request_id = ? AND consumed_at IS NULL AND expires_at > ? RETURNING request_id`,
      [now, sessionId ?? null, requestId, now],
    );
    return r.length === 1;
  }

  // ---- OIDC replay -------------------------------------------------------

  /** Records a token as used; false when it was used before. */
  async recordOidcToken(tx: Tx, tokenSha256: string, now: Date, expiresAt: Date): Promise<boolean> {
    await all(tx, `DELETE FROM oidc_token_use WHERE expires_at < ?`, [new Date(now.getTime() - 3600_000)]);
    const r = await all(tx, `INSERT INTO oidc_token_use (token_sha256, used_at, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING token_sha256`, [
      tokenSha256, now, expiresAt,
    ]);
    return r.length === 1;
  }

  // ---- wallet keys -------------------------------------------------------

  async insertWalletKeyIfAbsent(tx: Tx, accountId: string, platformId: string, sealed: string, now: Date): Promise<void> {
    await all(tx, `INSERT INTO wallet_key (account_id, platform_id, sealed_mnemonic, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (account_id) DO NOTHING`, [
      accountId, platformId, sealed, now,
    ]);
  }

  async getWalletKey(tx: Tx, platformId: string, accountId: string): Promise<string | undefined> {
    const r = await one(tx, `SELECT sealed_mnemonic FROM wallet_key WHERE account_id = ? AND platform_id = ?`, [accountId, platformId]);
    return r?.sealed_mnemonic as string | undefined;
  }
}
