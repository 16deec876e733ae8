/** Credential types of the public API. */
export type AuthMethodType = 'OAUTH' | 'EMAIL_OTP' | 'PASSKEY';

export interface AuthMethodRecord {
  id: string;
  platformId: string;
  accountId: string;
  type: AuthMethodType;
  nickname: string;
  email?: string;
  /** Base64url WebAuthn credential id (PASSKEY). */
  credentialId?: string;
  /** COSE public key of a PASSKEY. */
  webauthnPublicKey?: Uint8Array<ArrayBuffer>;
  webauthnCounter?: number;
  webauthnTransports?: string[];
  oidcIssuer?: string;
  oidcSubject?: string;
  createdAt: Date;
  updatedAt: Date;
  revokedAt?: Date;
}

export interface SessionRecord {
  id: string;
  platformId: string;
  accountId: string;
  authMethodId: string;
  /** Compressed SEC1 hex. */
  publicKey: string;
  expiresAt: Date;
  revokedAt?: Date;
  createdAt: Date;
}

/** An emailed one-time password (only its hash is kept). */
export interface OtpChallengeRecord {
  id: string;
  authMethodId: string;
  codeHash: string;
  /** Wrong guesses so far. */
  attempts: number;
  expiresAt: Date;
  consumedAt?: Date;
  createdAt: Date;
}

/** The WebAuthn challenge of a PASSKEY `/challenge`, bound to the client key the session will be encrypted to. */
export interface PasskeyChallengeRecord {
  requestId: string;
  authMethodId: string;
  challenge: string;
  /** Lowercase uncompressed hex. */
  clientPublicKey: string;
  expiresAt: Date;
  usedAt?: Date;
  createdAt: Date;
}

export interface SigningRequestRecord {
  requestId: string;
  platformId: string;
  accountId: string;
  action: string;
  bodySha256: string;
  payloadToSign: string;
  issuedAt: Date;
  expiresAt: Date;
  consumedAt?: Date;
  /** The session whose stamp consumed the request (absent for the sandbox magic value). */
  sessionId?: string;
}

/** The embedded-wallet settings of a platform (from identity's platform config). */
export interface WalletPlatform {
  id: string;
  environment: 'SANDBOX' | 'PRODUCTION';
  appName?: string;
  otpLength: number;
  passkey?: { rpId: string; origins: string[] };
  oidcIssuers: { issuer: string; jwksUri: string; audiences: string[] }[];
}

/** A signed retry as a request carries it: the body as JSON text (empty means `{}`) and the two headers. */
export interface SignedRetryRequest {
  bodyJson: string;
  signature?: string;
  requestId?: string;
}

/** The headers of a signed retry and the body they bind (parsed from a `SignedRetryRequest`). */
export interface SignedRetryInput {
  body: unknown;
  signature?: string;
  requestId?: string;
}

export interface SigningChallengeOut {
  payloadToSign: string;
  requestId: string;
  expiresAt: Date;
}

/** Either the result of the action or the 202 challenge of its first step. */
export type Signed<T> = { done: T; challenge?: undefined } | { done?: undefined; challenge: SigningChallengeOut };
