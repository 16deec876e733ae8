import { createRemoteJWKSet, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import type { WalletPlatform } from '../domain/model.js';
import { OIDC_ALGORITHMS, checkIssuedAt, oidcIdentity, trustedIssuer, type OidcIdentity, type OidcToken } from '../domain/oidc.js';
import { REASON, unauthorized } from '../domain/errors.js';
import type { OidcVerifier } from '../app/ports.js';

/** Verifies ID tokens with `jose` against each issuer's JWKS, fetched over HTTPS and cached per URI. */
export class JwksOidcVerifier implements OidcVerifier {
  private readonly jwks = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  private keySet(uri: string) {
    let set = this.jwks.get(uri);
    if (!set) {
      set = createRemoteJWKSet(new URL(uri), { timeoutDuration: 5000, cooldownDuration: 30_000 });
      this.jwks.set(uri, set);
    }
    return set;
  }

  async verify(t: OidcToken, platform: WalletPlatform, now: Date): Promise<OidcIdentity> {
    const issuer = trustedIssuer(t, platform);
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(t.token, this.keySet(issuer.jwksUri), {
        issuer: issuer.issuer,
        audience: issuer.audiences,
        currentDate: now,
        requiredClaims: ['iat', 'sub', 'exp'],
        algorithms: OIDC_ALGORITHMS,
      }));
    } catch (err) {
      const problem =
        err instanceof joseErrors.JWTClaimValidationFailed ? `claim:${err.claim}` : err instanceof joseErrors.JWTExpired ? 'expired' : 'signature';
      throw unauthorized(REASON.oidc, problem);
    }
    checkIssuedAt(claims.iat, now);
    return oidcIdentity({ token: t.token, claims }, now);
  }
}
