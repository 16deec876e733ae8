import { timingSafeEqual } from 'node:crypto';

/**
 * Whether `a` and `b` are the same bytes (strings: the same UTF-8), in a time that does not
 * depend on where they first differ: the one comparison of the system for anything derived from
 * a secret (a presented secret's hash against the stored one, an HMAC tag against the expected
 * one), so a caller timing the answers learns nothing about how much of a guess was right.
 *
 * Values of different lengths are unequal at once (node's timingSafeEqual would throw): the
 * length is not the secret — compare fixed-length digests, never a raw secret against a raw
 * secret.
 */
export function constantTimeEqual(a: Uint8Array | string, b: Uint8Array | string): boolean {
  const x = typeof a === 'string' ? Buffer.from(a, 'utf8') : a;
  const y = typeof b === 'string' ? Buffer.from(b, 'utf8') : b;
  return x.byteLength === y.byteLength && timingSafeEqual(x, y);
}
