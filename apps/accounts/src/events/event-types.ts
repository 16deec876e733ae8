/** Events the accounts service publishes (domain `accounts`, subject `<prefix>.accounts.<type lowercased>`). */
export const ACCOUNTS_EVENTS = {
  /** A posted balance changed. `data` is the public InternalAccount JSON, exactly as the REST API returns it. */
  BALANCE_UPDATED: 'INTERNAL_ACCOUNT.BALANCE_UPDATED',
  /** An external account was registered (internal event, not a webhook type). */
  EXTERNAL_ACCOUNT_CREATED: 'EXTERNAL_ACCOUNT.CREATED',
  /** An external account was deleted (internal event, not a webhook type). */
  EXTERNAL_ACCOUNT_DELETED: 'EXTERNAL_ACCOUNT.DELETED',
} as const;

/**
 * `data` of EXTERNAL_ACCOUNT.CREATED / EXTERNAL_ACCOUNT.DELETED. No account numbers
 * (events are widely readable inside the platform): consumers that need them call
 * GetExternalAccount.
 */
export interface ExternalAccountEventData {
  externalAccountId: string;
  /** Absent for platform-owned accounts. */
  customerId?: string;
  currency: string;
  accountType: string;
  beneficiaryVerificationStatus: string;
  platformAccountId?: string;
}

/** Identity events the accounts service consumes (domain `identity`). */
export const IDENTITY_EVENTS = {
  CUSTOMER_CREATED: 'CUSTOMER.CREATED',
  CUSTOMER_UPDATED: 'CUSTOMER.UPDATED',
  PLATFORM_CONFIG_UPDATED: 'PLATFORM_CONFIG.UPDATED',
} as const;

/** `data` of CUSTOMER.CREATED / CUSTOMER.UPDATED (the fields accounts reads). */
export interface CustomerEventData {
  customerId: string;
  currencies?: string[];
}

/** `data` of PLATFORM_CONFIG.UPDATED (the fields accounts reads). */
export interface PlatformConfigEventData {
  supportedCurrencies?: string[];
  /** Currencies of EMBEDDED_WALLET accounts every customer gets. */
  embeddedWalletCurrencies?: string[];
}
