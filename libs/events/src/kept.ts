import { BoundedMap } from '@sluice/core';

/**
 * What a process keeps in memory of another service's records on the strength of an `EventFanout`
 * (fanout.ts) that tells it when one changed: a read of the owning service, kept per key (a record
 * id) and platform, trusted only while the fan-out is live. The rules of every such cache, in one
 * place:
 *
 * - the owner's answer (`read`) stays the rule: a refusal is not kept, and neither is an answer
 *   `keep` declines;
 * - the owner forgets a record on the event saying it changed (`forget`, from the fan-out's
 *   handler), and everything whenever events may have been missed (`clear`, from its `onGap`);
 * - nothing is kept or trusted while the fan-out is not live (before it started, while NATS is
 *   disconnected or being reconnected);
 * - a read that was in flight when something was forgotten is not kept (it may predate the change
 *   that voided it);
 * - an entry is trusted at most `maxAgeMs` after the read that made it: the backstop for an event
 *   the owning service could not publish yet (its relay cut from NATS) or a connection dead without
 *   the client knowing yet.
 *
 * So what a cache answers can be older than the owner's record by the time the change's event takes
 * to reach this process (milliseconds: the owner's outbox relay, then NATS), at most `maxAgeMs`.
 * Record ids are unique across platforms; the platform is checked on a hit, so another platform
 * naming the same id is the owner's to answer (not found there).
 */
export class KeptWhileLive<V> {
  private readonly entries: BoundedMap<string, { platformId: string; value: V; at: number }>;
  private generation = 0;

  constructor(
    private readonly o: {
      /** Whether the events that void an entry reach this process now (the fan-out is live). */
      live: () => boolean;
      /** How long an entry is trusted without an event. */
      maxAgeMs: number;
      /** Most entries kept (the least recently used are forgotten first). Default 10,000. */
      maxEntries?: number;
      /** Which answers may be kept (default all). */
      keep?: (value: V) => boolean;
      now?: () => number;
    },
  ) {
    this.entries = new BoundedMap(o.maxEntries ?? 10_000);
  }

  /** The kept value of `key` on `platformId`, or `read()`'s answer (kept if it may be). */
  async get(platformId: string, key: string, read: () => Promise<V>): Promise<V> {
    if (!this.o.live()) {
      this.clear();
      return read();
    }
    const now = (this.o.now ?? Date.now)();
    const hit = this.entries.get(key);
    if (hit && hit.platformId === platformId && now - hit.at < this.o.maxAgeMs) return hit.value;
    const generation = this.generation;
    const value = await read();
    if (generation === this.generation && this.o.live() && (this.o.keep?.(value) ?? true)) {
      this.entries.set(key, { platformId, value, at: now });
    }
    return value;
  }

  /** Forgets one record (changed or deleted by its owner); a read of it in flight is not kept. */
  forget(key: string): void {
    this.generation++;
    this.entries.delete(key);
  }

  /** Forgets everything (events may have been missed). */
  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  /** The number of records kept (for tests). */
  get size(): number {
    return this.entries.size;
  }
}
