import { identity } from '@sluice/contracts';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import type { CustomerDirectory } from '../app/ports.js';

/** The one client of agents to identity: customers (CUSTOMER_NOT_FOUND passes through). */
export class IdentityClient implements CustomerDirectory {
  private readonly client: PromiseClient<identity.IdentityServiceClient>;

  constructor(address: string, deadlineMs = 5000) {
    this.client = createRpcClient(identity.IdentityServiceClient, address, { defaultDeadlineMs: deadlineMs });
  }

  async customer(platformId: string, customerId: string): Promise<{ customerId: string; platformCustomerId: string }> {
    const { customer } = await this.client.getCustomer({ platformId, customerId });
    return { customerId: customer!.id, platformCustomerId: customer!.platformCustomerId };
  }

  close(): void {
    this.client.close();
  }
}
