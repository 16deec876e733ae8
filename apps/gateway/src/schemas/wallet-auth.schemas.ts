import { Type } from '@sinclair/typebox';
import type { walletAuth } from '@sluice/contracts';
import { Id, iso, Timestamp } from './common.js';

/** REST schemas of embedded-wallet authentication (credentials, sessions, signed retry, export). */

export const AuthMethodTypeEnum = Type.Union([Type.Literal('OAUTH'), Type.Literal('EMAIL_OTP'), Type.Literal('PASSKEY')], {
  description: 'OAUTH (OIDC ID token), EMAIL_OTP (one-time password by email) or PASSKEY (WebAuthn)',
});

const ClientPublicKey = Type.String({
  description: 'uncompressed SEC1 P-256 public key, hex (130 chars, `04…`); a fresh key pair per session or export',
  examples: ['04' + 'a1'.repeat(64)],
});

const B64Url = (description: string) => Type.String({ minLength: 1, maxLength: 8192, description });

export const AuthMethod = Type.Object(
  {
    id: Type.String({ description: '`AuthMethod:<uuid>`' }),
    accountId: Type.String({ description: 'the EMBEDDED_WALLET internal account it authenticates' }),
    type: AuthMethodTypeEnum,
    nickname: Type.String({ description: 'EMAIL_OTP: the email; OAUTH: the token email claim; PASSKEY: the registered nickname' }),
    credentialId: Type.Optional(Type.String({ description: 'PASSKEY only: base64url WebAuthn credential id (rawId)' })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'AuthMethod', additionalProperties: false },
);

export const SigningChallenge = Type.Object(
  {
    payloadToSign: Type.String({ description: 'sign these exact bytes with the session key (docs/wallet-auth.md)' }),
    requestId: Type.String({ description: 'echo in header Request-Id on the signed retry; single use' }),
    expiresAt: Timestamp,
  },
  { $id: 'SigningChallenge', additionalProperties: false, description: '202: repeat the same request with Service-Wallet-Signature and Request-Id' },
);

/** The 202 body of a signed retry's first call. */
export function challengeJson(c: walletAuth.SigningChallenge) {
  return { payloadToSign: c.payloadToSign, requestId: c.requestId, expiresAt: iso(c.expiresAt)! };
}

export const PasskeyAttestation = Type.Object(
  {
    credentialId: B64Url('rawId, base64url'),
    clientDataJson: B64Url('clientDataJSON, base64url'),
    attestationObject: B64Url('attestationObject, base64url'),
    transports: Type.Optional(Type.Array(Type.String(), { maxItems: 8 })),
  },
  { additionalProperties: false },
);

export const PasskeyAssertion = Type.Object(
  {
    credentialId: B64Url('rawId, base64url'),
    clientDataJson: B64Url('clientDataJSON, base64url'),
    authenticatorData: B64Url('authenticatorData, base64url'),
    signature: B64Url('signature, base64url (DER ECDSA)'),
    userHandle: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);

export const CreateCredentialBody = Type.Object(
  {
    accountId: Id('InternalAccount'),
    type: AuthMethodTypeEnum,
    email: Type.Optional(Type.String({ minLength: 3, maxLength: 254, description: 'EMAIL_OTP: the address; default the customer email of the account' })),
    oidcToken: Type.Optional(Type.String({ minLength: 1, maxLength: 16384, description: 'OAUTH: OIDC ID token (iat ≤ 60 s old)' })),
    nickname: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'PASSKEY' })),
    challenge: Type.Optional(B64Url('PASSKEY: the registration challenge your backend issued')),
    attestation: Type.Optional(PasskeyAttestation),
  },
  { additionalProperties: false },
);

export const ChallengeBody = Type.Object({ clientPublicKey: Type.Optional(ClientPublicKey) }, { additionalProperties: false });

export const PasskeyAuthChallenge = Type.Object(
  {
    ...AuthMethod.properties,
    credentialId: Type.String(),
    challenge: Type.String({ description: 'WebAuthn challenge for navigator.credentials.get()' }),
    requestId: Type.String({ description: 'header Request-Id of /verify' }),
    expiresAt: Timestamp,
  },
  { $id: 'PasskeyAuthChallenge', additionalProperties: false },
);

export const VerifyBody = Type.Object(
  {
    type: AuthMethodTypeEnum,
    otp: Type.Optional(Type.String({ maxLength: 10, description: 'EMAIL_OTP' })),
    oidcToken: Type.Optional(Type.String({ minLength: 1, maxLength: 16384, description: 'OAUTH: a fresh token' })),
    clientPublicKey: Type.Optional(ClientPublicKey),
    assertion: Type.Optional(PasskeyAssertion),
  },
  { additionalProperties: false },
);

export const AuthSession = Type.Object(
  {
    id: Type.String({ description: '`Session:<uuid>`' }),
    accountId: Type.String(),
    authMethodId: Type.String({ description: 'the AuthMethod the session was issued from' }),
    type: AuthMethodTypeEnum,
    nickname: Type.String(),
    credentialId: Type.Optional(Type.String({ description: 'PASSKEY: WebAuthn credential id' })),
    encryptedSessionSigningKey: Type.Optional(Type.String({ description: 'only on /verify: base58check HPKE bundle (docs/wallet-auth.md)' })),
    expiresAt: Timestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'AuthSession', additionalProperties: false },
);

export const UpdateCredentialBody = Type.Object(
  { email: Type.Optional(Type.String({ minLength: 3, maxLength: 254, description: 'new address of an EMAIL_OTP credential' })) },
  { additionalProperties: false },
);

export const AccountQuery = Type.Object({ accountId: Id('InternalAccount') }, { additionalProperties: false });

export const ExportBody = Type.Object({ clientPublicKey: ClientPublicKey }, { additionalProperties: false });

export const ExportResponse = Type.Object(
  {
    id: Type.String({ description: 'the internal account' }),
    encryptedWalletCredentials: Type.String({ description: 'export bundle JSON (docs/wallet-auth.md)' }),
  },
  { $id: 'InternalAccountExportResponse', additionalProperties: false },
);
