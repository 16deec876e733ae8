/**
 * Every outbound port of accounts: what it needs of other services, implemented
 * by `clients/` (identity over gRPC) or by adapters a test or the benchmark
 * passes to compose.ts.
 */

/** Where accounts learns about account holders (identity owns customers and platforms). */
export interface HolderDirectory {
  /**
   * The platform's live customer, or undefined when it does not exist, is deleted or
   * belongs to another platform. `name`: an individual's full name or a business's
   * legal name, when known. Throws when the directory is unreachable.
   */
  customer(platformId: string, customerId: string): Promise<{ name?: string } | undefined>;
  /** The platform's display name, or undefined when unknown. */
  platformName(platformId: string): Promise<string | undefined>;
}

/** What accounts needs of a platform's configuration (identity owns it). */
export interface PlatformDirectory {
  /**
   * Currencies of the platform's embedded wallets (`embeddedWalletConfig.currencies`);
   * [] without embedded wallets or for an unknown platform. Throws when the directory is unreachable.
   */
  embeddedWalletCurrencies(platformId: string): Promise<string[]>;
}
