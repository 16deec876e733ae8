import { p256 } from '@noble/curves/p256';
import { sha256 } from '@noble/hashes/sha2';
import { hexToBytes } from '@noble/hashes/utils';
import type { DomainError } from '@sluice/core';
import { INVALID_SIGNATURE_REASON, SIGNATURE_HEADER, cryptoFail } from './errors.js';

/** The only stamp scheme accepted: ECDSA P-256 over SHA-256, DER signature (Turnkey API-key stamp). */
export const STAMP_SCHEME = 'SIGNATURE_SCHEME_TK_API_P256';

/** Which part of a stamp was malformed (in `details.problem` of WALLET_SIGNATURE_MALFORMED). */
export type StampProblem = 'base64url' | 'json' | 'publicKey' | 'scheme' | 'signature';

export interface ParsedStamp {
  /** Compressed SEC1 P-256 public key, lowercase hex (66 chars). */
  publicKey: string;
  scheme: typeof STAMP_SCHEME;
  /** DER signature, lowercase hex. */
  signature: string;
}

const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;
const COMPRESSED_KEY = /^0[23][0-9a-fA-F]{64}$/;
const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const MAX_HEADER_LENGTH = 4096;

function malformed(problem: StampProblem, message: string): DomainError {
  return cryptoFail('WALLET_SIGNATURE_MALFORMED', `${SIGNATURE_HEADER} is malformed: ${message}`, {
    reason: INVALID_SIGNATURE_REASON,
    field: SIGNATURE_HEADER,
    problem,
  });
}

function decodeBase64url(value: string): Uint8Array {
  const unpadded = value.replace(/=+$/, '');
  if (value.length > MAX_HEADER_LENGTH || !BASE64URL.test(value) || unpadded.length % 4 === 1) {
    throw malformed('base64url', 'not a base64url string');
  }
  return new Uint8Array(Buffer.from(unpadded, 'base64url'));
}

/**
 * Parse a `Service-Wallet-Signature` stamp: base64url of the JSON
 * `{publicKey, scheme, signature}` (unknown extra members are ignored).
 *
 * Throws WALLET_SIGNATURE_MISSING (absent/empty header) or WALLET_SIGNATURE_MALFORMED
 * with `details.problem` naming the faulty part (base64url, json, publicKey, scheme, signature).
 */
export function parseStamp(headerValue: string | null | undefined): ParsedStamp {
  if (headerValue === undefined || headerValue === null || headerValue.trim() === '') {
    throw cryptoFail('WALLET_SIGNATURE_MISSING', `${SIGNATURE_HEADER} header is required`, {
      reason: INVALID_SIGNATURE_REASON,
      field: SIGNATURE_HEADER,
    });
  }
  const raw = decodeBase64url(headerValue.trim());
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch {
    throw malformed('json', 'does not decode to JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw malformed('json', 'must decode to a JSON object');
  const { publicKey, scheme, signature }: Partial<Record<string, unknown>> = Object.fromEntries(Object.entries(json));

  if (typeof scheme !== 'string') throw malformed('scheme', 'scheme is required');
  if (scheme !== STAMP_SCHEME)
    throw malformed(
      'scheme',
      `unsupported scheme ${JSON.stringify(scheme.slice(0, 64))}, expected ${STAMP_SCHEME}`,
    );

  if (typeof publicKey !== 'string' || !COMPRESSED_KEY.test(publicKey)) {
    throw malformed(
      'publicKey',
      'publicKey must be a compressed P-256 public key (66 hex characters, 02/03 prefix)',
    );
  }
  try {
    p256.ProjectivePoint.fromHex(publicKey.toLowerCase()).assertValidity();
  } catch {
    throw malformed('publicKey', 'publicKey is not a point on the P-256 curve');
  }

  if (typeof signature !== 'string' || !HEX.test(signature))
    throw malformed('signature', 'signature must be a hex string');
  try {
    const sig = p256.Signature.fromDER(signature.toLowerCase());
    sig.assertValidity();
  } catch {
    throw malformed('signature', 'signature is not a valid DER-encoded ECDSA signature');
  }
  return { publicKey: publicKey.toLowerCase(), scheme: STAMP_SCHEME, signature: signature.toLowerCase() };
}

/**
 * Verify a stamp over the exact payload bytes (a string is UTF-8 encoded as is: sign
 * `payloadToSign` byte for byte). ECDSA-P256-SHA256; high-S signatures are accepted
 * (browsers' WebCrypto produces them). Returns the stamp with its public key, which the
 * caller must match to an active session of the right account.
 *
 * Throws WALLET_SIGNATURE_MISSING / WALLET_SIGNATURE_MALFORMED (see `parseStamp`) or
 * WALLET_SIGNATURE_INVALID when the signature does not verify.
 */
export function verifyStamp(
  headerValue: string | null | undefined,
  payload: string | Uint8Array,
): ParsedStamp {
  const stamp = parseStamp(headerValue);
  const bytes = typeof payload === 'string' ? new TextEncoder().encode(payload) : payload;
  let ok = false;
  try {
    ok = p256.verify(
      p256.Signature.fromDER(stamp.signature).toCompactRawBytes(),
      sha256(bytes),
      hexToBytes(stamp.publicKey),
      { lowS: false, prehash: false, format: 'compact' },
    );
  } catch {
    ok = false;
  }
  if (!ok) {
    throw cryptoFail(
      'WALLET_SIGNATURE_INVALID',
      `${SIGNATURE_HEADER} does not verify for the signed payload`,
      {
        reason: INVALID_SIGNATURE_REASON,
        field: SIGNATURE_HEADER,
      },
    );
  }
  return stamp;
}
