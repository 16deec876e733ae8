import { p256 } from '@noble/curves/p256';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils';
import { WalletClientError } from './errors.js';

export interface KeyPair {
  /** 32-byte private key, lowercase hex (64 chars). Keep it in memory only. */
  privateKey: string;
  /** Uncompressed SEC1 public key, hex (130 chars, `04…`): send this as `clientPublicKey`. */
  publicKey: string;
  /** Compressed SEC1 public key, hex (66 chars, `02…`/`03…`): the form stamps carry. */
  publicKeyCompressed: string;
}

/** Generate a fresh P-256 key pair (CSPRNG via `crypto.getRandomValues`). */
export function generateKeyPair(): KeyPair {
  const privateKey = p256.utils.randomPrivateKey();
  return keyPairFromPrivateKey(bytesToHex(privateKey));
}

/** Derive the public keys of a hex private key. */
export function keyPairFromPrivateKey(privateKeyHex: string): KeyPair {
  const priv = parsePrivateKey(privateKeyHex);
  return {
    privateKey: bytesToHex(priv),
    publicKey: bytesToHex(p256.getPublicKey(priv, false)),
    publicKeyCompressed: bytesToHex(p256.getPublicKey(priv, true)),
  };
}

/** Any SEC1 P-256 public key (compressed or uncompressed hex) as a `clientPublicKey` (uncompressed, 130 hex chars). */
export function formatClientPublicKey(publicKeyHex: string): string {
  return bytesToHex(parsePublicKey(publicKeyHex).toRawBytes(false));
}

/** Any SEC1 P-256 public key (compressed or uncompressed hex) in compressed form (66 hex chars). */
export function compressPublicKey(publicKeyHex: string): string {
  return bytesToHex(parsePublicKey(publicKeyHex).toRawBytes(true));
}

/** True when `value` is a valid `clientPublicKey`: `^04[0-9a-fA-F]{128}$` and a point on P-256. */
export function isValidClientPublicKey(value: string): boolean {
  if (!/^04[0-9a-fA-F]{128}$/.test(value)) return false;
  try {
    parsePublicKey(value);
    return true;
  } catch {
    return false;
  }
}

/** @internal */
export function parsePublicKey(publicKeyHex: string) {
  if (typeof publicKeyHex !== 'string' || !/^(0[23][0-9a-fA-F]{64}|04[0-9a-fA-F]{128})$/.test(publicKeyHex)) {
    throw new WalletClientError(
      'INVALID_KEY',
      'public key must be SEC1 P-256 hex (66 chars compressed or 130 chars uncompressed)',
    );
  }
  try {
    const point = p256.ProjectivePoint.fromHex(publicKeyHex.toLowerCase());
    point.assertValidity();
    return point;
  } catch {
    throw new WalletClientError('INVALID_KEY', 'public key is not a point on P-256');
  }
}

/** @internal */
export function parsePrivateKey(privateKeyHex: string): Uint8Array {
  if (typeof privateKeyHex !== 'string' || !/^[0-9a-fA-F]{64}$/.test(privateKeyHex)) {
    throw new WalletClientError('INVALID_KEY', 'private key must be 64 hex characters');
  }
  const bytes = hexToBytes(privateKeyHex.toLowerCase());
  if (!p256.utils.isValidPrivateKey(bytes))
    throw new WalletClientError('INVALID_KEY', 'private key is out of range for P-256');
  return bytes;
}
