import { randomBytes } from 'node:crypto';
import { isHostname, parseUmaAddress, UMA_ADDRESS_RULE, type FieldErrors } from '@sluice/core';

/**
 * UMA addresses follow core's one grammar (`parseUmaAddress`: `$<user>@<domain>`,
 * case-insensitive, so stored and compared in lower case).
 */

/** Lower-cases and validates an UMA address; undefined (with a field error) when invalid. */
export function normalizeUmaAddress(
  errors: FieldErrors,
  field: string,
  value: string | undefined,
): string | undefined {
  if (value === undefined) return undefined;
  const parsed = parseUmaAddress(value);
  if (!parsed) {
    errors.add(field, UMA_ADDRESS_RULE);
    return undefined;
  }
  return parsed.address;
}

/** A valid UMA domain (DNS name), lower-cased; undefined (with a field error) when invalid. */
export function normalizeUmaDomain(errors: FieldErrors, field: string, value: string): string | undefined {
  const lower = value.toLowerCase();
  if (!isHostname(lower)) {
    errors.add(field, 'must be a DNS name such as pay.example.com');
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
