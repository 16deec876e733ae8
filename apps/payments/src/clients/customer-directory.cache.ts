import { EVENTS } from '@sluice/api';
import { BoundedMap } from '@sluice/core';
import { EventFanout, onEach, type Bus } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { Worker } from '@sluice/runtime';
import type { CustomerDirectory, CustomerRef } from '../app/ports.js';

/** How long a kept platformCustomerId is trusted without hearing of its customer (the backstop). */
export const CUSTOMER_ID_MAX_AGE_MS = 60_000;

/**
 * The CustomerDirectory of payments with each customer's `platformCustomerId` kept in memory
 * (issue 15: a quote of a customer seen before costs identity no call). What identity answers
 * (`inner`) stays the rule: a customer it does not know, or that was deleted, is CUSTOMER_NOT_FOUND
 * and is not kept. A platformCustomerId never changes (identity's UpdateCustomer has no such field),
 * so an entry goes only when its customer may have stopped being payable:
 *
 * - CUSTOMER.DELETED (and CUSTOMER.UPDATED, should an update ever change it) from identity forgets
 *   the customer on every replica (`forget`, fed by an `EventFanout`): the next quote of a just
 *   deleted customer asks identity and is refused;
 * - nothing is kept or trusted while the fan-out is not live (before it started, while NATS is
 *   disconnected or being reconnected), and everything is forgotten each time it may have missed
 *   an event (`clear`): the next reads ask identity again;
 * - a read that was in flight when something was forgotten is not kept (it may predate the
 *   deletion that voided it);
 * - an entry is trusted at most `maxAgeMs` (60 s) after the read that made it, for an event
 *   identity could not publish (its relay cut from NATS) or a connection dead without the client
 *   knowing yet.
 *
 * So a customer deleted in identity can still be quoted for the time its CUSTOMER.DELETED takes to
 * reach this replica (milliseconds: identity's outbox relay, then NATS), at most `maxAgeMs`;
 * before the cache it was the time between identity's answer and the quote's commit.
 * `customerByUmaAddress` is not kept (an address can change; incoming payments are not the hot path).
 */
export class CachedCustomerDirectory implements CustomerDirectory {
  /** By customer id (ids are unique across platforms; the platform is checked on a hit). */
  private readonly entries: BoundedMap<string, { platformId: string; platformCustomerId: string; at: number }>;
  private generation = 0;

  constructor(
    private readonly inner: CustomerDirectory,
    private readonly o: {
      /** Whether identity's customer events reach this process now (the fan-out is live). */
      live: () => boolean;
      /** Most customers kept (the least recently used are forgotten first). Default 10,000. */
      maxEntries?: number;
      /** How long an entry is trusted without an event. Default CUSTOMER_ID_MAX_AGE_MS. */
      maxAgeMs?: number;
      now?: () => number;
    },
  ) {
    this.entries = new BoundedMap(o.maxEntries ?? 10_000);
  }

  async platformCustomerId(platformId: string, customerId: string): Promise<string> {
    if (!this.o.live()) {
      this.clear();
      return this.inner.platformCustomerId(platformId, customerId);
    }
    const now = (this.o.now ?? Date.now)();
    const hit = this.entries.get(customerId);
    if (hit && hit.platformId === platformId && now - hit.at < (this.o.maxAgeMs ?? CUSTOMER_ID_MAX_AGE_MS)) {
      return hit.platformCustomerId;
    }
    const generation = this.generation;
    const platformCustomerId = await this.inner.platformCustomerId(platformId, customerId);
    if (generation === this.generation && this.o.live()) {
      this.entries.set(customerId, { platformId, platformCustomerId, at: now });
    }
    return platformCustomerId;
  }

  customerByUmaAddress(platformId: string, umaAddress: string): Promise<CustomerRef | undefined> {
    return this.inner.customerByUmaAddress(platformId, umaAddress);
  }

  /** Forgets one customer (deleted or changed in identity); a read of it in flight is not kept. */
  forget(customerId: string): void {
    this.generation++;
    this.entries.delete(customerId);
  }

  /** Forgets every customer (events may have been missed). */
  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  /** The number of customers kept (for tests). */
  get size(): number {
    return this.entries.size;
  }
}

/**
 * The cached directory over `inner` (identity's client) and the worker that keeps it honest: an
 * EventFanout of identity's CUSTOMER.DELETED and CUSTOMER.UPDATED on the service's NATS connection,
 * started and stopped with the service.
 */
export function cachedCustomerDirectory(
  inner: CustomerDirectory,
  o: { bus: Bus; prefix: string; logger: Logger },
): { directory: CachedCustomerDirectory; fanout: EventFanout; worker: Worker } {
  const directory: CachedCustomerDirectory = new CachedCustomerDirectory(inner, { live: () => fanout.live });
  const fanout: EventFanout = new EventFanout({
    nc: o.bus.nc,
    prefix: o.prefix,
    name: 'payments customer ids',
    logger: o.logger,
    handlers: [
      onEach(EVENTS.CUSTOMER_DELETED, (d) => directory.forget(d.customerId)),
      onEach(EVENTS.CUSTOMER_UPDATED, (d) => directory.forget(d.customerId)),
    ],
    onGap: () => directory.clear(),
  });
  return { directory, fanout, worker: { start: () => fanout.start(), stop: () => fanout.stop() } };
}
