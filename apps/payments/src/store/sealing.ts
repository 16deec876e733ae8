import {
  blindIndex,
  blindIndexes,
  openValue,
  sealValue,
  type MasterKeyring,
  type SealedValueScheme,
} from '@sluice/crypto';
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
 *   stays null and the plaintext column holds `{}`, so those payments pay no cryptography;
 * - the payer data a quote sends to a UMA receiver's institution (`senderCustomerInfo`: the
 *   sender's FULL_NAME, BIRTH_DATE...) in `quotes.sealed_sender_customer_info`, the map as JSON,
 *   bound to the quote id; `sender_customer_info` then holds `{}`, and an empty map (most quotes)
 *   is written as `{}` with nothing sealed;
 * - what a platform answers about its receiver when it approves an incoming payment
 *   (`receiverCustomerInfo`) in `incoming_approvals.sealed_receiver_customer_info`, the map as
 *   JSON, bound to the transaction id (the row's key); `receiver_customer_info` then stays null,
 *   and an empty map is written as `{}` with nothing sealed;
 * - what the rail pays to or is paid from (`counterpartyIdentifier`: an external account's account
 *   number, IBAN, CLABE, PIX key or wallet address, or the UMA address of a UMA payment) in
 *   `transactions.sealed_counterparty_identifier`, bound to the transaction id;
 *   `counterparty_identifier` then stays null. Every value is sealed, UMA addresses too (one rule,
 *   and nothing filters on the column);
 * - UMA addresses (a person at an institution, as an email address names one): a transaction's
 *   source (an incoming payment's sender) and destination address, a quote's destination address
 *   (kept out of its `destination` jsonb), a receiver lookup's receiver and sender addresses, each in
 *   a `sealed_…_uma_address` column bound to the row id, the plaintext column null. GET
 *   /transactions filters on a transaction's two by equality, so each also has a blind index
 *   (`…_uma_address_index`, `transactionUmaAddressIndexes`). A payment without a UMA address
 *   seals and indexes nothing.
 * Each has its own scheme (prefix and context; the UMA addresses one prefix and context, each
 * column its own field, which the value's AAD binds), so a value moved to another column, or to
 * another row, does not open. Rows written before sealing are still read, and `main.ts rewrap`
 * seals them.
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
  return { counterparty_information: '{}', sealed_counterparty_information: sealMap(keyring, COUNTERPARTY_INFORMATION_SCHEME, owner, info) };
}

/** The map of a row: the sealed column opened when set, else the plaintext column (rows written before sealing). */
export function openCounterpartyInformation(
  keyring: MasterKeyring,
  owner: string,
  sealed: string | null | undefined,
  plain: Record<string, string> | string,
): Record<string, string> {
  if (sealed) return openMap(keyring, COUNTERPARTY_INFORMATION_SCHEME, owner, sealed);
  return fromJson(plain);
}

/** Seals a non-empty JSON map for `owner`; null for an empty one (nothing to seal, no cryptography). */
function sealMap(
  keyring: MasterKeyring,
  scheme: SealedValueScheme,
  owner: string,
  map: Record<string, unknown>,
): string | null {
  return Object.keys(map).length === 0 ? null : sealValue(keyring, scheme, owner, JSON.stringify(map));
}

function openMap<T>(keyring: MasterKeyring, scheme: SealedValueScheme, owner: string, sealed: string): T {
  return JSON.parse(openValue(keyring, scheme, owner, sealed)) as T;
}

export const SENDER_CUSTOMER_INFO_SCHEME: SealedValueScheme = {
  prefix: 'sps1',
  context: 'sluice:payments-sender-customer-info:v1',
  field: 'sender-customer-info',
};

/** The columns of a quote's senderCustomerInfo. */
export interface SenderCustomerInfoColumns {
  /** JSON text for the jsonb column (NOT NULL): `{}` whenever the map is sealed (or empty). */
  sender_customer_info: string;
  sealed_sender_customer_info: string | null;
}

/**
 * How a quote's senderCustomerInfo is written: sealed (bound to the quote id) when it holds
 * anything, the plaintext column then `{}`; an empty map is written as `{}` alone.
 */
export function sealSenderCustomerInfo(
  keyring: MasterKeyring,
  quoteId: string,
  info: Record<string, unknown>,
): SenderCustomerInfoColumns {
  return { sender_customer_info: '{}', sealed_sender_customer_info: sealMap(keyring, SENDER_CUSTOMER_INFO_SCHEME, quoteId, info) };
}

/** A quote's senderCustomerInfo: the sealed column opened when set, else the plaintext column (rows written before sealing). */
export function openSenderCustomerInfo(
  keyring: MasterKeyring,
  quoteId: string,
  sealed: string | null | undefined,
  plain: Record<string, unknown> | string,
): Record<string, unknown> {
  if (sealed) return openMap(keyring, SENDER_CUSTOMER_INFO_SCHEME, quoteId, sealed);
  return fromJson(plain);
}

export const RECEIVER_CUSTOMER_INFO_SCHEME: SealedValueScheme = {
  prefix: 'spr1',
  context: 'sluice:payments-receiver-customer-info:v1',
  field: 'receiver-customer-info',
};

/** The columns of an incoming approval's receiverCustomerInfo. */
export interface ReceiverCustomerInfoColumns {
  /** JSON text for the jsonb column: null when there is none or it is sealed, `{}` for an empty map. */
  receiver_customer_info: string | null;
  sealed_receiver_customer_info: string | null;
}

/**
 * How an incoming approval's receiverCustomerInfo is written: none → both columns null; an empty
 * map → `{}` in the plaintext column, nothing sealed; otherwise sealed (bound to the transaction
 * id), the plaintext column null.
 */
export function sealReceiverCustomerInfo(
  keyring: MasterKeyring,
  transactionId: string,
  info: Record<string, unknown> | undefined,
): ReceiverCustomerInfoColumns {
  if (!info) return { receiver_customer_info: null, sealed_receiver_customer_info: null };
  const sealed = sealMap(keyring, RECEIVER_CUSTOMER_INFO_SCHEME, transactionId, info);
  return { receiver_customer_info: sealed ? null : '{}', sealed_receiver_customer_info: sealed };
}

/** An approval's receiverCustomerInfo: the sealed column opened when set, else the plaintext column (absent when null). */
export function openReceiverCustomerInfo(
  keyring: MasterKeyring,
  transactionId: string,
  sealed: string | null | undefined,
  plain: Record<string, unknown> | string | null,
): Record<string, unknown> | undefined {
  if (sealed) return openMap(keyring, RECEIVER_CUSTOMER_INFO_SCHEME, transactionId, sealed);
  return plain ? fromJson(plain) : undefined;
}

export const COUNTERPARTY_IDENTIFIER_SCHEME: SealedValueScheme = {
  prefix: 'spi1',
  context: 'sluice:payments-counterparty-identifier:v1',
  field: 'counterparty-identifier',
};

/** The columns of a transaction's counterpartyIdentifier. */
export interface CounterpartyIdentifierColumns {
  /** Null whenever the value is sealed (or absent); only rows written before sealing hold it. */
  counterparty_identifier: string | null;
  sealed_counterparty_identifier: string | null;
}

/**
 * How a transaction's counterpartyIdentifier is written: sealed (bound to the transaction id), the
 * plaintext column null; none (or '', which reads as none) → both columns null.
 */
export function sealCounterpartyIdentifier(
  keyring: MasterKeyring,
  transactionId: string,
  identifier: string | undefined,
): CounterpartyIdentifierColumns {
  return {
    counterparty_identifier: null,
    sealed_counterparty_identifier: identifier
      ? sealValue(keyring, COUNTERPARTY_IDENTIFIER_SCHEME, transactionId, identifier)
      : null,
  };
}

/** A transaction's counterpartyIdentifier: the sealed column opened when set, else the plaintext column (absent when null or ''). */
export function openCounterpartyIdentifier(
  keyring: MasterKeyring,
  transactionId: string,
  sealed: string | null | undefined,
  plain: string | null,
): string | undefined {
  if (sealed) return openValue(keyring, COUNTERPARTY_IDENTIFIER_SCHEME, transactionId, sealed);
  return plain || undefined;
}

const umaAddressScheme = (field: string): SealedValueScheme => ({
  prefix: 'spu1',
  context: 'sluice:payments-uma-address:v1',
  field,
});

/** The UMA address columns: one scheme each (the same prefix and context, each its own field). */
export const UMA_ADDRESS_SCHEMES = {
  transactionSource: umaAddressScheme('transaction-source-uma-address'),
  transactionDestination: umaAddressScheme('transaction-destination-uma-address'),
  quoteDestination: umaAddressScheme('quote-destination-uma-address'),
  lookupReceiver: umaAddressScheme('lookup-receiver-uma-address'),
  lookupSender: umaAddressScheme('lookup-sender-uma-address'),
} satisfies Record<string, SealedValueScheme>;

export type UmaAddressColumn = keyof typeof UMA_ADDRESS_SCHEMES;

/** A UMA address sealed for the row `owner`; null (no cryptography) when there is none (or ''). */
export function sealUmaAddress(
  keyring: MasterKeyring,
  column: UmaAddressColumn,
  owner: string,
  address: string | undefined,
): string | null {
  return address ? sealValue(keyring, UMA_ADDRESS_SCHEMES[column], owner, address) : null;
}

/** A row's UMA address: the sealed column opened when set, else the plaintext (rows written before sealing; absent when null or ''). */
export function openUmaAddress(
  keyring: MasterKeyring,
  column: UmaAddressColumn,
  owner: string,
  sealed: string | null | undefined,
  plain: string | null | undefined,
): string | undefined {
  if (sealed) return openValue(keyring, UMA_ADDRESS_SCHEMES[column], owner, sealed);
  return plain || undefined;
}

/** Labels of the blind indexes of a transaction's UMA addresses (one per column: an index reveals equal addresses in one column only). */
export const TRANSACTION_UMA_ADDRESS_INDEXES = {
  source: 'payments:transaction-source-uma-address:v1',
  destination: 'payments:transaction-destination-uma-address:v1',
} as const;

export type TransactionSide = keyof typeof TRANSACTION_UMA_ADDRESS_INDEXES;

/** The columns of a transaction's UMA addresses, as the row mapper writes them. */
export interface TransactionUmaAddressColumns {
  /** Null: only rows written before sealing hold the address itself. */
  source_uma_address: string | null;
  sealed_source_uma_address: string | null;
  /** The blind index under the current key (`bi1.<keyId>.<hex>`), for GET /transactions' filters. */
  source_uma_address_index: string | null;
  destination_uma_address: string | null;
  sealed_destination_uma_address: string | null;
  destination_uma_address_index: string | null;
}

/**
 * How a transaction's UMA addresses are written: each sealed (bound to the transaction id) with
 * its blind index under the current key, the plaintext column null; an endpoint without one (most
 * payments) → all three null, no cryptography.
 */
export function sealTransactionUmaAddresses(
  keyring: MasterKeyring,
  transactionId: string,
  source: string | undefined,
  destination: string | undefined,
): TransactionUmaAddressColumns {
  const index = (side: TransactionSide, address: string | undefined) =>
    address ? blindIndex(keyring, TRANSACTION_UMA_ADDRESS_INDEXES[side], address) : null;
  return {
    source_uma_address: null,
    sealed_source_uma_address: sealUmaAddress(keyring, 'transactionSource', transactionId, source),
    source_uma_address_index: index('source', source),
    destination_uma_address: null,
    sealed_destination_uma_address: sealUmaAddress(keyring, 'transactionDestination', transactionId, destination),
    destination_uma_address_index: index('destination', destination),
  };
}

/**
 * The stored blind indexes that mean `address` on a transaction's `side`: under the current key
 * first, then under each retired key (rows indexed before a rotation, until rewrap moves them).
 * Rows written before sealing hold the address itself in the plaintext column: look for it there too.
 */
export function transactionUmaAddressIndexes(keyring: MasterKeyring, side: TransactionSide, address: string): string[] {
  return blindIndexes(keyring, TRANSACTION_UMA_ADDRESS_INDEXES[side], address);
}
