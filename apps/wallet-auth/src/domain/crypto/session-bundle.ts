import { p256 } from '@noble/curves/p256';
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex } from '@noble/hashes/utils';
import { createBase58check } from '@scure/base';
import { parseClientPublicKey } from './client-public-key.js';
import { concat, hpkeSeal } from './hpke.js';

const base58check = createBase58check(sha256);

export interface SessionBundle {
  /** `encryptedSessionSigningKey`: base58check(compressed encapsulated key ‖ ciphertext). */
  bundle: string;
  /** Session public key, compressed SEC1 hex (66 chars): the key stamps carry and the service stores. */
  sessionPublicKey: string;
  /** Same key, uncompressed SEC1 hex (130 chars). */
  sessionPublicKeyUncompressed: string;
}

/**
 * Encrypt `plaintext` to `receiverPublicKey` (uncompressed, 65 bytes) in Turnkey's
 * credential-bundle form: base58check(compressed 33-byte encapsulated key ‖ HPKE ciphertext).
 * `ephemeralPrivateKey` only for deterministic test vectors.
 */
export async function encryptCredentialBundle(
  plaintext: Uint8Array,
  receiverPublicKey: Uint8Array,
  ephemeralPrivateKey?: Uint8Array,
): Promise<string> {
  const { encapsulatedKey, ciphertext } = await hpkeSeal(plaintext, receiverPublicKey, ephemeralPrivateKey);
  const compressed = p256.ProjectivePoint.fromHex(encapsulatedKey).toRawBytes(true);
  return base58check.encode(concat(compressed, ciphertext));
}

/**
 * Issue a session key for a verified credential: generate a fresh P-256 key pair,
 * HPKE-encrypt its 32-byte private key to the client's `clientPublicKey` and return
 * the bundle with the public key. The private key exists only inside this call
 * (its buffer is zeroed before returning) and is never returned or logged in clear.
 *
 * Throws 400 INVALID_CLIENT_PUBLIC_KEY (field `clientPublicKey`) for a malformed key.
 */
export async function createSessionBundle(clientPublicKey: string): Promise<SessionBundle> {
  const receiver = parseClientPublicKey(clientPublicKey);
  const privateKey = p256.utils.randomPrivateKey();
  try {
    const sessionPublicKey = bytesToHex(p256.getPublicKey(privateKey, true));
    const sessionPublicKeyUncompressed = bytesToHex(p256.getPublicKey(privateKey, false));
    const bundle = await encryptCredentialBundle(privateKey, receiver);
    return { bundle, sessionPublicKey, sessionPublicKeyUncompressed };
  } finally {
    privateKey.fill(0);
  }
}
