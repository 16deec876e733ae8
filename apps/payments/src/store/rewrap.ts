import type { MasterKeyring } from '@sluice/crypto';
import { keyringFromConfig, rewrapRows, sealedColumnJob, type CommandDeps, type SealedColumn } from '@sluice/runtime';
import {
  COUNTERPARTY_IDENTIFIER_SCHEME,
  COUNTERPARTY_INFORMATION_SCHEME,
  COUNTERPARTY_NAME_SCHEME,
  PAYMENTS_KEYRING,
  RECEIVER_CUSTOMER_INFO_SCHEME,
  SENDER_CUSTOMER_INFO_SCHEME,
  TRANSACTION_UMA_ADDRESS_INDEXES,
  UMA_ADDRESS_SCHEMES,
  type TransactionSide,
  type UmaAddressColumn,
} from './sealing.js';

/**
 * A UMA address column `<column>` sealed in `sealed_<column>` (the address as it is; '' reads as
 * none), and for a transaction's `side` its blind index in `<column>_index`.
 */
function umaAddressColumn(
  name: string,
  table: string,
  column: string,
  scheme: UmaAddressColumn,
  side?: TransactionSide,
): SealedColumn {
  return {
    name,
    table,
    id: 'id',
    plain: column,
    sealed: `sealed_${column}`,
    scheme: UMA_ADDRESS_SCHEMES[scheme],
    plainIs: 'text',
    plainPending: `${column} <> ''`,
    cleared: 'NULL',
    ...(side ? { blindIndex: { column: `${column}_index`, label: TRANSACTION_UMA_ADDRESS_INDEXES[side] } } : {}),
  };
}

/**
 * Payments' sealed columns (store/sealing.ts), each its own rewrap job and counts: a row may have
 * one value to seal and another to rewrap. The text sealed is what each row mapper seals: the
 * name, the identifier and the UMA addresses as they are, the maps as JSON; an empty map (`{}`) or a
 * missing value (null, or a text of '', which reads as none) has nothing to seal and is never selected.
 */
export const SEALED_COLUMNS: SealedColumn[] = [
  {
    name: 'receiverLookups',
    table: 'receiver_lookups',
    id: 'id',
    plain: 'counterparty_name',
    sealed: 'sealed_counterparty_name',
    scheme: COUNTERPARTY_NAME_SCHEME,
    plainIs: 'text',
    plainPending: 'counterparty_name IS NOT NULL',
    cleared: 'NULL',
  },
  ...(['quotes', 'transactions'] as const).map((table) => ({
    name: table,
    table,
    id: 'id',
    plain: 'counterparty_information',
    sealed: 'sealed_counterparty_information',
    scheme: COUNTERPARTY_INFORMATION_SCHEME,
    plainIs: 'json' as const,
    plainPending: `counterparty_information <> '{}'::jsonb`,
    cleared: `'{}'::jsonb`,
  })),
  {
    name: 'quotesSenderCustomerInfo',
    table: 'quotes',
    id: 'id',
    plain: 'sender_customer_info',
    sealed: 'sealed_sender_customer_info',
    scheme: SENDER_CUSTOMER_INFO_SCHEME,
    plainIs: 'json',
    plainPending: `sender_customer_info <> '{}'::jsonb`,
    cleared: `'{}'::jsonb`,
  },
  {
    name: 'incomingApprovals',
    table: 'incoming_approvals',
    id: 'transaction_id',
    plain: 'receiver_customer_info',
    sealed: 'sealed_receiver_customer_info',
    scheme: RECEIVER_CUSTOMER_INFO_SCHEME,
    plainIs: 'json',
    plainPending: `receiver_customer_info <> '{}'::jsonb`,
    cleared: 'NULL',
  },
  {
    name: 'transactionsCounterpartyIdentifier',
    table: 'transactions',
    id: 'id',
    plain: 'counterparty_identifier',
    sealed: 'sealed_counterparty_identifier',
    scheme: COUNTERPARTY_IDENTIFIER_SCHEME,
    plainIs: 'text',
    plainPending: `counterparty_identifier <> ''`,
    cleared: 'NULL',
  },
  // UMA addresses: a transaction's two with their blind index (GET /transactions' filters), moved
  // to the current key with the value; a quote's out of its destination jsonb; a lookup's two.
  umaAddressColumn('transactionsSourceUmaAddress', 'transactions', 'source_uma_address', 'transactionSource', 'source'),
  umaAddressColumn(
    'transactionsDestinationUmaAddress',
    'transactions',
    'destination_uma_address',
    'transactionDestination',
    'destination',
  ),
  {
    name: 'quotesDestinationUmaAddress',
    table: 'quotes',
    id: 'id',
    plain: `destination->>'umaAddress'`,
    plainColumn: 'destination',
    sealed: 'sealed_destination_uma_address',
    scheme: UMA_ADDRESS_SCHEMES.quoteDestination,
    plainIs: 'text',
    plainPending: `destination->>'umaAddress' <> ''`,
    cleared: `destination - 'umaAddress'`,
  },
  umaAddressColumn('receiverLookupsReceiverUmaAddress', 'receiver_lookups', 'receiver_uma_address', 'lookupReceiver'),
  umaAddressColumn('receiverLookupsSenderUmaAddress', 'receiver_lookups', 'sender_uma_address', 'lookupSender'),
];

/** Rows per transaction of `rewrap`. */
export const REWRAP_BATCH = 500;

/**
 * `main.ts rewrap`: moves every sealed counterparty name (receiver lookups), counterparty
 * information (quotes, transactions), sender customer info (quotes), receiver customer info
 * (incoming approvals), counterparty identifier (transactions) and UMA address (transactions with
 * their blind indexes, quotes, receiver lookups) to the current master key
 * (PAYMENTS_DATA_MASTER_KEY) and seals those written before sealing. Once it reports no failure,
 * the retired keys (PAYMENTS_DATA_MASTER_KEYS_RETIRED) can be removed.
 */
export function rewrapPayments({ orm, config, logger }: CommandDeps<object>): Promise<Record<string, number>> {
  const keyring: MasterKeyring = keyringFromConfig(config, PAYMENTS_KEYRING);
  return rewrapRows(
    orm,
    SEALED_COLUMNS.map((c) => sealedColumnJob(keyring, c)),
    { batch: REWRAP_BATCH, logger },
  );
}
