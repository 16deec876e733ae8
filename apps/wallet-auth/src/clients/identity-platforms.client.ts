import { common, type identity } from '@sluice/contracts';
import type { PromiseClient } from '@sluice/rpc';
import type { WalletPlatform } from '../domain/model.js';
import { otpLength } from '../domain/otp.js';
import type { PlatformDirectory } from '../app/ports.js';

/** The platform directory over identity's `GetPlatformConfig`, read on every call so config changes apply at once. */
export class IdentityPlatformDirectory implements PlatformDirectory {
  constructor(private readonly client: Pick<PromiseClient<identity.IdentityServiceClient>, 'getPlatformConfig'>) {}

  async get(platformId: string): Promise<WalletPlatform> {
    const { config } = await this.client.getPlatformConfig({ platformId });
    const w = config?.embeddedWalletConfig;
    return {
      id: platformId,
      environment: config?.environment === common.Environment.PRODUCTION ? 'PRODUCTION' : 'SANDBOX',
      appName: w?.appName,
      otpLength: otpLength(w?.otpLength),
      passkey: w?.passkey ? { rpId: w.passkey.rpId, origins: w.passkey.origins } : undefined,
      oidcIssuers: (w?.oidcIssuers ?? []).map((i) => ({ issuer: i.issuer, jwksUri: i.jwksUri, audiences: i.audiences })),
    };
  }
}
