import { sha256 } from '@noble/hashes/sha2';
import { base64url } from '@scure/base';
import { verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
import { FieldErrors } from '@sluice/core';
import { canonicalJson } from './crypto/index.js';
import { fail, REASON, unauthorized } from './errors.js';
import type { WalletPlatform } from './model.js';

/** The sandbox assertion signature accepted on PASSKEY verify. */
export const SANDBOX_PASSKEY_SIGNATURE = 'sandbox-valid-passkey-signature';
/** Lifetime of a /challenge assertion challenge. */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60_000;

const B64URL_RE = /^[A-Za-z0-9_-]+$/;
const TRANSPORTS = ['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'] as const;

export interface Attestation {
  credentialId: string;
  clientDataJson: string;
  attestationObject: string;
  transports: string[];
}

export interface Assertion {
  credentialId: string;
  clientDataJson: string;
  authenticatorData: string;
  signature: string;
  userHandle?: string;
}

function b64(errors: FieldErrors, value: unknown, field: string): void {
  if (typeof value !== 'string' || value === '') errors.add(field, 'is required');
  else if (!B64URL_RE.test(value.replace(/=+$/, ''))) errors.add(field, 'must be base64url');
}

/** What a PASSKEY registration carries besides the account. */
export interface Registration {
  /** The credential's name, at most 64 characters. */
  nickname: string;
  /** The challenge the integrator's backend issued for `navigator.credentials.create()`. */
  challenge: string;
  attestation: Attestation;
}

/** Validates the registration input's shape (400 INVALID_INPUT naming every bad field). */
export function validateRegistration(input: Partial<Registration>): asserts input is Registration {
  const errors = new FieldErrors();
  const n = input.nickname;
  if (typeof n !== 'string' || n.trim() === '') errors.add('nickname', 'is required');
  else if (n.length > 64) errors.add('nickname', 'must be at most 64 characters');
  b64(errors, input.challenge, 'challenge');
  const a = input.attestation;
  if (!a) errors.add('attestation', 'is required');
  else {
    b64(errors, a.credentialId, 'attestation.credentialId');
    b64(errors, a.clientDataJson, 'attestation.clientDataJson');
    b64(errors, a.attestationObject, 'attestation.attestationObject');
    for (const t of a.transports ?? [])
      if (!TRANSPORTS.some((known) => known === t)) errors.add('attestation.transports', `unknown transport ${t}`);
  }
  errors.throwIfAny();
}

/** Validates an assertion's shape (400 INVALID_INPUT naming every bad field). In sandbox `signature` may be the magic value. */
export function validateAssertion(a: Partial<Assertion> | undefined): asserts a is Assertion {
  const errors = new FieldErrors();
  if (!a) errors.add('assertion', 'is required');
  else {
    b64(errors, a.credentialId, 'assertion.credentialId');
    b64(errors, a.clientDataJson, 'assertion.clientDataJson');
    b64(errors, a.authenticatorData, 'assertion.authenticatorData');
    if (typeof a.signature !== 'string' || a.signature === '') errors.add('assertion.signature', 'is required');
    if (a.userHandle !== undefined && a.userHandle !== '') b64(errors, a.userHandle, 'assertion.userHandle');
  }
  errors.throwIfAny();
}

function relyingParty(platform: WalletPlatform) {
  if (!platform.passkey || platform.passkey.origins.length === 0)
    throw fail('EMBEDDED_WALLET_NOT_CONFIGURED', 'The platform has no passkey relying party configured (embeddedWalletConfig.passkey)');
  return platform.passkey;
}

/**
 * Verifies a WebAuthn registration against the platform's RP ID and origins and the
 * integrator-issued challenge. Returns the credential to store. 400 INVALID_ATTESTATION on failure.
 */
export async function verifyPasskeyRegistration(platform: WalletPlatform, challenge: string, a: Attestation) {
  const rp = relyingParty(platform);
  let result;
  try {
    result = await verifyRegistrationResponse({
      response: {
        id: a.credentialId,
        rawId: a.credentialId,
        type: 'public-key',
        clientExtensionResults: {},
        response: { clientDataJSON: a.clientDataJson, attestationObject: a.attestationObject, transports: a.transports },
      },
      expectedChallenge: challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.rpId,
      requireUserVerification: false,
    });
  } catch (err) {
    throw fail('INVALID_ATTESTATION', `The passkey attestation is invalid: ${err instanceof Error ? err.message : String(err)}`, { field: 'attestation' });
  }
  if (!result.verified || !result.registrationInfo) throw fail('INVALID_ATTESTATION', 'The passkey attestation did not verify', { field: 'attestation' });
  const c = result.registrationInfo.credential;
  if (c.id !== a.credentialId.replace(/=+$/, ''))
    throw fail('INVALID_ATTESTATION', 'attestation.credentialId does not match the attested credential', { field: 'attestation.credentialId' });
  return { credentialId: c.id, publicKey: c.publicKey, counter: c.counter };
}

/** The /challenge challenge: base64url(SHA-256(canonical session-creation payload binding clientPublicKey)). */
export function passkeySessionChallenge(p: { requestId: string; credentialId: string; clientPublicKey: string; expiresAt: Date }): string {
  const payload = canonicalJson({
    clientPublicKey: p.clientPublicKey.toLowerCase(),
    credentialId: p.credentialId,
    expiresAt: p.expiresAt.toISOString(),
    kind: 'SLUICE_PASSKEY_SESSION_V1',
    requestId: p.requestId,
  });
  return base64url.encode(sha256(new TextEncoder().encode(payload))).replace(/=+$/, '');
}

/** Verifies an assertion against exactly `challenge`; returns the new counter. 401 `Invalid passkey signature` on failure. */
export async function verifyPasskeyAssertion(
  platform: WalletPlatform,
  challenge: string,
  a: Assertion,
  stored: { credentialId: string; publicKey: Uint8Array<ArrayBuffer>; counter: number; transports: string[] },
): Promise<number> {
  const rp = relyingParty(platform);
  if (a.credentialId.replace(/=+$/, '') !== stored.credentialId) throw unauthorized(REASON.passkey, 'credential');
  try {
    const r = await verifyAuthenticationResponse({
      response: {
        id: a.credentialId,
        rawId: a.credentialId,
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          clientDataJSON: a.clientDataJson,
          authenticatorData: a.authenticatorData,
          signature: a.signature,
          ...(a.userHandle ? { userHandle: a.userHandle } : {}),
        },
      },
      expectedChallenge: challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.rpId,
      credential: {
        id: stored.credentialId,
        publicKey: stored.publicKey,
        counter: stored.counter,
        transports: stored.transports,
      },
      requireUserVerification: false,
    });
    if (!r.verified) throw new Error('not verified');
    return r.authenticationInfo.newCounter;
  } catch {
    throw unauthorized(REASON.passkey, 'assertion');
  }
}
