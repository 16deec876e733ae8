import { randomBytes } from 'node:crypto';
import { isHostname, type Problems } from './validation.js';

/**
 * UMA addresses are `$<user>@<domain>`: the user part is 1 to 64 characters of
 * a-z, 0-9, `.`, `_`, `-`, `+`; both parts are case-insensitive, so addresses
 * are stored and compared in lower case.
 */
const UMA_RE = /^\$([a-z0-9._+-]{1,64})@([^@]+)$/;

/** Lower-cases and validates an UMA address; undefined (with a problem recorded) when invalid. */
export function normalizeUmaAddress(
  p: Problems,
  field: string,
  value: string | undefined,
): string | undefined {
  if (value === undefined) return undefined;
  const lower = value.toLowerCase();
  const m = UMA_RE.exec(lower);
  if (!m || !isHostname(m[2]!)) {
    p.add(field, 'must be an UMA address $user@domain (user: 1-64 of a-z 0-9 . _ - +; domain: a DNS name)');
    return undefined;
  }
  return lower;
}

/** A valid UMA domain (DNS name), lower-cased; undefined (with a problem recorded) when invalid. */
export function normalizeUmaDomain(p: Problems, field: string, value: string): string | undefined {
  const lower = value.toLowerCase();
  if (!isHostname(lower)) {
    p.add(field, 'must be a DNS name such as pay.example.com');
    return undefined;
  }
  return lower;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * A fresh system UMA address `$u<13 random base32 chars>@<domain>` (65 bits of
 * randomness, so collisions are negligible; the unique index still guards them).
 */
export function generateUmaAddress(domain: string, random: (n: number) => Buffer = randomBytes): string {
  const bytes = random(13);
  let user = 'u';
  for (const b of bytes) user += ALPHABET[b & 31];
  return `$${user}@${domain}`;
}
