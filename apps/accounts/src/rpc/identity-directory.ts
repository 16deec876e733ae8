import { isDomainError } from '@sluice/core';
import { common, identity } from '@sluice/contracts';
import { status } from '@grpc/grpc-js';
import { createRpcClient, RpcError, type PromiseClient } from '@sluice/rpc';
import type { PlatformDirectory } from '../app/platform-directory.js';
import type { Environment } from '../domain/internal-account.js';

/**
 * PlatformDirectory over identity's GetPlatform. A platform's environment never
 * changes, so answers are cached for the life of the process.
 */
export class IdentityPlatformDirectory implements PlatformDirectory {
  private readonly client: PromiseClient<identity.IdentityServiceClient>;
  private readonly cache = new Map<string, Environment>();

  constructor(address: string) {
    this.client = createRpcClient(identity.IdentityServiceClient, address, { defaultDeadlineMs: 5000 });
  }

  async environmentOf(platformId: string): Promise<Environment | undefined> {
    const cached = this.cache.get(platformId);
    if (cached) return cached;
    try {
      const { platform } = await this.client.getPlatform({ platformId });
      const env: Environment | undefined =
        platform?.environment === common.Environment.SANDBOX
          ? 'SANDBOX'
          : platform?.environment === common.Environment.PRODUCTION
            ? 'PRODUCTION'
            : undefined;
      if (env) this.cache.set(platformId, env);
      return env;
    } catch (err) {
      if (isDomainError(err) && (err.kind === 'NOT_FOUND' || err.kind === 'INVALID_ARGUMENT'))
        return undefined;
      if (
        err instanceof RpcError &&
        (err.grpcCode === status.NOT_FOUND || err.grpcCode === status.INVALID_ARGUMENT)
      )
        return undefined;
      throw err;
    }
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
