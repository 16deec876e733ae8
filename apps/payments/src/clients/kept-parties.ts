import { EVENTS } from '@sluice/api';
import { EventFanout, KeptWhileLive, onEach, type Bus } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { Worker } from '@sluice/runtime';
import type { CustomerDirectory, CustomerRef, ExternalAccountInfo, ExternalAccountReads } from '../app/ports.js';

/** How long a kept platformCustomerId or external account is trusted without hearing of it (the backstop). */
export const KEPT_MAX_AGE_MS = 60_000;

/**
 * The CustomerDirectory of payments with each customer's `platformCustomerId` kept in memory
 * (issue 15: a quote of a customer seen before costs identity no call). What identity answers
 * (`inner`) stays the rule: a customer it does not know, or that was deleted, is CUSTOMER_NOT_FOUND
 * and is not kept. A platformCustomerId never changes (identity's UpdateCustomer has no such field),
 * so an entry goes only when its customer may have stopped being payable: identity's
 * CUSTOMER.DELETED (and CUSTOMER.UPDATED, should an update ever change it) forgets it on every
 * replica, within the rules of `KeptWhileLive` (@sluice/events). So a customer deleted in identity
 * can still be quoted for the time its CUSTOMER.DELETED takes to reach this replica (milliseconds),
 * at most KEPT_MAX_AGE_MS; before the cache it was the time between identity's answer and the
 * quote's commit. `customerByUmaAddress` is not kept (an address can change; incoming payments are
 * not the hot path).
 */
export class CachedCustomerDirectory implements CustomerDirectory {
  readonly kept: KeptWhileLive<string>;

  constructor(
    private readonly inner: CustomerDirectory,
    o: { live: () => boolean; maxAgeMs?: number; now?: () => number },
  ) {
    this.kept = new KeptWhileLive({ ...o, maxAgeMs: o.maxAgeMs ?? KEPT_MAX_AGE_MS });
  }

  platformCustomerId(platformId: string, customerId: string): Promise<string> {
    return this.kept.get(platformId, customerId, () => this.inner.platformCustomerId(platformId, customerId));
  }

  customerByUmaAddress(platformId: string, umaAddress: string): Promise<CustomerRef | undefined> {
    return this.inner.customerByUmaAddress(platformId, umaAddress);
  }
}

/**
 * External accounts as quote creation reads its destination, kept in memory (issue 15: a quote to
 * an external account used before costs accounts no call and no transaction). What payments needs
 * of one (owner, currency, type, rails, primary identifier) is written once, when it is created;
 * its status is written ACTIVE then and never changed; it can only be deleted. So only ACTIVE
 * accounts are kept, and accounts' EXTERNAL_ACCOUNT.DELETED forgets one on every replica, within
 * the rules of `KeptWhileLive`. (A status change, were one added to accounts, must publish an event
 * forgotten here too.)
 *
 * This is for quote creation only: a quote's execute does not trust it. The hold's own statement
 * reads the destination again in accounts (a deleted account holds nothing, the execute is refused),
 * and transfers and receiver lookups read accounts directly. So a deleted account can be quoted
 * (never paid) for the time its event takes to arrive.
 */
export class CachedExternalAccounts implements ExternalAccountReads {
  readonly kept: KeptWhileLive<ExternalAccountInfo>;

  constructor(
    private readonly inner: ExternalAccountReads,
    o: { live: () => boolean; maxAgeMs?: number; now?: () => number },
  ) {
    this.kept = new KeptWhileLive({ ...o, maxAgeMs: o.maxAgeMs ?? KEPT_MAX_AGE_MS, keep: (a) => a.status === 'ACTIVE' });
  }

  getExternalAccount(platformId: string, accountId: string): Promise<ExternalAccountInfo> {
    return this.kept.get(platformId, accountId, () => this.inner.getExternalAccount(platformId, accountId));
  }
}

/**
 * The kept parties of quotes over `identity` and `accounts` (their clients), and the worker that
 * keeps them honest: one EventFanout of identity's CUSTOMER.DELETED and CUSTOMER.UPDATED and
 * accounts' EXTERNAL_ACCOUNT.DELETED on the service's NATS connection, started and stopped with the
 * service; a gap in it forgets everything both keep.
 */
export function keptParties(
  inner: { customers: CustomerDirectory; externalAccounts: ExternalAccountReads },
  o: { bus: Bus; prefix: string; logger: Logger },
): { directory: CachedCustomerDirectory; externalAccounts: CachedExternalAccounts; fanout: EventFanout; worker: Worker } {
  const live = () => fanout.live;
  const directory = new CachedCustomerDirectory(inner.customers, { live });
  const externalAccounts = new CachedExternalAccounts(inner.externalAccounts, { live });
  const fanout: EventFanout = new EventFanout({
    nc: o.bus.nc,
    prefix: o.prefix,
    name: 'payments kept parties',
    logger: o.logger,
    handlers: [
      onEach(EVENTS.CUSTOMER_DELETED, (d) => directory.kept.forget(d.customerId)),
      onEach(EVENTS.CUSTOMER_UPDATED, (d) => directory.kept.forget(d.customerId)),
      onEach(EVENTS.EXTERNAL_ACCOUNT_DELETED, (d) => externalAccounts.kept.forget(d.externalAccountId)),
    ],
    onGap: () => {
      directory.kept.clear();
      externalAccounts.kept.clear();
    },
  });
  return { directory, externalAccounts, fanout, worker: { start: () => fanout.start(), stop: () => fanout.stop() } };
}
