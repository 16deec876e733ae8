import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  clientSecretMatches,
  generateClientSecret,
  hashClientSecret,
  normalizeTokenId,
  validateBootstrapCredential,
  validateNewToken,
} from './token.js';

describe('client secrets', () => {
  it('are 32 random bytes in base64url and stored as their SHA-256', () => {
    const s = generateClientSecret();
    expect(Buffer.from(s, 'base64url')).toHaveLength(32);
    expect(hashClientSecret(s).equals(createHash('sha256').update(s).digest())).toBe(true);
    expect(clientSecretMatches(s, hashClientSecret(s))).toBe(true);
    expect(clientSecretMatches(`${s}x`, hashClientSecret(s))).toBe(false);
    expect(clientSecretMatches(s, undefined)).toBe(false);
    expect(clientSecretMatches(s, Buffer.alloc(3))).toBe(false);
  });
});

describe('token rules', () => {
  it('normalizes token ids to lower case and refuses other ids', () => {
    expect(normalizeTokenId('Token:0193A0C0-0000-7000-8000-00000000000A')).toBe(
      'Token:0193a0c0-0000-7000-8000-00000000000a',
    );
    expect(normalizeTokenId('Customer:0193a0c0-0000-7000-8000-00000000000a')).toBeUndefined();
  });

  it('validates new tokens', () => {
    expect(validateNewToken({ name: 'ci', permissions: ['VIEW', 'MANAGE'] })).toEqual({
      name: 'ci',
      permissions: ['VIEW', 'MANAGE'],
    });
    expect(() => validateNewToken({ name: 'x'.repeat(256), permissions: ['VIEW'] })).toThrow(/name/);
  });

  it('validates bootstrap credentials', () => {
    const ok = validateBootstrapCredential({
      environment: 'SANDBOX',
      tokenId: 'Token:0193A0C0-0000-7000-8000-00000000000A',
      clientSecret: 'a-long-enough-secret',
      platformName: 'Local',
    });
    expect(ok.tokenId).toBe('Token:0193a0c0-0000-7000-8000-00000000000a');
    expect(() => validateBootstrapCredential({ ...ok, clientSecret: 'has space inside it!' })).toThrow(
      /clientSecret/,
    );
  });
});
