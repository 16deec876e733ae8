import { BoundedMap } from '@sluice/core';
import type { EntityManager } from '@sluice/store';
import type { DeliveryRepository, EndpointState } from '../store/delivery.repository.js';

/** A platform the dispatcher has not heard of yet (no row). */
const UNKNOWN = 'unknown' as const;

type Known = EndpointState | typeof UNKNOWN;

/**
 * What the dispatcher knows of each platform's endpoint, kept in memory so that an event of a
 * platform without an endpoint is acked without a database transaction (issue 15: a platform that
 * set no endpoint costs the dispatcher nothing per event).
 *
 * Correctness rests on invalidation, not on time: every change of a platform's state in the
 * database (`rememberEndpoint`, `disable`) notifies `ENDPOINT_STATE_CHANNEL` when it commits, and
 * every replica then forgets everything it cached (`clear`), as it does when its LISTEN connection
 * comes back (it may have missed notifications meanwhile); while it is not listening nothing is
 * cached. A read that started before a clear is not
 * cached (the generation moved), so a stale answer never outlives the notification that voids it.
 * `maxAgeMs` bounds an entry's life anyway, as a safety net. The window left is the one the
 * dispatcher always had: an event handled before the change of its platform's endpoint is handled
 * under the old state.
 */
export class EndpointStateCache {
  private readonly entries: BoundedMap<string, { state: Known; at: number }>;
  private generation = 0;

  constructor(
    private readonly o: {
      repo: DeliveryRepository;
      /** An entity manager for a read outside any transaction (a fork of the ORM's). */
      em: () => EntityManager;
      /** Most platforms kept (the oldest are forgotten first). Default 10,000. */
      maxEntries?: number;
      /** How long an entry is trusted without a notification. Default 60 s. */
      maxAgeMs?: number;
      now?: () => number;
      /** Whether notifications flow now; while they do not, nothing cached is trusted or kept. */
      listening?: () => boolean;
    },
  ) {
    this.entries = new BoundedMap(o.maxEntries ?? 10_000);
  }

  /** Whether the platform is known to have no endpoint (and the dispatcher did not disable it). */
  async hasNoEndpoint(platformId: string): Promise<boolean> {
    const state = await this.get(platformId);
    return state !== UNKNOWN && !state.hasEndpoint && !state.disabled;
  }

  /** Forgets every cached state (a platform's state changed somewhere, or notifications may have been missed). */
  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  /** The number of platforms cached (for tests). */
  get size(): number {
    return this.entries.size;
  }

  private async get(platformId: string): Promise<Known> {
    const now = (this.o.now ?? Date.now)();
    if (this.o.listening && !this.o.listening()) {
      this.clear();
      return (await this.o.repo.endpointState(this.o.em(), platformId)) ?? UNKNOWN;
    }
    const hit = this.entries.get(platformId);
    if (hit && now - hit.at < (this.o.maxAgeMs ?? 60_000)) return hit.state;
    const generation = this.generation;
    const state = (await this.o.repo.endpointState(this.o.em(), platformId)) ?? UNKNOWN;
    if (generation === this.generation) this.entries.set(platformId, { state, at: now });
    return state;
  }
}
