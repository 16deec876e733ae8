/** Where the accounts service learns about account holders (identity owns customers and platforms). */
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
