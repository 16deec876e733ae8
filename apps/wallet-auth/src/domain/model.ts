/** Credential types of the public API. */
export const AUTH_METHOD_TYPES = ['OAUTH', 'EMAIL_OTP', 'PASSKEY'] as const;
export type AuthMethodType = (typeof AUTH_METHOD_TYPES)[number];

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

/** What every challenge of a credential has: its credential and lifetime. */
export interface ChallengeLifetime {
  authMethodId: string;
  expiresAt: Date;
  createdAt: Date;
}

/** An emailed one-time password (only its hash is kept). */
export interface OtpChallengeRecord extends ChallengeLifetime {
  id: string;
  codeHash: string;
}

/** The WebAuthn challenge of a PASSKEY `/challenge`, bound to the client key the session will be encrypted to. */
export interface PasskeyChallengeRecord extends ChallengeLifetime {
  requestId: string;
  challenge: string;
  /** Lowercase uncompressed hex. */
  clientPublicKey: string;
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
  /** Credential flows: the type of the credential involved (the reference AuthSignedRequestChallenge `type`). */
  credentialType?: AuthMethodType;
}

/** Either the result of the action or the 202 challenge of its first step. */
export type Signed<T> = { done: T; challenge?: undefined } | { done?: undefined; challenge: SigningChallengeOut };
