import { isHostname } from './validation.js';

/**
 * The UMA address grammar, once: `$<user>@<domain>`, the user part 1 to 64
 * characters of a-z, 0-9, `.`, `_`, `-`, `+`, the domain a DNS name. Both parts
 * are case-insensitive, so addresses are compared and stored in lower case.
 */
const UMA_RE = /^\$([a-z0-9._+-]{1,64})@([^@]+)$/;

/** Longest UMA address: `$`, 64, `@` and a 253-character domain. */
export const UMA_ADDRESS_MAX_LENGTH = 319;

/** What a refused UMA address is told. */
export const UMA_ADDRESS_RULE =
  'must be an UMA address $user@domain (user: 1-64 of a-z 0-9 . _ - +; domain: a DNS name)';

/** The parts of an UMA address (lower-cased), or undefined when it is not one. */
export function parseUmaAddress(value: string): { address: string; user: string; domain: string } | undefined {
  if (value.length > UMA_ADDRESS_MAX_LENGTH) return undefined;
  const address = value.toLowerCase();
  const m = UMA_RE.exec(address);
  if (!m || !isHostname(m[2]!)) return undefined;
  return { address, user: m[1]!, domain: m[2]! };
}
