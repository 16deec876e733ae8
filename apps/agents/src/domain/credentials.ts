import { createHash, randomBytes } from 'node:crypto';

/**
 * Device codes and agent access tokens. Only their SHA-256 hashes are stored; both are
 * high-entropy secrets, so a plain hash (no salt, no stretching) is enough, and a hash is
 * what a lookup is keyed by.
 */

/** Crockford base32 without I, L, O, U: unambiguous when read aloud or typed. */
const CODE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** Random characters of a device code: 12 × 5 bits = 60 bits of entropy. */
const CODE_CHARS = 12;
const CODE_PREFIX = 'AGENT';

/** A fresh device code, `AGENT-XXXX-XXXX-XXXX` (60 random bits). */
export function newDeviceCode(random: (n: number) => Buffer = randomBytes): string {
  // 32 symbols divide 256: a byte modulo 32 is uniform.
  const chars = [...random(CODE_CHARS)].map((b) => CODE_ALPHABET[b % 32]!);
  const groups = [chars.slice(0, 4), chars.slice(4, 8), chars.slice(8, 12)].map((g) => g.join(''));
  return [CODE_PREFIX, ...groups].join('-');
}

/**
 * The canonical form of a typed code (upper case, separators and the prefix dropped, the
 * look-alikes O→0 and I/L→1 mapped), or undefined when it cannot be a code.
 */
export function normalizeDeviceCode(typed: string): string | undefined {
  if (typed.length > 64) return undefined;
  let s = typed.toUpperCase().replace(/[\s-]/g, '');
  if (s.startsWith(CODE_PREFIX)) s = s.slice(CODE_PREFIX.length);
  s = s.replace(/O/g, '0').replace(/[IL]/g, '1');
  if (s.length !== CODE_CHARS || [...s].some((c) => !CODE_ALPHABET.includes(c))) return undefined;
  return s;
}

/** The stored hash of a device code (of its canonical form). */
export function deviceCodeHash(canonical: string): string {
  return sha256(`device-code:${canonical}`);
}

/** Prefix of agent access tokens (recognisable in logs and secret scanners). */
export const ACCESS_TOKEN_PREFIX = 'sat_';

/** A fresh access token: 32 random bytes (256 bits), base64url. */
export function newAccessToken(random: (n: number) => Buffer = randomBytes): string {
  return ACCESS_TOKEN_PREFIX + random(32).toString('base64url');
}

/** Whether a bearer value has the shape of an access token (checked before any lookup). */
export function isAccessTokenShape(token: string): boolean {
  return /^sat_[A-Za-z0-9_-]{43}$/.test(token);
}

/** The stored hash of an access token. */
export function accessTokenHash(token: string): string {
  return sha256(`access-token:${token}`);
}

function sha256(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}
