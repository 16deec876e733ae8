import type { Environment } from '../domain/internal-account.js';

/** Where the accounts service learns a platform's environment when a request does not carry it (identity events). */
export interface PlatformDirectory {
  /** The platform's environment, or undefined when the platform does not exist. Throws when the directory is unreachable. */
  environmentOf(platformId: string): Promise<Environment | undefined>;
  /** Currencies of the platform's embedded wallets (`embeddedWalletConfig.currencies`); [] without embedded wallets. */
  embeddedWalletCurrencies?(platformId: string): Promise<string[]>;
}
