import { openValue, sealValue, type MasterKeyring, type SealedValueScheme } from '@sluice/crypto';

/**
 * Payments' personal data at rest, sealed with the envelope kit of `@sluice/crypto` under
 * payments' master keyring: the counterparty name a receiver's institution answered for a
 * receiver lookup (a person's name, given back by GetLookup and put in the quote's
 * counterpartyInformation as FULL_NAME) in `receiver_lookups.sealed_counterparty_name`, bound to
 * the lookup id. Rows written before sealing are still read, and `main.ts rewrap` seals them.
 */
export const PAYMENTS_KEYRING = {
  current: 'PAYMENTS_DATA_MASTER_KEY',
  retired: 'PAYMENTS_DATA_MASTER_KEYS_RETIRED',
  idLabel: 'sluice-payments-data-master-key-id:v1',
};

export const COUNTERPARTY_NAME_SCHEME: SealedValueScheme = {
  prefix: 'spn1',
  context: 'sluice:payments-counterparty-name:v1',
  field: 'counterparty-name',
};

export function sealCounterpartyName(keyring: MasterKeyring, lookupId: string, name: string): string {
  return sealValue(keyring, COUNTERPARTY_NAME_SCHEME, lookupId, name);
}

export function openCounterpartyName(keyring: MasterKeyring, lookupId: string, sealed: string): string {
  return openValue(keyring, COUNTERPARTY_NAME_SCHEME, lookupId, sealed);
}
