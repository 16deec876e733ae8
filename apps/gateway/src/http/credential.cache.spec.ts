import { describe, expect, it } from 'vitest';
import { CredentialCache } from './credential.cache.js';
import type { AuthenticatedPlatform } from './types.js';

const platform = (tokenId: string): AuthenticatedPlatform => ({
  id: 'Platform:p',
  environment: 'SANDBOX',
  tokenId,
  permissions: ['VIEW'],
});

describe('CredentialCache', () => {
  it('keys on both token id and secret, never the secret itself', () => {
    const k = CredentialCache.key('Token:a', 's1');
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(k).not.toBe(CredentialCache.key('Token:a', 's2'));
    expect(k).not.toBe(CredentialCache.key('Token:as', '1'));
  });

  it('expires entries after the TTL', () => {
    let now = 1000;
    const cache = new CredentialCache(5000, 10, () => now);
    cache.set('k', platform('Token:a'), now);
    now += 4999;
    expect(cache.get('k')).toBeDefined();
    now += 1;
    expect(cache.get('k')).toBeUndefined();
  });

  it('revoke drops every entry of the token and nothing else', () => {
    const cache = new CredentialCache(5000, 10);
    cache.set('k1', platform('Token:a'), Date.now());
    cache.set('k2', platform('Token:a'), Date.now());
    cache.set('k3', platform('Token:b'), Date.now());
    cache.revoke('Token:a');
    expect(cache.get('k1')).toBeUndefined();
    expect(cache.get('k2')).toBeUndefined();
    expect(cache.get('k3')).toBeDefined();
  });

  it('does not cache a verification that was in flight when the token was revoked', () => {
    let now = 1000;
    const cache = new CredentialCache(5000, 10, () => now);
    const started = now;
    now += 10;
    cache.revoke('Token:a');
    now += 10;
    cache.set('k', platform('Token:a'), started);
    expect(cache.get('k')).toBeUndefined();
    cache.set('k', platform('Token:a'), now + 1);
    expect(cache.get('k')).toBeDefined();
  });

  it('is bypassed while disabled (event feed down), and with TTL 0', () => {
    let now = 1000;
    const cache = new CredentialCache(5000, 10, () => now);
    cache.set('k', platform('Token:a'), now);
    cache.setEnabled(false);
    expect(cache.get('k')).toBeUndefined();
    now += 10;
    cache.set('k', platform('Token:a'), now);
    expect(cache.size).toBe(0);
    cache.setEnabled(true);
    now += 10;
    cache.set('k', platform('Token:a'), now);
    expect(cache.get('k')).toBeDefined();
    const off = new CredentialCache(0, 10);
    off.set('k', platform('Token:a'), Date.now());
    expect(off.get('k')).toBeUndefined();
  });

  it('does not cache a verification that was in flight when the cache was emptied (events may have been missed)', () => {
    let now = 1000;
    const cache = new CredentialCache(5000, 10, () => now);
    const started = now;
    now += 10;
    cache.clear();
    now += 10;
    cache.set('k', platform('Token:a'), started);
    expect(cache.size).toBe(0);
    cache.set('k', platform('Token:a'), now);
    expect(cache.get('k')).toBeDefined();
  });

  it('stays within its size bound, dropping the oldest', () => {
    const cache = new CredentialCache(5000, 2);
    cache.set('k1', platform('Token:1'), Date.now());
    cache.set('k2', platform('Token:2'), Date.now());
    cache.set('k3', platform('Token:3'), Date.now());
    expect(cache.size).toBe(2);
    expect(cache.get('k1')).toBeUndefined();
    expect(cache.get('k3')).toBeDefined();
  });
});
