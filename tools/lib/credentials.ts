import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { isId, newId } from '@sluice/core';

/** An API credential as used for HTTP Basic auth: `<tokenId>:<clientSecret>`. */
export interface Credential {
  tokenId: string;
  clientSecret: string;
}

export type PlatformEnvironment = 'SANDBOX' | 'PRODUCTION';

/**
 * Parses `<tokenId>:<secret>` (the form of SANDBOX_PLATFORM_CREDENTIALS and
 * PRODUCTION_PLATFORM_CREDENTIALS). The token id itself contains a colon
 * (`Token:<uuid>`), so the secret is everything after the id; the secret is
 * 16 to 256 printable characters without ':' or whitespace. Throws a message
 * naming the variable (never the secret) when the value is malformed.
 */
export function parseCredential(value: string, variable: string): Credential {
  const m =
    /^([A-Za-z]+:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}):(.+)$/.exec(
      value.trim(),
    );
  if (!m || !isId(m[1], 'Token')) {
    throw new Error(
      `${variable} must be "<tokenId>:<secret>" with a token id like Token:<uuid> (got ${JSON.stringify(redact(value))})`,
    );
  }
  const clientSecret = m[2]!;
  // identity's rule for API client secrets.
  if (clientSecret.length < 16 || clientSecret.length > 256)
    throw new Error(`${variable}: the secret must be 16 to 256 characters`);
  if (!/^[\x21-\x7e]+$/.test(clientSecret) || clientSecret.includes(':')) {
    throw new Error(`${variable}: the secret must be printable ASCII without ':' or whitespace`);
  }
  return { tokenId: m[1]!, clientSecret };
}

function redact(value: string): string {
  const i = value.lastIndexOf(':');
  return i === -1 ? '***' : `${value.slice(0, i)}:***`;
}

/** `<tokenId>:<secret>`, the HTTP Basic user:password pair. */
export function formatCredential(c: Credential): string {
  return `${c.tokenId}:${c.clientSecret}`;
}

/** A fresh sandbox credential: a `Token:<uuidv7>` id and a 256-bit random secret. */
export function generateCredential(): Credential {
  return { tokenId: newId('Token'), clientSecret: `sk_sandbox_${randomBytes(32).toString('base64url')}` };
}

/**
 * The local sandbox credential kept in `file` (created once, reused on every
 * restart so the printed credential stays valid). The file is readable by its
 * owner only.
 */
export function loadOrCreateLocalCredential(file: string): { credential: Credential; created: boolean } {
  if (existsSync(file)) {
    const raw = JSON.parse(readFileSync(file, 'utf8')) as Partial<Credential>;
    if (
      typeof raw.tokenId === 'string' &&
      typeof raw.clientSecret === 'string' &&
      isId(raw.tokenId, 'Token')
    ) {
      return { credential: { tokenId: raw.tokenId, clientSecret: raw.clientSecret }, created: false };
    }
    throw new Error(`${file} is not a valid credential file; delete it to get a new sandbox credential`);
  }
  const credential = generateCredential();
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(
    file,
    JSON.stringify({ ...credential, environment: 'SANDBOX', createdAt: new Date().toISOString() }, null, 2) +
      '\n',
    {
      mode: 0o600,
    },
  );
  chmodSync(file, 0o600);
  return { credential, created: true };
}
