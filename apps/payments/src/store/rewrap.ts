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
} from './sealing.js';

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
  ...(['source', 'destination'] as const).map((side) => ({
    name: side === 'source' ? 'transactionsSourceUmaAddress' : 'transactionsDestinationUmaAddress',
    table: 'transactions',
    id: 'id',
    plain: `${side}_uma_address`,
    sealed: `sealed_${side}_uma_address`,
    scheme: UMA_ADDRESS_SCHEMES[side === 'source' ? 'transactionSource' : 'transactionDestination'],
    plainIs: 'text' as const,
    plainPending: `${side}_uma_address <> ''`,
    cleared: 'NULL',
    blindIndex: { column: `${side}_uma_address_index`, label: TRANSACTION_UMA_ADDRESS_INDEXES[side] },
  })),
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
  ...(['receiver', 'sender'] as const).map((who) => ({
    name: who === 'receiver' ? 'receiverLookupsReceiverUmaAddress' : 'receiverLookupsSenderUmaAddress',
    table: 'receiver_lookups',
    id: 'id',
    plain: `${who}_uma_address`,
    sealed: `sealed_${who}_uma_address`,
    scheme: UMA_ADDRESS_SCHEMES[who === 'receiver' ? 'lookupReceiver' : 'lookupSender'],
    plainIs: 'text' as const,
    plainPending: `${who}_uma_address <> ''`,
    cleared: 'NULL',
  })),
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
