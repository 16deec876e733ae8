import { isDomainError } from '@sluice/core';
import { identity } from '@sluice/contracts';
import { status } from '@grpc/grpc-js';
import { createRpcClient, RpcError, type PromiseClient } from '@sluice/rpc';
import type { HolderDirectory } from '../app/holder-directory.js';

function isNotFound(err: unknown): boolean {
  if (isDomainError(err)) return err.kind === 'NOT_FOUND' || err.kind === 'INVALID_ARGUMENT';
  return err instanceof RpcError && (err.grpcCode === status.NOT_FOUND || err.grpcCode === status.INVALID_ARGUMENT);
}

/**
 * HolderDirectory over identity's GetCustomer / GetPlatform (platform-scoped:
 * another platform's customer is not found). Not cached: a customer may be deleted
 * at any time, and creating an external account is rare.
 */
export class IdentityHolderDirectory implements HolderDirectory {
  private readonly client: PromiseClient<identity.IdentityServiceClient>;

  constructor(address: string) {
    this.client = createRpcClient(identity.IdentityServiceClient, address, { defaultDeadlineMs: 5000 });
  }

  async customer(platformId: string, customerId: string): Promise<{ name?: string } | undefined> {
    try {
      const { customer } = await this.client.getCustomer({ platformId, customerId });
      if (!customer || customer.isDeleted || customer.platformId !== platformId) return undefined;
      const name =
        customer.customerType === identity.CustomerType.BUSINESS
          ? (customer.businessInfo?.legalName ?? customer.fullName)
          : customer.fullName;
      return name ? { name } : {};
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async platformName(platformId: string): Promise<string | undefined> {
    try {
      const { platform } = await this.client.getPlatform({ platformId });
      return platform?.name || undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  close(): void {
    this.client.close();
  }
}
