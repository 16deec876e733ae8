import type { WalletPlatform } from '../domain/model.js';
import type { OidcIdentity, OidcToken } from '../domain/oidc.js';

// Every outbound port of wallet-auth; the adapters live in clients/ and compose.ts wires them.

/** Where wallet-auth learns a platform's environment and embedded-wallet settings (identity). */
export interface PlatformDirectory {
  /** The platform's current settings (config changes apply at once); identity's NOT_FOUND passes through. */
  get(platformId: string): Promise<WalletPlatform>;
}

/** Sends one-time passwords by email. */
export interface OtpMailer {
  send(to: string, code: string, appName: string | undefined, ttlMinutes: number): Promise<void>;
}

/** Verifies OIDC ID tokens against the key sets of the issuers a platform trusts. */
export interface OidcVerifier {
  /**
   * The identity of a token issued by one of the platform's issuers, signed by a key of that
   * issuer's JWKS, for one of its audiences, unexpired, with `iat` at most 60 s old. Failures are
   * 401 `Invalid OIDC token` with a machine `problem`.
   */
  verify(token: OidcToken, platform: WalletPlatform, now: Date): Promise<OidcIdentity>;
}
