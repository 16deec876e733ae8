import { identity } from '@sluice/contracts';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import type { ApprovalPolicies, CustomerDirectory, CustomerRef } from '../app/ports.js';
import { fail } from '../domain/errors.js';
import type { ApprovalPolicy } from '../domain/incoming-approval.js';

/**
 * The one client of payments to the identity service (`sluice.identity.v1.IdentityService`):
 * customers, and what the platform's config says of approving incoming payments.
 * CUSTOMER_NOT_FOUND passes through. Nothing is kept here: `CachedCustomerDirectory`
 * (kept-parties.ts) keeps platformCustomerIds in front of it.
 */
export class IdentityClient implements CustomerDirectory, ApprovalPolicies {
  private readonly client: PromiseClient<identity.IdentityServiceClient>;

  constructor(address: string, deadlineMs = 5000) {
    this.client = createRpcClient(identity.IdentityServiceClient, address, { defaultDeadlineMs: deadlineMs });
  }

  /**
   * A deleted customer does not pay: identity answers it (GetCustomer includes deleted customers,
   * `isDeleted` set), and it is refused here as identity refuses an unknown one, CUSTOMER_NOT_FOUND
   * (as accounts treats a deleted holder, and incoming payments a deleted receiver).
   */
  async platformCustomerId(platformId: string, customerId: string): Promise<string> {
    const { customer } = await this.client.getCustomer({ platformId, customerId });
    if (customer!.isDeleted) {
      throw fail('CUSTOMER_NOT_FOUND', 'Customer not found: it was deleted', { customerId });
    }
    return customer!.platformCustomerId;
  }

  /** Asks for the address as given, then in lower case (identity stores it as the platform wrote it). */
  async customerByUmaAddress(platformId: string, umaAddress: string): Promise<CustomerRef | undefined> {
    for (const address of new Set([umaAddress, umaAddress.toLowerCase()])) {
      const { customers } = await this.client.listCustomers({
        platformId,
        customerType: identity.CustomerType.UNSPECIFIED,
        umaAddress: address,
        isIncludingDeleted: false,
        page: { limit: 1 },
      });
      const c = customers[0];
      if (c) return { customerId: c.id, platformCustomerId: c.platformCustomerId };
    }
    return undefined;
  }

  async approvalPolicy(platformId: string): Promise<ApprovalPolicy> {
    const { config } = await this.client.getPlatformConfig({ platformId });
    const thresholds: Record<string, bigint> = {};
    for (const c of config?.supportedCurrencies ?? []) {
      if (c.incomingPaymentApprovalThreshold !== undefined) thresholds[c.currencyCode] = c.incomingPaymentApprovalThreshold;
    }
    return { hasWebhookEndpoint: !!config?.webhookEndpoint, thresholds };
  }

  close(): void {
    this.client.close();
  }
}
