import { createHash } from 'node:crypto';
import type { AuthenticatedPlatform } from './types.js';

const REVOCATION_MEMORY_MS = 60_000;

interface Entry<P> {
  platform: P;
  expiresAt: number;
}

/**
 * Verified API credentials, kept in memory for at most `ttlMs` (≤ 5 s) to save
 * the identity hop. Keyed by SHA-256 of (token id, secret): the secret itself
 * is never held. A TOKEN.DELETED event drops every entry of the token at once
 * (`revoke`), and a verification that was in flight when the token was revoked
 * is not cached. When the event feed is down the cache is bypassed (`setEnabled`), and a
 * verification that was in flight when the cache was emptied (`clear`: events may have been
 * missed) is not cached either.
 * Agent bearer tokens use a cache of their own (`P` = the authenticated agent,
 * its `tokenId` the agent id), emptied of an agent by AGENT_TOKEN.REVOKED and
 * AGENT.UPDATED.
 */
export class CredentialCache<P extends { tokenId: string } = AuthenticatedPlatform> {
  private readonly entries = new Map<string, Entry<P>>();
  private readonly byToken = new Map<string, Set<string>>();
  /** tokenId → time of its last revocation (kept a minute, longer than any in-flight verification). */
  private readonly revokedAt = new Map<string, number>();
  private enabled = true;
  /** When the cache was last emptied: a verification that started before then is not cached. */
  private clearedAt = -Infinity;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  static key(tokenId: string, secret: string): string {
    return createHash('sha256').update(tokenId).update('\u0000').update(secret).digest('hex');
  }

  get(key: string): P | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (!this.enabled || e.expiresAt <= this.now()) {
      this.delete(key, e.platform.tokenId);
      return undefined;
    }
    return e.platform;
  }

  /**
   * Caches a verification that started at `verifiedSince` (before the identity
   * call), unless the token was revoked or the cache emptied since then.
   */
  set(key: string, platform: P, verifiedSince: number): void {
    if (!this.enabled || this.ttlMs <= 0 || this.clearedAt >= verifiedSince) return;
    const revoked = this.revokedAt.get(platform.tokenId);
    if (revoked !== undefined && revoked >= verifiedSince) return;
    if (this.entries.size >= this.maxEntries) this.evict();
    this.entries.set(key, { platform, expiresAt: this.now() + this.ttlMs });
    let keys = this.byToken.get(platform.tokenId);
    if (!keys) this.byToken.set(platform.tokenId, (keys = new Set()));
    keys.add(key);
  }

  /** Drops every cached credential of a deleted token. */
  revoke(tokenId: string): void {
    const now = this.now();
    this.revokedAt.set(tokenId, now);
    for (const key of this.byToken.get(tokenId) ?? []) this.entries.delete(key);
    this.byToken.delete(tokenId);
    for (const [t, at] of this.revokedAt) if (at + REVOCATION_MEMORY_MS < now) this.revokedAt.delete(t);
  }

  /** Empties the cache (and keeps it off while `enabled` is false: no event feed, no caching). */
  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    if (!enabled) this.clear();
  }

  /** Empties the cache; a verification in flight now is not cached. */
  clear(): void {
    this.clearedAt = this.now();
    this.entries.clear();
    this.byToken.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private delete(key: string, tokenId: string): void {
    this.entries.delete(key);
    const keys = this.byToken.get(tokenId);
    keys?.delete(key);
    if (keys && keys.size === 0) this.byToken.delete(tokenId);
  }

  private evict(): void {
    const now = this.now();
    for (const [key, e] of this.entries) if (e.expiresAt <= now) this.delete(key, e.platform.tokenId);
    // Still full: drop the oldest entries (Map keeps insertion order).
    for (const [key, e] of this.entries) {
      if (this.entries.size < this.maxEntries) break;
      this.delete(key, e.platform.tokenId);
    }
  }
}
