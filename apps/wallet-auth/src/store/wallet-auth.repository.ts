import { transactional, isUniqueViolation, type EntityManager, type MikroORM } from '@sluice/store';
import { fail } from '../domain/errors.js';
import type {
  AuthMethodRecord,
  AuthMethodType,
  ChallengeLifetime,
  OtpChallengeRecord,
  PasskeyChallengeRecord,
  SessionRecord,
  SigningRequestRecord,
} from '../domain/model.js';

// Exact SQL for every table (no ORM entities): the flows rest on statements an entity manager does not
// write — conditional consumes (`UPDATE … WHERE consumed_at IS NULL AND expires_at > ? RETURNING`), an
// advisory lock per account, partial unique indexes turned into public errors — and each table has one
// row type (as the driver returns it: timestamptz and bigint as text, bytea as Buffer) and one mapper.

/** A transaction (or plain connection) the repository runs SQL on. */
export type Tx = EntityManager;

/** The columns `auth_method` and `session` share: an account's record, revocable. */
interface AccountScopedRow {
  id: string;
  platform_id: string;
  account_id: string;
  created_at: string;
  revoked_at: string | null;
}

interface AuthMethodRow extends AccountScopedRow {
  type: AuthMethodType;
  nickname: string;
  email: string | null;
  credential_id: string | null;
  webauthn_public_key: Buffer | null;
  webauthn_counter: string | null;
  webauthn_transports: string[];
  oidc_issuer: string | null;
  oidc_subject: string | null;
  updated_at: string;
}

interface SessionRow extends AccountScopedRow {
  auth_method_id: string;
  public_key: string;
  expires_at: string;
}

interface OtpChallengeRow {
  id: string;
  auth_method_id: string;
  code_hash: string;
  attempts: number;
  expires_at: string;
  consumed_at: string | null;
  created_at: string;
}

interface PasskeyChallengeRow {
  request_id: string;
  auth_method_id: string;
  challenge: string;
  client_public_key: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

interface SigningRequestRow {
  request_id: string;
  platform_id: string;
  account_id: string;
  action: string;
  body_sha256: string;
  payload_to_sign: string;
  issued_at: string;
  expires_at: string;
  consumed_at: string | null;
  session_id: string | null;
}

interface WalletKeyRow {
  account_id: string;
  platform_id: string;
  sealed_mnemonic: string;
  created_at: string;
}

// oidc_token_use (token_sha256, used_at, expires_at) is only inserted and purged, never read back.

const date = (v: string): Date => new Date(v);
const optDate = (v: string | null): Date | undefined => (v === null ? undefined : new Date(v));
const opt = <T>(v: T | null): T | undefined => v ?? undefined;

function accountScoped(r: AccountScopedRow) {
  return { id: r.id, platformId: r.platform_id, accountId: r.account_id, createdAt: date(r.created_at), revokedAt: optDate(r.revoked_at) };
}

function toAuthMethod(r: AuthMethodRow): AuthMethodRecord {
  return {
    ...accountScoped(r),
    type: r.type,
    nickname: r.nickname,
    email: opt(r.email),
    credentialId: opt(r.credential_id),
    webauthnPublicKey: r.webauthn_public_key ? new Uint8Array(r.webauthn_public_key) : undefined,
    webauthnCounter: r.webauthn_counter === null ? undefined : Number(r.webauthn_counter),
    webauthnTransports: r.webauthn_transports,
    oidcIssuer: opt(r.oidc_issuer),
    oidcSubject: opt(r.oidc_subject),
    updatedAt: date(r.updated_at),
  };
}

function toSession(r: SessionRow): SessionRecord {
  return { ...accountScoped(r), authMethodId: r.auth_method_id, publicKey: r.public_key, expiresAt: date(r.expires_at) };
}

/** The columns both challenge tables share (their use is marked by `consumed_at` / `used_at`, not read back). */
function challengeLifetime(r: { auth_method_id: string; expires_at: string; created_at: string }): ChallengeLifetime {
  return { authMethodId: r.auth_method_id, expiresAt: date(r.expires_at), createdAt: date(r.created_at) };
}

function toOtpChallenge(r: OtpChallengeRow): OtpChallengeRecord {
  return { ...challengeLifetime(r), id: r.id, codeHash: r.code_hash };
}

function toPasskeyChallenge(r: PasskeyChallengeRow): PasskeyChallengeRecord {
  return { ...challengeLifetime(r), requestId: r.request_id, challenge: r.challenge, clientPublicKey: r.client_public_key };
}

function toSigningRequest(r: SigningRequestRow): SigningRequestRecord {
  return {
    requestId: r.request_id,
    platformId: r.platform_id,
    accountId: r.account_id,
    action: r.action,
    bodySha256: r.body_sha256,
    payloadToSign: r.payload_to_sign,
    issuedAt: date(r.issued_at),
    expiresAt: date(r.expires_at),
    consumedAt: optDate(r.consumed_at),
    sessionId: opt(r.session_id),
  };
}

/** The first row of a statement, if any. */
async function first<T extends object>(tx: Tx, sql: string, params: unknown[]): Promise<T | undefined> {
  return (await tx.execute<T[]>(sql, params))[0];
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
    return this.orm.em.fork();
  }

  // ---- credentials (auth_method) ------------------------------------------

  async insertAuthMethod(tx: Tx, m: Omit<AuthMethodRecord, 'revokedAt'>): Promise<void> {
    try {
      await tx.execute(
        `INSERT INTO auth_method (id, platform_id, account_id, type, nickname, email, credential_id, webauthn_public_key,
           webauthn_counter, webauthn_transports, oidc_issuer, oidc_subject, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ARRAY(SELECT jsonb_array_elements_text(?::jsonb)), ?, ?, ?, ?)`,
        [
          m.id, m.platformId, m.accountId, m.type, m.nickname, m.email ?? null, m.credentialId ?? null,
          m.webauthnPublicKey ? Buffer.from(m.webauthnPublicKey) : null, m.webauthnCounter ?? null,
          JSON.stringify(m.webauthnTransports ?? []), m.oidcIssuer ?? null, m.oidcSubject ?? null, m.createdAt, m.updatedAt,
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

  /** A live (unrevoked) credential of the platform; `lock` holds its row until the transaction ends. */
  async getAuthMethod(tx: Tx, platformId: string, id: string, lock = false): Promise<AuthMethodRecord | undefined> {
    const r = await first<AuthMethodRow>(
      tx,
      `SELECT * FROM auth_method WHERE id = ? AND platform_id = ? AND revoked_at IS NULL${lock ? ' FOR UPDATE' : ''}`,
      [id, platformId],
    );
    return r && toAuthMethod(r);
  }

  /** The account's live credentials, oldest first. */
  listAuthMethods(tx: Tx, platformId: string, accountId: string): Promise<AuthMethodRecord[]> {
    return this.selectAuthMethods(tx, platformId, accountId, '');
  }

  /** Locks the account's credentials (serialises add/revoke on one account, the first registration included). */
  async lockAuthMethods(tx: Tx, platformId: string, accountId: string): Promise<AuthMethodRecord[]> {
    // Also serialises the very first registration, when there is no row to lock yet.
    await tx.execute(`SELECT pg_advisory_xact_lock(hashtext(?))`, [`wallet-auth:account:${accountId}`]);
    return this.selectAuthMethods(tx, platformId, accountId, ' FOR UPDATE');
  }

  private async selectAuthMethods(tx: Tx, platformId: string, accountId: string, lock: '' | ' FOR UPDATE'): Promise<AuthMethodRecord[]> {
    const rows = await tx.execute<AuthMethodRow[]>(
      `SELECT * FROM auth_method WHERE platform_id = ? AND account_id = ? AND revoked_at IS NULL ORDER BY created_at, id${lock}`,
      [platformId, accountId],
    );
    return rows.map(toAuthMethod);
  }

  /**
   * Whether a live EMAIL_OTP credential of the platform has `email` (compared case-insensitively).
   * `lock` first takes the address's advisory lock, so two updates to one address are serialised.
   */
  async emailOtpAddressTaken(tx: Tx, platformId: string, email: string, lock = false): Promise<boolean> {
    if (lock) await tx.execute(`SELECT pg_advisory_xact_lock(hashtext(?))`, [`wallet-auth:email:${platformId}:${email.toLowerCase()}`]);
    const r = await first<{ one: number }>(
      tx,
      `SELECT 1 AS one FROM auth_method WHERE platform_id = ? AND type = 'EMAIL_OTP' AND revoked_at IS NULL AND lower(email) = lower(?) LIMIT 1`,
      [platformId, email],
    );
    return r !== undefined;
  }

  async updateEmail(tx: Tx, id: string, email: string, now: Date): Promise<void> {
    await tx.execute(`UPDATE auth_method SET email = ?, nickname = ?, updated_at = ? WHERE id = ?`, [email, email, now, id]);
  }

  async updateCounter(tx: Tx, id: string, counter: number, now: Date): Promise<void> {
    await tx.execute(`UPDATE auth_method SET webauthn_counter = ?, updated_at = ? WHERE id = ?`, [counter, now, id]);
  }

  /** Revokes the credential and every session issued from it. */
  async revokeAuthMethod(tx: Tx, id: string, now: Date): Promise<void> {
    await tx.execute(`UPDATE auth_method SET revoked_at = ?, updated_at = ? WHERE id = ? AND revoked_at IS NULL`, [now, now, id]);
    await tx.execute(`UPDATE session SET revoked_at = ? WHERE auth_method_id = ? AND revoked_at IS NULL`, [now, id]);
  }

  // ---- OTP (otp_challenge) -------------------------------------------------

  /** Issues a new OTP for the credential; the previous one, if live, is consumed (a new code replaces it). */
  async replaceOtp(tx: Tx, o: OtpChallengeRecord): Promise<void> {
    await tx.execute(`UPDATE otp_challenge SET consumed_at = ? WHERE auth_method_id = ? AND consumed_at IS NULL`, [o.createdAt, o.authMethodId]);
    await tx.execute(`INSERT INTO otp_challenge (id, auth_method_id, code_hash, expires_at, created_at) VALUES (?, ?, ?, ?, ?)`, [
      o.id, o.authMethodId, o.codeHash, o.expiresAt, o.createdAt,
    ]);
  }

  /** When the credential's latest OTP was issued, if any. */
  async lastOtpIssuedAt(tx: Tx, authMethodId: string): Promise<Date | undefined> {
    const r = await first<OtpChallengeRow>(tx, `SELECT * FROM otp_challenge WHERE auth_method_id = ? ORDER BY created_at DESC LIMIT 1`, [authMethodId]);
    return r && toOtpChallenge(r).createdAt;
  }

  /**
   * Counts one attempt on the live OTP of a credential, atomically; undefined when none is
   * live (none issued, expired, consumed or out of attempts).
   */
  async attemptOtp(tx: Tx, authMethodId: string, maxAttempts: number, now: Date): Promise<OtpChallengeRecord | undefined> {
    const r = await first<OtpChallengeRow>(
      tx,
      `UPDATE otp_challenge SET attempts = attempts + 1
        WHERE id = (SELECT id FROM otp_challenge WHERE auth_method_id = ? AND consumed_at IS NULL ORDER BY created_at DESC LIMIT 1)
          AND consumed_at IS NULL AND expires_at > ? AND attempts < ?
        RETURNING *`,
      [authMethodId, now, maxAttempts],
    );
    return r && toOtpChallenge(r);
  }

  /** Marks the OTP used; false when it already was. */
  async consumeOtp(tx: Tx, id: string, now: Date): Promise<boolean> {
    const r = await tx.execute<Pick<OtpChallengeRow, 'id'>[]>(`UPDATE otp_challenge SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL RETURNING id`, [now, id]);
    return r.length === 1;
  }

  // ---- passkey challenges (passkey_challenge) ------------------------------

  async insertPasskeyChallenge(tx: Tx, c: PasskeyChallengeRecord): Promise<void> {
    await tx.execute(
      `INSERT INTO passkey_challenge (request_id, auth_method_id, challenge, client_public_key, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
      [c.requestId, c.authMethodId, c.challenge, c.clientPublicKey, c.expiresAt, c.createdAt],
    );
  }

  /** Marks the challenge used, once; undefined when unknown, of another credential, used or expired. */
  async consumePasskeyChallenge(tx: Tx, requestId: string, authMethodId: string, now: Date): Promise<PasskeyChallengeRecord | undefined> {
    const r = await first<PasskeyChallengeRow>(
      tx,
      `UPDATE passkey_challenge SET used_at = ? WHERE request_id = ? AND auth_method_id = ? AND used_at IS NULL AND expires_at > ? RETURNING *`,
      [now, requestId, authMethodId, now],
    );
    return r && toPasskeyChallenge(r);
  }

  // ---- sessions (session) --------------------------------------------------

  async insertSession(tx: Tx, s: Omit<SessionRecord, 'revokedAt'>): Promise<void> {
    await tx.execute(`INSERT INTO session (id, platform_id, account_id, auth_method_id, public_key, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
      s.id, s.platformId, s.accountId, s.authMethodId, s.publicKey, s.expiresAt, s.createdAt,
    ]);
  }

  async listActiveSessions(tx: Tx, platformId: string, accountId: string, now: Date): Promise<SessionRecord[]> {
    const rows = await tx.execute<SessionRow[]>(
      `SELECT * FROM session WHERE platform_id = ? AND account_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at, id`,
      [platformId, accountId, now],
    );
    return rows.map(toSession);
  }

  /** A session of the platform (any state); `lock` holds its row until the transaction ends. */
  async getSession(tx: Tx, platformId: string, id: string, lock = false): Promise<SessionRecord | undefined> {
    const r = await first<SessionRow>(tx, `SELECT * FROM session WHERE id = ? AND platform_id = ?${lock ? ' FOR UPDATE' : ''}`, [id, platformId]);
    return r && toSession(r);
  }

  /** Sessions bound to a public key (any account, any state), newest first, each with whether its credential is revoked. */
  async sessionsByKey(tx: Tx, platformId: string, publicKey: string): Promise<(SessionRecord & { credentialRevoked: boolean })[]> {
    const rows = await tx.execute<(SessionRow & { credential_revoked: boolean })[]>(
      `SELECT s.*, (m.revoked_at IS NOT NULL) AS credential_revoked FROM session s JOIN auth_method m ON m.id = s.auth_method_id
        WHERE s.platform_id = ? AND s.public_key = ? ORDER BY s.created_at DESC`,
      [platformId, publicKey],
    );
    return rows.map((r) => ({ ...toSession(r), credentialRevoked: r.credential_revoked }));
  }

  async revokeSession(tx: Tx, id: string, now: Date): Promise<void> {
    await tx.execute(`UPDATE session SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`, [now, id]);
  }

  // ---- signing requests (signing_request) ----------------------------------

  async insertSigningRequest(tx: Tx, r: Omit<SigningRequestRecord, 'consumedAt' | 'sessionId'>): Promise<void> {
    await tx.execute(
      `INSERT INTO signing_request (request_id, platform_id, account_id, action, body_sha256, payload_to_sign, issued_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.requestId, r.platformId, r.accountId, r.action, r.bodySha256, r.payloadToSign, r.issuedAt, r.expiresAt],
    );
  }

  async getSigningRequest(tx: Tx, platformId: string, requestId: string): Promise<SigningRequestRecord | undefined> {
    const r = await first<SigningRequestRow>(tx, `SELECT * FROM signing_request WHERE request_id = ? AND platform_id = ?`, [requestId, platformId]);
    return r && toSigningRequest(r);
  }

  /** Consumes the request id atomically: true for exactly one caller while it is unexpired. */
  async consumeSigningRequest(tx: Tx, requestId: string, sessionId: string | undefined, now: Date): Promise<boolean> {
    const r = await tx.execute<Pick<SigningRequestRow, 'request_id'>[]>(
      `UPDATE signing_request SET consumed_at = ?, session_id = ? WHERE request_id = ? AND consumed_at IS NULL AND expires_at > ? RETURNING request_id`,
      [now, sessionId ?? null, requestId, now],
    );
    return r.length === 1;
  }

  // ---- OIDC replay (oidc_token_use) ----------------------------------------

  /** Records a token as used; false when it was used before. Purges records expired over an hour ago. */
  async recordOidcToken(tx: Tx, tokenSha256: string, now: Date, expiresAt: Date): Promise<boolean> {
    await tx.execute(`DELETE FROM oidc_token_use WHERE expires_at < ?`, [new Date(now.getTime() - 3600_000)]);
    const r = await tx.execute<{ token_sha256: string }[]>(
      `INSERT INTO oidc_token_use (token_sha256, used_at, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING token_sha256`,
      [tokenSha256, now, expiresAt],
    );
    return r.length === 1;
  }

  // ---- wallet keys (wallet_key) --------------------------------------------

  async insertWalletKeyIfAbsent(tx: Tx, accountId: string, platformId: string, sealed: string, now: Date): Promise<void> {
    await tx.execute(`INSERT INTO wallet_key (account_id, platform_id, sealed_mnemonic, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (account_id) DO NOTHING`, [
      accountId, platformId, sealed, now,
    ]);
  }

  /** The account's sealed mnemonic (custody envelope), if it has a wallet. */
  async getWalletKey(tx: Tx, platformId: string, accountId: string): Promise<string | undefined> {
    const r = await first<WalletKeyRow>(tx, `SELECT * FROM wallet_key WHERE account_id = ? AND platform_id = ?`, [accountId, platformId]);
    return r?.sealed_mnemonic;
  }
}
