import { Type, type Static } from '@sinclair/typebox';
import type { walletAuth } from '@sluice/contracts';
import { Timestamp, iso, stringEnum } from '../schema.js';

/** The public AuthMethod (a credential of an embedded wallet) and the AuthSession issued from one. */

export const AUTH_METHOD_TYPES = ['OAUTH', 'EMAIL_OTP', 'PASSKEY'] as const;
export type AuthMethodTypeName = (typeof AUTH_METHOD_TYPES)[number];

export const AuthMethodType = stringEnum(AUTH_METHOD_TYPES, {
  description: 'OAUTH (OIDC ID token), EMAIL_OTP (one-time password by email) or PASSKEY (WebAuthn)',
});

export const AuthMethod = Type.Object(
  {
    id: Type.String({ description: '`AuthMethod:<uuid>`' }),
    accountId: Type.String({ description: 'the EMBEDDED_WALLET internal account it authenticates' }),
    type: AuthMethodType,
    nickname: Type.String({
      description: 'EMAIL_OTP: the email; OAUTH: the token email claim; PASSKEY: the registered nickname',
    }),
    credentialId: Type.Optional(
      Type.String({ description: 'PASSKEY only: base64url WebAuthn credential id (rawId)' }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'AuthMethodResponse', additionalProperties: false },
);
export type AuthMethod = Static<typeof AuthMethod>;

export const AuthSession = Type.Object(
  {
    id: Type.String({ description: '`Session:<uuid>`' }),
    accountId: Type.String(),
    authMethodId: Type.String({ description: 'the AuthMethod the session was issued from' }),
    type: AuthMethodType,
    nickname: Type.String(),
    credentialId: Type.Optional(Type.String({ description: 'PASSKEY: WebAuthn credential id' })),
    encryptedSessionSigningKey: Type.Optional(
      Type.String({ description: 'only on /verify: base58check HPKE bundle (docs/wallet-auth.md)' }),
    ),
    expiresAt: Timestamp,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'AuthSession', additionalProperties: false },
);
export type AuthSession = Static<typeof AuthSession>;

/** `AUTH_METHOD_TYPE_EMAIL_OTP` → `EMAIL_OTP`. */
export function authMethodTypeName(t: walletAuth.AuthMethodType): AuthMethodTypeName {
  return String(t).replace(/^AUTH_METHOD_TYPE_/, '') as AuthMethodTypeName;
}

/** The public AuthMethod of a wallet_auth.v1 AuthMethod. */
export function authMethodJson(m: walletAuth.AuthMethod): AuthMethod {
  return {
    id: m.id,
    accountId: m.accountId,
    type: authMethodTypeName(m.type),
    nickname: m.nickname,
    ...(m.credentialId ? { credentialId: m.credentialId } : {}),
    createdAt: iso(m.createdAt)!,
    updatedAt: iso(m.updatedAt)!,
  };
}

/** The public AuthSession of a wallet_auth.v1 Session (the credential's fields from its AuthMethod). */
export function authSessionJson(s: walletAuth.Session): AuthSession {
  const m = s.authMethod!;
  return {
    id: s.id,
    accountId: s.accountId,
    authMethodId: s.credentialId,
    type: authMethodTypeName(m.type),
    nickname: m.nickname,
    ...(m.credentialId ? { credentialId: m.credentialId } : {}),
    ...(s.encryptedSessionSigningKey ? { encryptedSessionSigningKey: s.encryptedSessionSigningKey } : {}),
    expiresAt: iso(s.expiresAt)!,
    createdAt: iso(s.createdAt)!,
    updatedAt: iso(m.updatedAt)!,
  };
}
