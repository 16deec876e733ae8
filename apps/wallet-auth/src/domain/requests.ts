import { invalidInput, isId } from '@sluice/core';
import { SIGNED_ACTIONS, type SignedAction } from './crypto/index.js';
import type { AuthMethodType, SignedRetryInput, SignedRetryRequest } from './model.js';
import { validateEmail } from './otp.js';

// The request rules every wallet-auth call shares (400 INVALID_INPUT naming the field). A call's
// own rules live beside its subject: otp.ts (email, code), oidc.ts (token), passkey.ts (WebAuthn).

type WalletAuthId = 'Platform' | 'InternalAccount' | 'AuthMethod' | 'Session';

/** `value` when it is an id of `type` (`<Type>:<uuid>`); else 400 INVALID_INPUT naming `field`. */
export function requireId(value: unknown, type: WalletAuthId, field: string): string {
  if (isId(value, type)) return value;
  const article = /^[AEIOU]/.test(type) ? 'an' : 'a';
  throw invalidInput([{ field, message: `must be ${article} ${type} id (${type}:<uuid>)` }]);
}

/** The calling platform's id. */
export function requirePlatformId(value: unknown): string {
  return requireId(value, 'Platform', 'platformId');
}

/** An embedded-wallet internal account id (`field` names it as the caller sent it). */
export function requireAccountId(value: unknown, field = 'accountId'): string {
  return requireId(value, 'InternalAccount', field);
}

/** A credential type the API knows (absent when the request named none or an unknown one). */
export function requireAuthMethodType(type: AuthMethodType | undefined): AuthMethodType {
  if (type) return type;
  throw invalidInput([{ field: 'type', message: 'must be OAUTH, EMAIL_OTP or PASSKEY' }]);
}

/** A signed-retry action (absent when the request named none or an unknown one). */
export function requireSignedAction(action: SignedAction | undefined): SignedAction {
  if (action) return action;
  throw invalidInput([{ field: 'action', message: `must be one of ${SIGNED_ACTIONS.join(', ')}` }]);
}

/** The body and headers of a signed retry; the body is JSON text (empty means `{}`). */
export function parseSignedRetry(s: SignedRetryRequest): SignedRetryInput {
  let body: unknown = {};
  if (s.bodyJson !== '') {
    try {
      body = JSON.parse(s.bodyJson);
    } catch {
      throw invalidInput([{ field: 'body', message: 'is not valid JSON' }]);
    }
  }
  return { body, signature: s.signature || undefined, requestId: s.requestId || undefined };
}

/** The new email of a credential update (PATCH /auth/credentials/{id}: its one field, so required). */
export function requireCredentialUpdate(email: string | undefined): string {
  if (email === undefined) throw invalidInput([{ field: 'email', message: 'at least one update field is required' }]);
  return validateEmail(email);
}
