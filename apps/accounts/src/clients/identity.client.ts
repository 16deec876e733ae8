import { status } from '@grpc/grpc-js';
import { identity } from '@sluice/contracts';
import { isDomainError } from '@sluice/core';
import { createRpcClient, RpcError, type PromiseClient } from '@sluice/rpc';
import type { HolderDirectory, PlatformDirectory } from '../app/ports.js';

/** True when identity answered that what was asked for does not exist (or cannot: a malformed id). */
function isAbsent(err: unknown): boolean {
  if (isDomainError(err)) return err.kind === 'NOT_FOUND' || err.kind === 'INVALID_ARGUMENT';
  return (
    err instanceof RpcError && (err.grpcCode === status.NOT_FOUND || err.grpcCode === status.INVALID_ARGUMENT)
  );
}

/** True when identity does not implement the RPC (a version without it). */
function isUnimplemented(err: unknown): boolean {
  if (isDomainError(err)) return err.kind === 'UNIMPLEMENTED';
  return err instanceof RpcError && err.grpcCode === status.UNIMPLEMENTED;
}

/**
 * The one client of identity: HolderDirectory over GetCustomer / GetPlatform
 * (platform-scoped: another platform's customer is not found) and
 * PlatformDirectory over GetPlatformConfig. Nothing is cached: a customer may be
 * deleted and a config changed at any time, and these calls are rare (creating an
 * external account, ensuring a customer's accounts).
 */
export class IdentityClient implements HolderDirectory, PlatformDirectory {
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
      if (isAbsent(err)) return undefined;
      throw err;
    }
  }

  async platformName(platformId: string): Promise<string | undefined> {
    try {
      const { platform } = await this.client.getPlatform({ platformId });
      return platform?.name || undefined;
    } catch (err) {
      if (isAbsent(err)) return undefined;
      throw err;
    }
  }

  async embeddedWalletCurrencies(platformId: string): Promise<string[]> {
    try {
      const { config } = await this.client.getPlatformConfig({ platformId });
      return config?.embeddedWalletConfig?.currencies ?? [];
    } catch (err) {
      if (isAbsent(err) || isUnimplemented(err)) return [];
      throw err;
    }
  }

  close(): void {
    this.client.close();
  }
}
