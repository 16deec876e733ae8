import { openValue, sealValue, type MasterKeyring, type SealedValueScheme } from '@sluice/crypto';
import { fromJson } from '@sluice/store';

/**
 * Payments' personal data at rest, sealed with the envelope kit of `@sluice/crypto` under
 * payments' master keyring:
 * - the counterparty name a receiver's institution answered for a receiver lookup (a person's
 *   name, given back by GetLookup and put in the quote's counterpartyInformation as FULL_NAME) in
 *   `receiver_lookups.sealed_counterparty_name`, bound to the lookup id;
 * - the counterpartyInformation of a quote or a transaction (FULL_NAME copied from the lookup,
 *   an incoming payment's senderUmaAddress) in `quotes.sealed_counterparty_information` and
 *   `transactions.sealed_counterparty_information`, the map as JSON, bound to the quote id or the
 *   transaction id (`Quote:…` / `Transaction:…`, so a quote's value does not open in its
 *   transaction's row). An empty map, what most payments carry, is not sealed: the sealed column
 *   stays null and the plaintext column holds `{}`, so those payments pay no cryptography.
 * Rows written before sealing are still read, and `main.ts rewrap` seals them.
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

export const COUNTERPARTY_INFORMATION_SCHEME: SealedValueScheme = {
  prefix: 'spc1',
  context: 'sluice:payments-counterparty-information:v1',
  field: 'counterparty-information',
};

/** The columns of a counterpartyInformation map of the row `owner` (a quote or transaction id). */
export interface CounterpartyInformationColumns {
  /** JSON text for the jsonb column: `{}` whenever the map is sealed (or empty). */
  counterparty_information: string;
  sealed_counterparty_information: string | null;
}

/**
 * How a counterpartyInformation map is written: sealed when it holds anything (the plaintext
 * column then holds `{}`); an empty map is written as `{}` alone, with nothing sealed.
 */
export function sealCounterpartyInformation(
  keyring: MasterKeyring,
  owner: string,
  info: Record<string, string>,
): CounterpartyInformationColumns {
  if (Object.keys(info).length === 0) return { counterparty_information: '{}', sealed_counterparty_information: null };
  return {
    counterparty_information: '{}',
    sealed_counterparty_information: sealValue(keyring, COUNTERPARTY_INFORMATION_SCHEME, owner, JSON.stringify(info)),
  };
}

/** The map of a row: the sealed column opened when set, else the plaintext column (rows written before sealing). */
export function openCounterpartyInformation(
  keyring: MasterKeyring,
  owner: string,
  sealed: string | null | undefined,
  plain: Record<string, string> | string,
): Record<string, string> {
  if (sealed) return JSON.parse(openValue(keyring, COUNTERPARTY_INFORMATION_SCHEME, owner, sealed)) as Record<string, string>;
  return fromJson(plain);
}
