import { randomUUID } from 'node:crypto';
import { newId, type Clock } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import {
  createExportBundle,
  createSessionBundle,
  generateMnemonic,
  openMnemonic,
  requireClientPublicKey,
  sealMnemonic,
  type ExportSigningKey,
  type MasterKeyring,
} from '../domain/crypto/index.js';
import { fail, REASON, unauthorized } from '../domain/errors.js';
import type { AuthMethodRecord, AuthMethodType, SessionRecord, Signed, SignedRetryRequest, WalletPlatform } from '../domain/model.js';
import { SANDBOX_OIDC_TOKEN, parseOidcToken, requireOidcToken, sandboxOidcIdentity } from '../domain/oidc.js';
import { generateOtp, hashOtp, otpMatches, OTP_MAX_ATTEMPTS, OTP_RESEND_INTERVAL_MS, OTP_TTL_MS, SANDBOX_OTP, validateEmail, validateOtpShape } from '../domain/otp.js';
import {
  PASSKEY_CHALLENGE_TTL_MS,
  SANDBOX_PASSKEY_SIGNATURE,
  passkeySessionChallenge,
  validateAssertion,
  validateRegistration,
  verifyPasskeyAssertion,
  verifyPasskeyRegistration,
  type Assertion,
  type Attestation,
} from '../domain/passkey.js';
import {
  parseSignedRetry,
  requireAccountId,
  requireAuthMethodType,
  requireCredentialUpdate,
  requireId,
  requirePlatformId,
} from '../domain/requests.js';
import type { Tx, WalletAuthRepository } from '../store/wallet-auth.repository.js';
import type { OidcVerifier, OtpMailer, PlatformDirectory } from './ports.js';
import { isRetry, type SigningService } from './signing.service.js';

export interface CreateCredentialInput {
  accountId: string;
  /** Absent when the request named no known type (refused). */
  type?: AuthMethodType;
  email?: string;
  oidcToken?: string;
  nickname?: string;
  challenge?: string;
  attestation?: Attestation;
}

export interface VerifyCredentialInput {
  /** Absent when the request named no known type (refused). */
  type?: AuthMethodType;
  otp?: string;
  oidcToken?: string;
  clientPublicKey?: string;
  assertion?: Partial<Assertion>;
  requestId?: string;
}

export interface IssuedSession extends SessionRecord {
  encryptedSessionSigningKey: string;
  authMethod: AuthMethodRecord;
}

/** A credential's `/challenge` answer: PASSKEY adds the WebAuthn challenge bound to the client key. */
export type CredentialChallenge =
  | { authMethod: AuthMethodRecord }
  | { authMethod: AuthMethodRecord; challenge: string; requestId: string; expiresAt: Date };

/** An active session with the credential it was issued from. */
export interface ActiveSession {
  session: SessionRecord;
  authMethod: AuthMethodRecord;
}

export interface CredentialsDeps {
  repo: WalletAuthRepository;
  signing: SigningService;
  platforms: PlatformDirectory;
  clock: Clock;
  logger: Logger;
  mailer: OtpMailer;
  oidc: OidcVerifier;
  keyring: MasterKeyring;
  exportSigningKey?: ExportSigningKey;
  sessionTtlMs: number;
}

/** Credentials, sessions and wallet export: every flow of the wallet-auth API. */
export class CredentialsService {
  constructor(private readonly d: CredentialsDeps) {}

  private now(): Date {
    return this.d.clock.now();
  }

  /** The calling platform's embedded-wallet settings (identity, asked before any transaction opens). */
  private platform(platformId: string): Promise<WalletPlatform> {
    return this.d.platforms.get(requirePlatformId(platformId));
  }

  private async getCredential(platformId: string, id: string): Promise<AuthMethodRecord> {
    const m = await this.d.repo.getAuthMethod(this.d.repo.read, platformId, requireId(id, 'AuthMethod', 'id'));
    if (!m) throw fail('CREDENTIAL_NOT_FOUND', `No credential ${id}`);
    return m;
  }

  /**
   * 409 EMAIL_OTP_EMAIL_ALREADY_EXISTS when a live EMAIL_OTP credential of the platform, on this or
   * another account, already has the address (the reference's condition for PATCH /auth/credentials/{id}).
   */
  private async requireEmailFree(tx: Tx, platformId: string, email: string, lock = false): Promise<void> {
    if (await this.d.repo.emailOtpAddressTaken(tx, platformId, email, lock))
      throw fail('EMAIL_OTP_EMAIL_ALREADY_EXISTS', 'The email address is already associated with an EMAIL_OTP credential', { field: 'email' });
  }

  /**
   * The session `id` of the platform with its credential, when it can still sign: 404 when the
   * platform has no such session, 401 SESSION_NOT_ACTIVE when it expired or it or its credential
   * was revoked. `lock` holds the credential and session rows (against a concurrent revocation).
   */
  private async activeSession(tx: Tx, platformId: string, id: string, lock = false): Promise<ActiveSession> {
    const found = await this.d.repo.getSession(tx, platformId, id);
    if (!found) throw fail('SESSION_NOT_FOUND', `No session ${id}`);
    const authMethod = await this.d.repo.getAuthMethod(tx, platformId, found.authMethodId, lock);
    const session = lock ? await this.d.repo.getSession(tx, platformId, id, true) : found;
    if (!authMethod || !session || session.revokedAt || session.expiresAt.getTime() <= this.now().getTime())
      throw fail('SESSION_NOT_ACTIVE', 'The session expired or was revoked: verify the credential again (POST /auth/credentials/{id}/verify)');
    return { session, authMethod };
  }

  /** A new session of credential `m` for the account, its key sealed to `clientPublicKey` (not yet stored). */
  private async newSession(platformId: string, m: AuthMethodRecord, clientPublicKey: string): Promise<{ session: SessionRecord; bundle: string }> {
    const bundle = await createSessionBundle(clientPublicKey);
    const now = this.now();
    const session: SessionRecord = {
      id: newId('Session'),
      platformId,
      accountId: m.accountId,
      authMethodId: m.id,
      publicKey: bundle.sessionPublicKey,
      expiresAt: new Date(now.getTime() + this.d.sessionTtlMs),
      createdAt: now,
    };
    return { session, bundle: bundle.bundle };
  }

  /** Seals a fresh mnemonic for the account unless it already has one. */
  private async ensureWalletKey(tx: Tx, platformId: string, accountId: string): Promise<void> {
    if (await this.d.repo.getWalletKey(tx, platformId, accountId)) return;
    const mnemonic = generateMnemonic();
    await this.d.repo.insertWalletKeyIfAbsent(tx, accountId, platformId, sealMnemonic(mnemonic, accountId, this.d.keyring), this.now());
  }

  private async issueOtp(tx: Tx, platform: WalletPlatform, m: AuthMethodRecord): Promise<string | undefined> {
    if (platform.environment === 'SANDBOX') return undefined;
    const now = this.now();
    const last = await this.d.repo.lastOtpIssuedAt(tx, m.id);
    if (last && now.getTime() - last.getTime() < OTP_RESEND_INTERVAL_MS)
      throw fail('OTP_RESEND_TOO_SOON', `A code was sent less than ${OTP_RESEND_INTERVAL_MS / 1000} s ago; wait before requesting another`);
    const id = randomUUID();
    const code = generateOtp(platform.otpLength);
    await this.d.repo.replaceOtp(tx, { id, authMethodId: m.id, codeHash: hashOtp(id, code), expiresAt: new Date(now.getTime() + OTP_TTL_MS), createdAt: now });
    return code;
  }

  private async deliverOtp(platform: WalletPlatform, email: string, code: string | undefined): Promise<void> {
    if (code === undefined) return;
    try {
      await this.d.mailer.send(email, code, platform.appName, OTP_TTL_MS / 60_000);
    } catch (err) {
      this.d.logger.warn({ err }, 'OTP email delivery failed');
      throw fail('OTP_DELIVERY_FAILED', 'The one-time password email could not be sent; request a new one with /challenge');
    }
  }

  /** POST /auth/credentials. */
  async create(platformId: string, input: CreateCredentialInput, signed: SignedRetryRequest): Promise<Signed<AuthMethodRecord>> {
    const platform = await this.platform(platformId);
    const type = requireAuthMethodType(input.type);
    const retry = parseSignedRetry(signed);
    const accountId = requireAccountId(input.accountId);
    const now = this.now();
    const base = { id: newId('AuthMethod'), platformId: platform.id, accountId, type, createdAt: now, updatedAt: now };
    let record: Omit<AuthMethodRecord, 'revokedAt'>;
    let oidcUse: { sha: string; exp: Date } | undefined;
    switch (type) {
      case 'EMAIL_OTP': {
        const email = validateEmail(input.email);
        record = { ...base, nickname: email, email };
        break;
      }
      case 'OAUTH': {
        const token = parseOidcToken(input.oidcToken);
        // Sandbox registration takes a token of a configured issuer at its word (its signature is not checked).
        const idn = platform.environment === 'SANDBOX' ? sandboxOidcIdentity(token, platform, now) : await this.d.oidc.verify(token, platform, now);
        if (platform.environment === 'PRODUCTION') oidcUse = { sha: idn.tokenSha256, exp: idn.expiresAt };
        record = { ...base, nickname: idn.email ?? idn.subject, oidcIssuer: idn.issuer, oidcSubject: idn.subject };
        break;
      }
      case 'PASSKEY': {
        validateRegistration(input);
        const reg = await verifyPasskeyRegistration(platform, input.challenge, input.attestation);
        record = {
          ...base,
          nickname: input.nickname.trim(),
          credentialId: reg.credentialId,
          webauthnPublicKey: reg.publicKey,
          webauthnCounter: reg.counter,
          webauthnTransports: input.attestation.transports,
        };
        break;
      }
    }
    const existing = await this.d.repo.listAuthMethods(this.d.repo.read, platform.id, accountId);
    const conflict = existing.find((m) => m.type === type && type !== 'OAUTH');
    if (conflict?.type === 'EMAIL_OTP') throw fail('EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS', 'The account already has an EMAIL_OTP credential');
    if (conflict?.type === 'PASSKEY') throw fail('PASSKEY_CREDENTIAL_ALREADY_EXISTS', 'The account already has a PASSKEY credential');
    if (existing.length > 0 && !isRetry(retry))
      return { challenge: { ...(await this.d.signing.requestSignature(platform.id, accountId, 'ADD_CREDENTIAL', retry.body)), credentialType: type } };

    let code: string | undefined;
    await this.d.repo.tx(async (tx) => {
      const locked = await this.d.repo.lockAuthMethods(tx, platform.id, accountId);
      // The first credential needs no signature; any later one (or a stray signed retry) is checked.
      if (locked.length > 0 || isRetry(retry)) {
        await this.d.signing.verifySignedRetry(tx, platform, accountId, 'ADD_CREDENTIAL', retry);
      }
      if (oidcUse && !(await this.d.repo.recordOidcToken(tx, oidcUse.sha, now, oidcUse.exp))) throw unauthorized(REASON.oidc, 'replayed');
      await this.d.repo.insertAuthMethod(tx, record);
      await this.ensureWalletKey(tx, platform.id, accountId);
      if (record.type === 'EMAIL_OTP') code = await this.issueOtp(tx, platform, record);
    });
    if (record.type === 'EMAIL_OTP') await this.deliverOtp(platform, record.email!, code);
    return { done: record };
  }

  /** GET /auth/credentials: the account's live credentials. */
  async list(platformId: string, accountId: string): Promise<AuthMethodRecord[]> {
    return this.d.repo.listAuthMethods(this.d.repo.read, platformId, requireAccountId(accountId));
  }

  /** POST /auth/credentials/{id}/challenge. */
  async challenge(platformId: string, id: string, clientPublicKey: string | undefined): Promise<CredentialChallenge> {
    const platform = await this.platform(platformId);
    const m = await this.getCredential(platform.id, id);
    if (m.type === 'OAUTH')
      throw fail('CREDENTIAL_TYPE_MISMATCH', 'OAUTH credentials have no challenge step: call /verify with a fresh OIDC token');
    if (m.type === 'EMAIL_OTP') {
      let code: string | undefined;
      await this.d.repo.tx(async (tx) => {
        code = await this.issueOtp(tx, platform, m);
      });
      await this.deliverOtp(platform, m.email!, code);
      return { authMethod: m };
    }
    const clientKey = requireClientPublicKey(clientPublicKey);
    const requestId = newId('Request');
    const now = this.now();
    const expiresAt = new Date(now.getTime() + PASSKEY_CHALLENGE_TTL_MS);
    const challenge = passkeySessionChallenge({ requestId, credentialId: m.id, clientPublicKey: clientKey, expiresAt });
    await this.d.repo.tx((tx) =>
      this.d.repo.insertPasskeyChallenge(tx, { requestId, authMethodId: m.id, challenge, clientPublicKey: clientKey.toLowerCase(), expiresAt, createdAt: now }),
    );
    return { authMethod: m, challenge, requestId, expiresAt };
  }

  /** POST /auth/credentials/{id}/verify: checks the credential and issues a session. */
  async verify(platformId: string, id: string, input: VerifyCredentialInput): Promise<IssuedSession> {
    const platform = await this.platform(platformId);
    const type = requireAuthMethodType(input.type);
    const m = await this.getCredential(platform.id, id);
    if (type !== m.type) throw fail('CREDENTIAL_TYPE_MISMATCH', `The credential is of type ${m.type}`, { field: 'type' });
    const sandbox = platform.environment === 'SANDBOX';
    const now = this.now();
    let clientPublicKey: string;
    let newCounter: number | undefined;
    let oidcUse: { sha: string; exp: Date } | undefined;
    let otpId: string | undefined;
    if (m.type === 'EMAIL_OTP') {
      const otp = validateOtpShape(input.otp);
      clientPublicKey = requireClientPublicKey(input.clientPublicKey);
      if (sandbox) {
        if (otp !== SANDBOX_OTP) throw unauthorized(REASON.otp);
      } else {
        const live = await this.d.repo.tx((tx) => this.d.repo.attemptOtp(tx, m.id, OTP_MAX_ATTEMPTS, now));
        if (!live) throw unauthorized(REASON.otp, 'expired_or_exhausted');
        if (!otpMatches(live.id, otp, live.codeHash)) throw unauthorized(REASON.otp, 'mismatch');
        otpId = live.id;
      }
    } else if (m.type === 'OAUTH') {
      const token = requireOidcToken(input.oidcToken);
      clientPublicKey = requireClientPublicKey(input.clientPublicKey);
      if (sandbox) {
        if (token !== SANDBOX_OIDC_TOKEN) throw unauthorized(REASON.oidc);
      } else {
        const idn = await this.d.oidc.verify(parseOidcToken(token), platform, now);
        if (idn.issuer !== m.oidcIssuer || idn.subject !== m.oidcSubject) throw unauthorized(REASON.oidc, 'subject');
        oidcUse = { sha: idn.tokenSha256, exp: idn.expiresAt };
      }
    } else {
      const a = input.assertion;
      validateAssertion(a);
      const requestId = input.requestId;
      if (!requestId) throw unauthorized(REASON.passkey, 'request_id_missing');
      const bound = await this.d.repo.tx((tx) => this.d.repo.consumePasskeyChallenge(tx, requestId, m.id, now));
      if (!bound) throw unauthorized(REASON.passkey, 'challenge');
      clientPublicKey = bound.clientPublicKey;
      if (sandbox) {
        if (a.signature !== SANDBOX_PASSKEY_SIGNATURE) throw unauthorized(REASON.passkey);
      } else {
        newCounter = await verifyPasskeyAssertion(platform, bound.challenge, a, {
          credentialId: m.credentialId!,
          publicKey: m.webauthnPublicKey!,
          counter: m.webauthnCounter ?? 0,
          transports: m.webauthnTransports ?? [],
        });
      }
    }
    const { session, bundle } = await this.newSession(platform.id, m, clientPublicKey);
    await this.d.repo.tx(async (tx) => {
      const still = await this.d.repo.getAuthMethod(tx, platform.id, m.id, true);
      if (!still) throw fail('CREDENTIAL_NOT_FOUND', `No credential ${id}`);
      if (otpId && !(await this.d.repo.consumeOtp(tx, otpId, now))) throw unauthorized(REASON.otp, 'reused');
      if (oidcUse && !(await this.d.repo.recordOidcToken(tx, oidcUse.sha, now, oidcUse.exp))) throw unauthorized(REASON.oidc, 'replayed');
      if (newCounter !== undefined) await this.d.repo.updateCounter(tx, m.id, newCounter, now);
      await this.d.repo.insertSession(tx, session);
    });
    return { ...session, encryptedSessionSigningKey: bundle, authMethod: m };
  }

  /** PATCH /auth/credentials/{id} (EMAIL_OTP email), signed retry. */
  async update(platformId: string, id: string, email: string | undefined, signed: SignedRetryRequest): Promise<Signed<AuthMethodRecord>> {
    const platform = await this.platform(platformId);
    const retry = parseSignedRetry(signed);
    const m = await this.getCredential(platform.id, id);
    const value = requireCredentialUpdate(email);
    if (m.type !== 'EMAIL_OTP') throw fail('CREDENTIAL_TYPE_MISMATCH', 'Only EMAIL_OTP credentials have an email to update', { field: 'email' });
    if (!isRetry(retry)) {
      await this.requireEmailFree(this.d.repo.read, platform.id, value);
      return { challenge: { ...(await this.d.signing.requestSignature(platform.id, m.accountId, 'UPDATE_CREDENTIAL', retry.body)), credentialType: m.type } };
    }
    const now = this.now();
    await this.d.repo.tx(async (tx) => {
      await this.d.signing.verifySignedRetry(tx, platform, m.accountId, 'UPDATE_CREDENTIAL', retry);
      await this.requireEmailFree(tx, platform.id, value, true);
      await this.d.repo.updateEmail(tx, m.id, value, now);
    });
    return { done: { ...m, email: value, nickname: value, updatedAt: now } };
  }

  /** DELETE /auth/credentials/{id}: signed by a session of a different credential; never the last one. */
  async revoke(platformId: string, id: string, signed: SignedRetryRequest): Promise<Signed<AuthMethodRecord>> {
    const platform = await this.platform(platformId);
    const retry = parseSignedRetry(signed);
    const m = await this.getCredential(platform.id, id);
    const others = (await this.d.repo.listAuthMethods(this.d.repo.read, platform.id, m.accountId)).filter((x) => x.id !== m.id);
    if (others.length === 0) throw fail('LAST_CREDENTIAL', 'The only credential of an account cannot be revoked');
    if (!isRetry(retry))
      return { challenge: { ...(await this.d.signing.requestSignature(platform.id, m.accountId, 'REVOKE_CREDENTIAL', retry.body)), credentialType: m.type } };
    const now = this.now();
    await this.d.repo.tx(async (tx) => {
      const locked = await this.d.repo.lockAuthMethods(tx, platform.id, m.accountId);
      if (!locked.some((x) => x.id === m.id)) throw fail('CREDENTIAL_NOT_FOUND', `No credential ${id}`);
      if (locked.length < 2) throw fail('LAST_CREDENTIAL', 'The only credential of an account cannot be revoked');
      await this.d.signing.verifySignedRetry(tx, platform, m.accountId, 'REVOKE_CREDENTIAL', retry, { excludeCredentialId: m.id });
      await this.d.repo.revokeAuthMethod(tx, m.id, now);
    });
    return { done: { ...m, revokedAt: now } };
  }

  /** GET /auth/sessions: the account's active sessions whose credential is live, each with that credential. */
  async listSessions(platformId: string, accountId: string): Promise<ActiveSession[]> {
    const methods = new Map((await this.list(platformId, accountId)).map((m) => [m.id, m]));
    const sessions = await this.d.repo.listActiveSessions(this.d.repo.read, platformId, accountId, this.now());
    return sessions.flatMap((session) => {
      const authMethod = methods.get(session.authMethodId);
      return authMethod ? [{ session, authMethod }] : [];
    });
  }

  /** DELETE /auth/sessions/{id}, signed retry. */
  async revokeSession(platformId: string, id: string, signed: SignedRetryRequest): Promise<Signed<SessionRecord>> {
    const platform = await this.platform(platformId);
    const retry = parseSignedRetry(signed);
    const s = await this.d.repo.getSession(this.d.repo.read, platform.id, requireId(id, 'Session', 'id'));
    if (!s || s.revokedAt) throw fail('SESSION_NOT_FOUND', `No active session ${id}`);
    if (!isRetry(retry)) {
      // The type of the credential that issued the session.
      const issuer = await this.d.repo.getAuthMethod(this.d.repo.read, platform.id, s.authMethodId);
      const challenge = await this.d.signing.requestSignature(platform.id, s.accountId, 'REVOKE_SESSION', retry.body);
      return { challenge: { ...challenge, ...(issuer ? { credentialType: issuer.type } : {}) } };
    }
    const now = this.now();
    await this.d.repo.tx(async (tx) => {
      await this.d.signing.verifySignedRetry(tx, platform, s.accountId, 'REVOKE_SESSION', retry);
      await this.d.repo.revokeSession(tx, s.id, now);
    });
    return { done: { ...s, revokedAt: now } };
  }

  /**
   * POST /auth/sessions/{id}/refresh, signed retry: a new session of the same credential, its key
   * sealed to `clientPublicKey` (bound by the signed body), without verifying the credential again.
   * The session must be active on both steps and the stamp must be its own; it stays active until
   * it expires (the reference revokes nothing).
   */
  async refreshSession(platformId: string, id: string, clientPublicKey: string | undefined, signed: SignedRetryRequest): Promise<Signed<IssuedSession>> {
    const platform = await this.platform(platformId);
    const retry = parseSignedRetry(signed);
    const sessionId = requireId(id, 'Session', 'id');
    const clientKey = requireClientPublicKey(clientPublicKey);
    const { session: s, authMethod: m } = await this.activeSession(this.d.repo.read, platform.id, sessionId);
    if (!isRetry(retry)) return { challenge: await this.d.signing.requestSignature(platform.id, s.accountId, 'REFRESH_SESSION', retry.body) };
    const { session, bundle } = await this.newSession(platform.id, m, clientKey);
    await this.d.repo.tx(async (tx) => {
      await this.activeSession(tx, platform.id, s.id, true);
      await this.d.signing.verifySignedRetry(tx, platform, s.accountId, 'REFRESH_SESSION', retry, { sessionId: s.id });
      await this.d.repo.insertSession(tx, session);
    });
    return { done: { ...session, encryptedSessionSigningKey: bundle, authMethod: m } };
  }

  /** POST /internal-accounts/{id}/export, signed retry: the mnemonic encrypted to clientPublicKey. */
  async exportWallet(platformId: string, accountId: string, clientPublicKey: string | undefined, signed: SignedRetryRequest): Promise<Signed<string>> {
    const platform = await this.platform(platformId);
    const retry = parseSignedRetry(signed);
    requireAccountId(accountId, 'id');
    const clientKey = requireClientPublicKey(clientPublicKey);
    const creds = await this.d.repo.listAuthMethods(this.d.repo.read, platform.id, accountId);
    if (creds.length === 0) throw fail('CREDENTIAL_NOT_FOUND', 'The account has no credential: register one first');
    if (platform.environment === 'PRODUCTION' && !this.d.exportSigningKey)
      throw fail('EXPORT_UNAVAILABLE', 'Wallet export is not configured (WALLET_EXPORT_SIGNING_KEY)');
    if (!isRetry(retry)) return { challenge: await this.d.signing.requestSignature(platform.id, accountId, 'EXPORT_WALLET', retry.body) };
    const sealed = await this.d.repo.tx(async (tx) => {
      await this.d.signing.verifySignedRetry(tx, platform, accountId, 'EXPORT_WALLET', retry);
      await this.ensureWalletKey(tx, platform.id, accountId);
      return (await this.d.repo.getWalletKey(tx, platform.id, accountId))!;
    });
    const bundle = await createExportBundle({
      mnemonic: openMnemonic(sealed, accountId, this.d.keyring),
      clientPublicKey: clientKey,
      organizationId: accountId,
      environment: platform.environment,
      ...(this.d.exportSigningKey ? { signingKey: this.d.exportSigningKey } : {}),
    });
    this.d.logger.info({ accountId }, 'wallet exported');
    return { done: bundle };
  }
}
