import { common, identity } from '@sluice/contracts';
import { invalidInput, isId } from '@sluice/core';
import type { PromiseClient } from '@sluice/rpc';
import type { WalletPlatform } from '../domain/model.js';

/** Where wallet-auth learns a platform's environment and embedded-wallet settings. */
export interface PlatformDirectory {
  get(platformId: string): Promise<WalletPlatform>;
}

/** Reads identity's platform config (GetPlatformConfig) on every call: config changes apply at once. */
export class IdentityPlatformDirectory implements PlatformDirectory {
  constructor(private readonly client: PromiseClient<identity.IdentityServiceClient>) {}

  async get(platformId: string): Promise<WalletPlatform> {
    if (!isId(platformId, 'Platform')) throw invalidInput([{ field: 'platformId', message: 'must be a Platform id (Platform:<uuid>)' }]);
    const { config } = await this.client.getPlatformConfig({ platformId });
    const w = config?.embeddedWalletConfig;
    return {
      id: platformId,
      environment: config?.environment === common.Environment.PRODUCTION ? 'PRODUCTION' : 'SANDBOX',
      appName: w?.appName,
      otpLength: w?.otpLength && w.otpLength >= 4 && w.otpLength <= 10 ? w.otpLength : 6,
      passkey: w?.passkey ? { rpId: w.passkey.rpId, origins: w.passkey.origins } : undefined,
      oidcIssuers: (w?.oidcIssuers ?? []).map((i) => ({ issuer: i.issuer, jwksUri: i.jwksUri, audiences: i.audiences })),
    };
  }
}
