import { isDomainError } from '@sluice/core';
import { identity } from '@sluice/contracts';
import { status } from '@grpc/grpc-js';
import { createRpcClient, RpcError, type PromiseClient } from '@sluice/rpc';
import type { PlatformDirectory } from '../app/platform-directory.js';

/** PlatformDirectory over identity's GetPlatformConfig. */
export class IdentityPlatformDirectory implements PlatformDirectory {
  private readonly client: PromiseClient<identity.IdentityServiceClient>;

  constructor(address: string) {
    this.client = createRpcClient(identity.IdentityServiceClient, address, { defaultDeadlineMs: 5000 });
  }

  /** Read on every call (the config can change); an unknown platform has none. */
  async embeddedWalletCurrencies(platformId: string): Promise<string[]> {
    try {
      const { config } = await this.client.getPlatformConfig({ platformId });
      return config?.embeddedWalletConfig?.currencies ?? [];
    } catch (err) {
      if (isDomainError(err) && (err.kind === 'NOT_FOUND' || err.kind === 'INVALID_ARGUMENT' || err.kind === 'UNIMPLEMENTED')) return [];
      if (err instanceof RpcError && (err.grpcCode === status.NOT_FOUND || err.grpcCode === status.UNIMPLEMENTED)) return [];
      throw err;
    }
  }

  close(): void {
    this.client.close();
  }
}
