import { createHash, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '@sluice/crypto';
import { FieldErrors, idUuid, isId } from '@sluice/core';
import { noDuplicates, range, text } from './validation.js';
export { PERMISSIONS } from '@sluice/core';
import { PERMISSIONS } from '@sluice/core';

export type Permission = (typeof PERMISSIONS)[number];

import type { Environment } from '@sluice/core';

/**
 * A new client secret: 32 random bytes, base64url (43 characters). It is shown
 * once; only its hash is stored.
 */
export function generateClientSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The stored form of a client secret: SHA-256.
 *
 * Why not bcrypt/scrypt/argon2: those slow hashes protect low-entropy human
 * passwords from offline guessing. Our secrets are 256 random bits, so guessing
 * one from its hash is infeasible at any hash speed, while a deliberately slow
 * hash would cost tens of milliseconds of CPU on every authenticated request
 * (and hand attackers a cheap way to burn our CPU with bad credentials).
 * Operator-supplied bootstrap secrets must have at least 16 characters.
 */
export function hashClientSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

// Compared against when the token id is unknown, so that case costs the same.
const DUMMY_HASH = hashClientSecret('sluice-no-such-token');

/** Constant-time check of a presented secret against a stored hash (or none). */
export function clientSecretMatches(secret: string, storedHash: Buffer | undefined): boolean {
  const equal = constantTimeEqual(hashClientSecret(secret), storedHash ?? DUMMY_HASH);
  return equal && storedHash !== undefined;
}

export interface NewToken {
  name: string;
  permissions: Permission[];
}

/** Validates a token creation request (name 1..255, permissions a non-empty set). */
export function validateNewToken(input: { name: string; permissions: (Permission | undefined)[] }): NewToken {
  const p = new FieldErrors();
  const name =
    input.name === '' ? (p.add('name', 'is required'), undefined) : text(p, 'name', input.name, 255);
  if (input.permissions.length === 0)
    p.add('permissions', 'must list at least one of VIEW, TRANSACT, MANAGE');
  input.permissions.forEach((perm, i) => {
    if (perm === undefined) p.add(`permissions[${i}]`, 'must be one of VIEW, TRANSACT, MANAGE');
  });
  const perms = input.permissions.filter((x): x is Permission => x !== undefined);
  noDuplicates(p, 'permissions', perms);
  p.throwIfAny();
  return { name: name!, permissions: perms };
}

/** Validates the arguments of EnsurePlatformCredential. */
export function validateBootstrapCredential(input: {
  environment: Environment | undefined;
  tokenId: string;
  clientSecret: string;
  platformName: string;
}): { environment: Environment; tokenId: string; clientSecret: string; platformName: string } {
  const p = new FieldErrors();
  if (!input.environment) p.add('environment', 'must be SANDBOX or PRODUCTION');
  if (!isId(input.tokenId, 'Token')) p.add('tokenId', 'must be a token id Token:<uuid>');
  if (!/^[\x21-\x39\x3b-\x7e]{16,256}$/.test(input.clientSecret)) {
    p.add('clientSecret', 'must be 16 to 256 printable ASCII characters without ":" or spaces');
  }
  const name =
    input.platformName === ''
      ? (p.add('platformName', 'is required'), undefined)
      : text(p, 'platformName', input.platformName, 200);
  p.throwIfAny();
  return {
    environment: input.environment!,
    tokenId: normalizeTokenId(input.tokenId)!,
    clientSecret: input.clientSecret,
    platformName: name!,
  };
}

/**
 * The advisory-lock keys that serialize bootstraps (EnsurePlatformCredential) of one
 * platform name in an environment and of one token id, so concurrent starts agree.
 */
export function bootstrapLockKeys(c: {
  environment: Environment;
  platformName: string;
  tokenId: string;
}): string[] {
  return [`identity:bootstrap:${c.environment}:${c.platformName}`, `identity:bootstrap:${c.tokenId}`];
}

/** `Token:<uuid>` with the uuid in lower case (ids are stored that way); undefined when not a token id. */
export function normalizeTokenId(id: string): string | undefined {
  if (!isId(id, 'Token')) return undefined;
  return `Token:${idUuid(id).toLowerCase()}`;
}

/** Filters of a token listing. */
export interface TokenFilter {
  name?: string;
  createdAfter?: Date;
  createdBefore?: Date;
  updatedAfter?: Date;
  updatedBefore?: Date;
}

/** Validates listing filters; throws INVALID_INPUT naming every bad one. */
export function validateTokenFilter(input: TokenFilter): TokenFilter {
  const p = new FieldErrors();
  if (input.name !== undefined) text(p, 'name', input.name, 255);
  range(p, 'createdAfter', input.createdAfter, 'createdBefore', input.createdBefore);
  range(p, 'updatedAfter', input.updatedAfter, 'updatedBefore', input.updatedBefore);
  p.throwIfAny();
  return input;
}
