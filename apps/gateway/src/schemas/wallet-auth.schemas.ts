import { Type, type TProperties } from '@sinclair/typebox';
import type { walletAuth } from '@sluice/contracts';
import {
  AuthMethod,
  AuthMethodType,
  AuthSession,
  Id,
  Timestamp,
  authMethodTypeName,
  iso,
  type AuthMethodTypeName,
} from '@sluice/api';
import { discriminated, named } from './common.js';

/** REST schemas of embedded-wallet authentication (credentials, sessions, signed retry, export). */

const ClientPublicKey = Type.String({
  minLength: 1,
  maxLength: 256,
  description: 'uncompressed SEC1 P-256 public key, hex (130 chars, `04…`); a fresh key pair per session or export',
  examples: ['04' + 'a1'.repeat(64)],
});

const B64Url = (description: string) => Type.String({ minLength: 1, maxLength: 8192, description });
const OidcToken = (description: string) => Type.String({ minLength: 1, maxLength: 16384, description });

export const SigningChallenge = Type.Object(
  {
    payloadToSign: Type.String({ description: 'sign these exact bytes with the session key (docs/wallet-auth.md)' }),
    requestId: Type.String({ description: 'echo in header Request-Id on the signed retry; single use' }),
    expiresAt: Timestamp,
  },
  { $id: 'SignedRequestChallenge', additionalProperties: false, description: '202: repeat the same request with Service-Wallet-Signature and Request-Id' },
);

/** The 202 body of a signed retry's first call. */
export function challengeJson(c: walletAuth.SigningChallenge) {
  return { payloadToSign: c.payloadToSign, requestId: c.requestId, expiresAt: iso(c.expiresAt)! };
}

/** The 202 of the credential flows: the signing fields and the `type` of the credential involved. */
export const AuthSignedRequestChallenge = Type.Object(
  {
    ...SigningChallenge.properties,
    type: {
      ...AuthMethodType,
      description:
        'the credential type being added, updated or revoked; for a session revocation, the type of the credential that issued the session',
    },
  },
  {
    $id: 'AuthSignedRequestChallenge',
    additionalProperties: false,
    description: '202: repeat the same request with Service-Wallet-Signature and Request-Id',
  },
);

/** The 202 body of a credential flow's first call. */
export function authChallengeJson(c: walletAuth.SigningChallenge) {
  return { ...challengeJson(c), type: authMethodTypeName(c.credentialType) };
}

export const PasskeyAttestation = Type.Object(
  {
    credentialId: B64Url('rawId, base64url'),
    clientDataJson: B64Url('clientDataJSON, base64url'),
    attestationObject: B64Url('attestationObject, base64url'),
    transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 8 })),
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

const TYPES = 'OAUTH (OIDC ID token), EMAIL_OTP (one-time password by email) or PASSKEY (WebAuthn)';
/** One variant of a credential request: `type` and the fields of that type (another type's field is unknown). */
const variant = <T extends AuthMethodTypeName, P extends TProperties>(type: T, name: string, props: P) =>
  Type.Object({ type: Type.Literal(type), ...props }, { additionalProperties: false, title: `${type}${name}` });

const accountId = Id('InternalAccount');
export const CreateCredentialBody = named('AuthCredentialCreateRequestOneOf', discriminated(
  'type',
  [
    variant('EMAIL_OTP', 'CredentialCreateRequest', {
      accountId,
      email: Type.Optional(
        Type.String({ minLength: 3, maxLength: 254, description: 'the address; default the customer email of the account' }),
      ),
    }),
    variant('OAUTH', 'CredentialCreateRequest', {
      accountId,
      oidcToken: Type.Optional(OidcToken('OIDC ID token (iat ≤ 60 s old)')),
    }),
    variant('PASSKEY', 'CredentialCreateRequest', {
      accountId,
      nickname: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      challenge: Type.Optional(B64Url('the registration challenge your backend issued')),
      attestation: Type.Optional(PasskeyAttestation),
    }),
  ],
  { description: TYPES },
));

export const ChallengeBody = named('AuthCredentialChallengeRequest', Type.Object({ clientPublicKey: Type.Optional(ClientPublicKey) }, { additionalProperties: false }));

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

export const VerifyBody = named('AuthCredentialVerifyRequestOneOf', discriminated(
  'type',
  [
    variant('EMAIL_OTP', 'CredentialVerifyRequest', {
      otp: Type.Optional(Type.String({ maxLength: 10 })),
      clientPublicKey: Type.Optional(ClientPublicKey),
    }),
    variant('OAUTH', 'CredentialVerifyRequest', {
      oidcToken: Type.Optional(OidcToken('a fresh token')),
      clientPublicKey: Type.Optional(ClientPublicKey),
    }),
    variant('PASSKEY', 'CredentialVerifyRequest', { assertion: Type.Optional(PasskeyAssertion) }),
  ],
  { description: TYPES },
));

export const UpdateCredentialBody = named('AuthCredentialUpdateRequest', Type.Object(
  { email: Type.Optional(Type.String({ minLength: 3, maxLength: 254, description: 'new address of an EMAIL_OTP credential' })) },
  { additionalProperties: false },
));

export const UpdateInternalAccountBody = named('InternalAccountUpdateRequest', Type.Object(
  { privateEnabled: Type.Boolean({ description: 'wallet privacy (the one field that can change)' }) },
  { additionalProperties: false },
));

export const AccountQuery = Type.Object({ accountId: Id('InternalAccount') }, { additionalProperties: false });

export const RefreshSessionBody = named(
  'AuthSessionRefreshRequest',
  Type.Object({ clientPublicKey: { ...ClientPublicKey, description: 'uncompressed SEC1 P-256 public key, hex (130 chars, `04…`) the new session signing key is sealed to; the same on both steps' } }, { additionalProperties: false }),
);

export const ExportBody = named('InternalAccountExportRequest', Type.Object({ clientPublicKey: ClientPublicKey }, { additionalProperties: false }));

export const ExportResponse = Type.Object(
  {
    id: Type.String({ description: 'the internal account' }),
    encryptedWalletCredentials: Type.String({ description: 'export bundle JSON (docs/wallet-auth.md)' }),
  },
  { $id: 'InternalAccountExportResponse', additionalProperties: false },
);

export const IdParams = (type: string) => Type.Object({ id: Id(type) }, { additionalProperties: false });

export const AuthCredentialList = Type.Object({ data: Type.Array(AuthMethod) }, { $id: 'AuthCredentialListResponse' });
export const AuthSessionList = Type.Object({ data: Type.Array(AuthSession) }, { $id: 'SessionListResponse' });
