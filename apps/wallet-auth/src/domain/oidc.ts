import { createHash } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, type JWTPayload } from 'jose';
import { invalidInput } from '@sluice/core';
import { REASON, unauthorized } from './errors.js';
import type { WalletPlatform } from './model.js';

/** The sandbox OIDC token accepted on verify. */
export const SANDBOX_OIDC_TOKEN = 'sandbox-valid-oidc-token';
/** Maximum age of `iat` at create and verify. */
export const OIDC_MAX_AGE_S = 60;
/** Signature algorithms accepted on ID tokens. */
export const OIDC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'PS256', 'EdDSA'];

/** An OIDC issuer a platform trusts (`embeddedWalletConfig.oidcIssuers`). */
export type OidcIssuer = WalletPlatform['oidcIssuers'][number];

/** A compact JWT and its claims, decoded but not verified. */
export interface OidcToken {
  token: string;
  claims: JWTPayload;
}

export interface OidcIdentity {
  issuer: string;
  subject: string;
  email?: string;
  /** When the token stops being valid (for the replay record). */
  expiresAt: Date;
  /** SHA-256 of the token, to refuse a token used twice. */
  tokenSha256: string;
}

/** The token text; 400 INVALID_INPUT naming `field` when there is none. */
export function requireOidcToken(token: unknown, field = 'oidcToken'): string {
  if (typeof token !== 'string' || token === '') throw invalidInput([{ field, message: 'is required' }]);
  return token;
}

/** Decodes a compact JWT without verifying it; 400 INVALID_INPUT (field `oidcToken`) when it is not one. */
export function parseOidcToken(value: unknown, field = 'oidcToken'): OidcToken {
  const token = requireOidcToken(value, field);
  try {
    decodeProtectedHeader(token);
    return { token, claims: decodeJwt(token) };
  } catch {
    throw invalidInput([{ field, message: 'is not a well-formed JWT (header.payload.signature, base64url JSON)' }]);
  }
}

/** The platform's issuer named by the token's `iss`; 401 `Invalid OIDC token` when the platform trusts no such issuer. */
export function trustedIssuer(t: OidcToken, platform: WalletPlatform): OidcIssuer {
  const issuer = platform.oidcIssuers.find((i) => i.issuer === t.claims.iss);
  if (!issuer) throw unauthorized(REASON.oidc, 'issuer');
  return issuer;
}

/** 401 unless `iat` is at most OIDC_MAX_AGE_S old and not as much in the future. */
export function checkIssuedAt(iat: number | undefined, now: Date): void {
  if (iat === undefined) throw unauthorized(REASON.oidc, 'claims');
  const ageS = now.getTime() / 1000 - iat;
  if (ageS > OIDC_MAX_AGE_S) throw unauthorized(REASON.oidc, 'stale_iat');
  if (ageS < -OIDC_MAX_AGE_S) throw unauthorized(REASON.oidc, 'future_iat');
}

/** The identity a (verified, or sandbox-trusted) token names; 401 without `iss` and `sub`. */
export function oidcIdentity(t: OidcToken, now: Date): OidcIdentity {
  const { iss, sub, email, exp } = t.claims;
  if (typeof iss !== 'string' || typeof sub !== 'string' || sub === '') throw unauthorized(REASON.oidc, 'claims');
  return {
    issuer: iss,
    subject: sub,
    email: typeof email === 'string' ? email : undefined,
    expiresAt: typeof exp === 'number' ? new Date(exp * 1000) : new Date(now.getTime() + 3600_000),
    tokenSha256: createHash('sha256').update(t.token).digest('hex'),
  };
}

/** Sandbox registration: a token of a configured issuer is taken at its word (its signature is not checked). */
export function sandboxOidcIdentity(t: OidcToken, platform: WalletPlatform, now: Date): OidcIdentity {
  trustedIssuer(t, platform);
  return oidcIdentity(t, now);
}
