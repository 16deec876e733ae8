import { DomainError } from '@sluice/core';
import type { CustomerDirectory, CustomerRef } from '../../src/index.js';

/** A customer the fake knows: the platform's id for it, and optionally its platform and UMA address. */
export interface FakeCustomer {
  platformCustomerId: string;
  platformId?: string;
  umaAddress?: string;
}

/**
 * An in-memory stand-in for identity's customers in the payments service tests: the customers
 * a spec registers (by customer id); any other is identity's CUSTOMER_NOT_FOUND. A customer
 * with a UMA address is found by it on its platform (the address compared as given).
 */
export class FakeCustomers implements CustomerDirectory {
  constructor(readonly customers: Map<string, FakeCustomer> = new Map()) {}

  async platformCustomerId(_platformId: string, customerId: string): Promise<string> {
    const c = this.customers.get(customerId);
    if (!c) throw new DomainError('NOT_FOUND', 'CUSTOMER_NOT_FOUND', `${customerId} not found`);
    return c.platformCustomerId;
  }

  async customerByUmaAddress(platformId: string, umaAddress: string): Promise<CustomerRef | undefined> {
    for (const [customerId, c] of this.customers) {
      if (c.umaAddress === umaAddress && c.platformId === platformId) {
        return { customerId, platformCustomerId: c.platformCustomerId };
      }
    }
    return undefined;
  }
}
