import { defineErrors } from '@sluice/core';
import { cryptoErrorCodes } from './crypto/index.js';

/** Every public error code of wallet-auth (kind = gRPC status; the gateway maps it to HTTP). */
export const walletAuthErrorCodes = {
  ...cryptoErrorCodes,
  /** Wrong credential/magic value; `details.reason` names the failed check. */
  UNAUTHORIZED: 'UNAUTHENTICATED',
  EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS: 'INVALID_ARGUMENT',
  /** PATCH of an EMAIL_OTP credential to an address a live EMAIL_OTP credential of the platform already has. */
  EMAIL_OTP_EMAIL_ALREADY_EXISTS: 'ALREADY_EXISTS',
  PASSKEY_CREDENTIAL_ALREADY_EXISTS: 'INVALID_ARGUMENT',
  OAUTH_CREDENTIAL_ALREADY_EXISTS: 'INVALID_ARGUMENT',
  LAST_CREDENTIAL: 'INVALID_ARGUMENT',
  CREDENTIAL_TYPE_MISMATCH: 'INVALID_ARGUMENT',
  INVALID_ATTESTATION: 'INVALID_ARGUMENT',
  EMBEDDED_WALLET_NOT_CONFIGURED: 'FAILED_PRECONDITION',
  CREDENTIAL_NOT_FOUND: 'NOT_FOUND',
  SESSION_NOT_FOUND: 'NOT_FOUND',
  /** Refresh of a session of the platform that expired, was revoked or whose credential was revoked. */
  SESSION_NOT_ACTIVE: 'UNAUTHENTICATED',
  OTP_DELIVERY_FAILED: 'UNAVAILABLE',
  /** A new OTP was requested less than OTP_RESEND_INTERVAL after the previous one. */
  OTP_RESEND_TOO_SOON: 'RESOURCE_EXHAUSTED',
  EXPORT_UNAVAILABLE: 'FAILED_PRECONDITION',
  /** Signed retry: header Request-Id absent. */
  SIGNING_REQUEST_ID_MISSING: 'UNAUTHENTICATED',
  /** Signed retry: Request-Id unknown (never issued, or another platform's). */
  SIGNING_REQUEST_UNKNOWN: 'UNAUTHENTICATED',
  SIGNING_REQUEST_EXPIRED: 'UNAUTHENTICATED',
  SIGNING_REQUEST_REUSED: 'UNAUTHENTICATED',
  /** Request-Id issued for another account or another action. */
  SIGNING_REQUEST_MISMATCH: 'UNAUTHENTICATED',
  /** The retry body does not canonicalise to the challenged body. */
  SIGNED_BODY_MISMATCH: 'UNAUTHENTICATED',
  /** The stamp's key belongs to a session of another account. */
  WALLET_SIGNATURE_WRONG_ACCOUNT: 'UNAUTHENTICATED',
  /** The stamp's key is no active, unexpired session (unknown, expired or revoked). */
  WALLET_SESSION_NOT_ACTIVE: 'UNAUTHENTICATED',
  /** Revocation signed by a session of the credential being revoked. */
  WALLET_SIGNATURE_SAME_CREDENTIAL: 'UNAUTHENTICATED',
  /** Session refresh signed by a key other than the refreshed session's. */
  WALLET_SIGNATURE_WRONG_SESSION: 'UNAUTHENTICATED',
} as const;

/** Raise one of wallet-auth's public errors. */
export const fail = defineErrors(walletAuthErrorCodes);

export const REASON = {
  otp: 'Invalid OTP code',
  passkey: 'Invalid passkey signature',
  oidc: 'Invalid OIDC token',
  signature: 'Invalid Service-Wallet-Signature',
} as const;

/** 401 UNAUTHORIZED with the specification's `reason` (and an optional machine `problem`). */
export function unauthorized(reason: (typeof REASON)[keyof typeof REASON], problem?: string) {
  return fail('UNAUTHORIZED', reason, { reason, ...(problem ? { problem } : {}) });
}
