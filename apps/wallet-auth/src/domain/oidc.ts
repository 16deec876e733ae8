import { createHash } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import { invalidInput } from '@sluice/core';
import { REASON, unauthorized } from './errors.js';
import type { WalletPlatform } from './model.js';

/** The sandbox OIDC token accepted on verify. */
export const SANDBOX_OIDC_TOKEN = 'sandbox-valid-oidc-token';
/** Maximum age of `iat` at create and verify. */
export const OIDC_MAX_AGE_S = 60;

export interface OidcIdentity {
  issuer: string;
  subject: string;
  email?: string;
  /** When the token stops being valid (for the replay record). */
  expiresAt: Date;
  /** SHA-256 of the token, to refuse a token used twice. */
  tokenSha256: string;
}

/** Parses a compact JWT without verifying it; 400 INVALID_INPUT (field `oidcToken`) when it is not one. */
export function parseOidcToken(token: unknown, field = 'oidcToken'): JWTPayload {
  if (typeof token !== 'string' || token === '') throw invalidInput([{ field, message: 'is required' }]);
  try {
    decodeProtectedHeader(token);
    return decodeJwt(token);
  } catch {
    throw invalidInput([{ field, message: 'is not a well-formed JWT (header.payload.signature, base64url JSON)' }]);
  }
}

function identityOf(token: string, claims: JWTPayload, now: Date): OidcIdentity {
  if (typeof claims.iss !== 'string' || typeof claims.sub !== 'string' || claims.sub === '')
    throw unauthorized(REASON.oidc, 'claims');
  return {
    issuer: claims.iss,
    subject: claims.sub,
    email: typeof claims.email === 'string' ? claims.email : undefined,
    expiresAt: typeof claims.exp === 'number' ? new Date(claims.exp * 1000) : new Date(now.getTime() + 3600_000),
    tokenSha256: createHash('sha256').update(token).digest('hex'),
  };
}

/** Verifies OIDC ID tokens against the issuers a platform trusts (JWKS fetched and cached per URI). */
export class OidcVerifier {
  private readonly jwks = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  private keySet(uri: string) {
    let set = this.jwks.get(uri);
    if (!set) {
      set = createRemoteJWKSet(new URL(uri), { timeoutDuration: 5000, cooldownDuration: 30_000 });
      this.jwks.set(uri, set);
    }
    return set;
  }

  /**
   * Checks a token: well-formed (400), issued by a configured issuer, and — unless
   * `skipSignature` (sandbox create) — signed by a key of that issuer's JWKS, for one of its
   * audiences, unexpired, with `iat` at most 60 s old. Failures are 401 `Invalid OIDC token`.
   */
  async verify(token: string, platform: WalletPlatform, now: Date, opts: { skipSignature?: boolean } = {}): Promise<OidcIdentity> {
    const claims = parseOidcToken(token);
    const issuer = platform.oidcIssuers.find((i) => i.issuer === claims.iss);
    if (!issuer) throw unauthorized(REASON.oidc, 'issuer');
    if (opts.skipSignature) return identityOf(token, claims, now);
    let verified: JWTPayload;
    try {
      ({ payload: verified } = await jwtVerify(token, this.keySet(issuer.jwksUri), {
        issuer: issuer.issuer,
        audience: issuer.audiences,
        currentDate: now,
        requiredClaims: ['iat', 'sub', 'exp'],
        algorithms: ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'PS256', 'EdDSA'],
      }));
    } catch (err) {
      const problem =
        err instanceof joseErrors.JWTClaimValidationFailed ? `claim:${err.claim}` : err instanceof joseErrors.JWTExpired ? 'expired' : 'signature';
      throw unauthorized(REASON.oidc, problem);
    }
    const iat = verified.iat!;
    const ageS = now.getTime() / 1000 - iat;
    if (ageS > OIDC_MAX_AGE_S) throw unauthorized(REASON.oidc, 'stale_iat');
    if (ageS < -OIDC_MAX_AGE_S) throw unauthorized(REASON.oidc, 'future_iat');
    return identityOf(token, verified, now);
  }
}
