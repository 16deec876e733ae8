import { isDomainError, newId, type Clock } from '@sluice/core';
import {
  bodyHash,
  buildPayloadToSign,
  INVALID_SIGNATURE_REASON,
  cryptoFail,
  verifyStamp,
  type SignedAction,
} from '../domain/crypto/index.js';
import { fail, REASON, unauthorized } from '../domain/errors.js';
import type { SignedRetryInput, SignedRetryRequest, SigningChallengeOut, WalletPlatform } from '../domain/model.js';
import { parseSignedRetry, requireAccountId, requirePlatformId, requireSignedAction } from '../domain/requests.js';
import type { Tx, WalletAuthRepository } from '../store/wallet-auth.repository.js';
import type { PlatformDirectory } from './ports.js';

/** The sandbox value of `Service-Wallet-Signature` accepted on every signed retry. */
export const SANDBOX_SIGNATURE = 'sandbox-valid-signature';
/** Lifetime of a signing request (`expiresAt` of the 202 challenge). */
export const SIGNING_REQUEST_TTL_MS = 5 * 60_000;

export interface VerifiedSignature {
  /** The session whose key signed; absent for the sandbox magic value. */
  sessionId?: string;
  credentialId?: string;
}

function deny(code: Parameters<typeof fail>[0], message: string) {
  return fail(code, message, { reason: INVALID_SIGNATURE_REASON });
}

/** Which active session of the account may sign (beyond being one): none of a credential, or exactly one. */
export interface StampRule {
  /** Revoking a credential: the stamp must come from a session of another credential. */
  excludeCredentialId?: string;
  /** Refreshing a session: the stamp must come from that session. */
  sessionId?: string;
}

/** True when the call carries signed-retry headers (then it is step 2). */
export function isRetry(s: SignedRetryInput): boolean {
  return (s.signature !== undefined && s.signature !== '') || (s.requestId !== undefined && s.requestId !== '');
}

/**
 * The one signed-retry mechanism: step 1 issues a signing request bound to
 * (account, action, body); step 2 verifies the stamp and consumes the request id
 * atomically in the caller's transaction, so the action and the consumption commit together.
 */
export class SigningService {
  constructor(
    private readonly repo: WalletAuthRepository,
    private readonly platforms: PlatformDirectory,
    private readonly clock: Clock,
  ) {}

  /** CreateSigningRequest (another service's signed flow, e.g. EXECUTE_QUOTE): step 1 for an account of a known platform. */
  async createSigningRequest(
    platformId: string,
    accountId: string,
    action: SignedAction | undefined,
    bodyJson: string,
  ): Promise<SigningChallengeOut> {
    await this.platforms.get(requirePlatformId(platformId));
    const account = requireAccountId(accountId);
    const signedAction = requireSignedAction(action);
    const { body } = parseSignedRetry({ bodyJson });
    return this.requestSignature(platformId, account, signedAction, body);
  }

  /** VerifySignedRequest (another service's signed flow): step 2, consuming the request id in its own transaction. */
  async verifySignedRequest(
    platformId: string,
    accountId: string,
    action: SignedAction | undefined,
    signed: SignedRetryRequest,
  ): Promise<VerifiedSignature> {
    const platform = await this.platforms.get(requirePlatformId(platformId));
    const account = requireAccountId(accountId);
    const signedAction = requireSignedAction(action);
    const retry = parseSignedRetry(signed);
    return this.repo.tx((tx) => this.verifySignedRetry(tx, platform, account, signedAction, retry));
  }

  /** Step 1: a fresh signing request (202 body). */
  async requestSignature(platformId: string, accountId: string, action: SignedAction, body: unknown): Promise<SigningChallengeOut> {
    const requestId = newId('Request');
    const issuedAt = this.clock.now();
    const expiresAt = new Date(issuedAt.getTime() + SIGNING_REQUEST_TTL_MS);
    const payloadToSign = buildPayloadToSign({ requestId, action, accountId, body, issuedAt, expiresAt });
    await this.repo.tx((tx) =>
      this.repo.insertSigningRequest(tx, { requestId, platformId, accountId, action, bodySha256: bodyHash(body), payloadToSign, issuedAt, expiresAt }),
    );
    return { payloadToSign, requestId, expiresAt };
  }

  /**
   * Step 2: checks the retry and consumes its request id in `tx`. Refusals are 401 with
   * distinct codes, each with `details.reason` = `Invalid Service-Wallet-Signature`.
   */
  async verifySignedRetry(
    tx: Tx,
    platform: WalletPlatform,
    accountId: string,
    action: SignedAction,
    retry: SignedRetryInput,
    opts: StampRule = {},
  ): Promise<VerifiedSignature> {
    const now = this.clock.now();
    if (!retry.signature) throw cryptoFail('WALLET_SIGNATURE_MISSING', 'Header Service-Wallet-Signature is required with Request-Id', { reason: INVALID_SIGNATURE_REASON, field: 'Service-Wallet-Signature' });
    if (!retry.requestId) throw deny('SIGNING_REQUEST_ID_MISSING', 'Header Request-Id is required with Service-Wallet-Signature');
    const req = await this.repo.getSigningRequest(tx, platform.id, retry.requestId);
    if (!req) throw deny('SIGNING_REQUEST_UNKNOWN', 'Request-Id does not name a signing request of this platform');
    if (req.accountId !== accountId || req.action !== action)
      throw deny('SIGNING_REQUEST_MISMATCH', 'Request-Id was issued for another account or action');
    if (req.consumedAt) throw deny('SIGNING_REQUEST_REUSED', 'Request-Id was already used');
    if (req.expiresAt.getTime() <= now.getTime()) throw deny('SIGNING_REQUEST_EXPIRED', 'The signing request expired; start again without signature headers');
    if (bodyHash(retry.body) !== req.bodySha256)
      throw deny('SIGNED_BODY_MISMATCH', 'The request body differs from the one the signing challenge was issued for');

    // The sandbox magic value stands for a stamp of no particular session.
    const sandboxMagic = platform.environment === 'SANDBOX' && retry.signature === SANDBOX_SIGNATURE;
    const verified: VerifiedSignature = sandboxMagic ? {} : await this.verifyStampSession(tx, platform, accountId, retry.signature, req.payloadToSign, now, opts);
    if (!(await this.repo.consumeSigningRequest(tx, req.requestId, verified.sessionId, now)))
      throw deny('SIGNING_REQUEST_REUSED', 'Request-Id was already used');
    return verified;
  }

  /** The active session of the account whose key made the stamp (refusals as in `verifySignedRetry`). */
  private async verifyStampSession(
    tx: Tx,
    platform: WalletPlatform,
    accountId: string,
    stamp: string,
    payloadToSign: string,
    now: Date,
    opts: StampRule,
  ): Promise<VerifiedSignature> {
    let stampKey: string;
    try {
      stampKey = verifyStamp(stamp, payloadToSign).publicKey;
    } catch (err) {
      // Sandbox: any other value is a wrong magic value.
      if (platform.environment === 'SANDBOX') throw unauthorized(REASON.signature, isDomainError(err) ? err.code : undefined);
      throw err;
    }
    const sessions = await this.repo.sessionsByKey(tx, platform.id, stampKey);
    const mine = sessions.filter((s) => s.accountId === accountId);
    if (sessions.length > 0 && mine.length === 0)
      throw deny('WALLET_SIGNATURE_WRONG_ACCOUNT', 'The signing key belongs to a session of another account');
    const active = mine.find((s) => !s.revokedAt && !s.credentialRevoked && s.expiresAt.getTime() > now.getTime());
    if (!active) throw deny('WALLET_SESSION_NOT_ACTIVE', 'The signing key is not an active session of the account (unknown, expired or revoked)');
    if (opts.excludeCredentialId && active.authMethodId === opts.excludeCredentialId)
      throw deny('WALLET_SIGNATURE_SAME_CREDENTIAL', 'A credential must be revoked with a session of a different credential of the account');
    if (opts.sessionId && active.id !== opts.sessionId)
      throw deny('WALLET_SIGNATURE_WRONG_SESSION', 'A session is refreshed with a stamp of its own key');
    return { sessionId: active.id, credentialId: active.authMethodId };
  }
}
