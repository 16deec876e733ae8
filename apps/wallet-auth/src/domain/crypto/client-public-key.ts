import { p256 } from '@noble/curves/p256';
import { hexToBytes } from '@noble/hashes/utils';
import { invalidClientPublicKey } from './errors.js';

const CLIENT_PUBLIC_KEY = /^04[0-9a-fA-F]{128}$/;

/**
 * Validate a `clientPublicKey`: 130 hex characters, an uncompressed SEC1 P-256 point
 * (`04 ‖ X ‖ Y`) that lies on the curve. Returns the 65 raw bytes.
 * Throws 400 INVALID_CLIENT_PUBLIC_KEY naming `field`.
 */
export function parseClientPublicKey(value: unknown, field = 'clientPublicKey'): Uint8Array {
  return checkClientPublicKey(value, field).bytes;
}

/** The `clientPublicKey` text itself, validated as `parseClientPublicKey` does. */
export function requireClientPublicKey(value: unknown, field = 'clientPublicKey'): string {
  return checkClientPublicKey(value, field).key;
}

function checkClientPublicKey(value: unknown, field: string): { key: string; bytes: Uint8Array } {
  if (typeof value !== 'string' || value.length === 0)
    throw invalidClientPublicKey(field, 'is required (130 hex characters, uncompressed P-256 public key)');
  if (value.length !== 130)
    throw invalidClientPublicKey(field, `must be 130 hex characters, got ${value.length}`);
  if (!CLIENT_PUBLIC_KEY.test(value))
    throw invalidClientPublicKey(
      field,
      'must match ^04[0-9a-fA-F]{128}$ (uncompressed SEC1 P-256 public key in hex)',
    );
  const bytes = hexToBytes(value.toLowerCase());
  try {
    p256.ProjectivePoint.fromHex(bytes).assertValidity();
  } catch {
    throw invalidClientPublicKey(field, 'is not a point on the P-256 curve');
  }
  return { key: value, bytes };
}
