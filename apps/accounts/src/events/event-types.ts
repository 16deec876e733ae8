/** Events the accounts service publishes (domain `accounts`, subject `<prefix>.accounts.<type lowercased>`). */
export const ACCOUNTS_EVENTS = {
  /** A posted balance changed. `data` is the public InternalAccount JSON, exactly as the REST API returns it. */
  BALANCE_UPDATED: 'INTERNAL_ACCOUNT.BALANCE_UPDATED',
} as const;

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
}
