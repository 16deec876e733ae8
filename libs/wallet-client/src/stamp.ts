import { p256 } from '@noble/curves/p256';
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex } from '@noble/hashes/utils';
import { base64urlnopad } from '@scure/base';
import { parsePrivateKey } from './keys.js';

/** Stamp scheme (Turnkey API-key stamp: ECDSA P-256, SHA-256, DER signature). */
export const STAMP_SCHEME = 'SIGNATURE_SCHEME_TK_API_P256';

/** Header carrying the stamp on a signed retry (with `Request-Id`). */
export const SIGNATURE_HEADER = 'Service-Wallet-Signature';

/**
 * Stamp `payloadToSign` with the session private key (hex). Signs the exact UTF-8 bytes of
 * the string as received. Returns the header value: base64url (no padding) of
 * `{"publicKey":<compressed hex>,"scheme":"SIGNATURE_SCHEME_TK_API_P256","signature":<DER hex>}`.
 */
export function stamp(payload: string, sessionPrivateKey: string): string {
  const priv = parsePrivateKey(sessionPrivateKey);
  const signature = p256
    .sign(sha256(new TextEncoder().encode(payload)), priv, { prehash: false, lowS: true })
    .toDERHex();
  const body = JSON.stringify({
    publicKey: bytesToHex(p256.getPublicKey(priv, true)),
    scheme: STAMP_SCHEME,
    signature,
  });
  return base64urlnopad.encode(new TextEncoder().encode(body));
}
