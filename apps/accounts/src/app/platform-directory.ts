/** What accounts needs of a platform's configuration (identity owns it). */
export interface PlatformDirectory {
  /**
   * Currencies of the platform's embedded wallets (`embeddedWalletConfig.currencies`);
   * [] without embedded wallets or for an unknown platform. Throws when the directory is unreachable.
   */
  embeddedWalletCurrencies(platformId: string): Promise<string[]>;
}
