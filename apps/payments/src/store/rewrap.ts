import { rewrapValue, type MasterKeyring } from '@sluice/crypto';
import { keyringFromConfig, rewrapRows, type CommandDeps, type RewrapJob } from '@sluice/runtime';
import {
  COUNTERPARTY_IDENTIFIER_SCHEME,
  COUNTERPARTY_INFORMATION_SCHEME,
  COUNTERPARTY_NAME_SCHEME,
  PAYMENTS_KEYRING,
  RECEIVER_CUSTOMER_INFO_SCHEME,
  SENDER_CUSTOMER_INFO_SCHEME,
  sealCounterpartyIdentifier,
  sealCounterpartyInformation,
  sealCounterpartyName,
  sealReceiverCustomerInfo,
  sealSenderCustomerInfo,
} from './sealing.js';
import { fromJson } from './sql.js';

interface Row {
  id: string;
  sealed_counterparty_name: string | null;
  counterparty_name: string | null;
}

/**
 * Receiver lookups with a counterparty name still to do: sealed under another master key than the
 * current one (rewrapped), or written before sealing (sealed now, the plaintext column cleared).
 */
function receiverLookupsJob(keyring: MasterKeyring): RewrapJob<Row> {
  return {
    name: 'receiverLookups',
    next: (em, afterId, limit) =>
      em.execute<Row[]>(
        `SELECT id, sealed_counterparty_name, counterparty_name FROM receiver_lookups
         WHERE id > ? AND (counterparty_name IS NOT NULL OR split_part(sealed_counterparty_name, '.', 2) <> ?)
         ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
        [afterId, keyring.current.id, limit],
      ),
    idOf: (r) => r.id,
    async apply(em, r) {
      const sealed = r.sealed_counterparty_name
        ? rewrapValue(keyring, COUNTERPARTY_NAME_SCHEME, r.id, r.sealed_counterparty_name)
        : sealCounterpartyName(keyring, r.id, r.counterparty_name!);
      await em.execute(
        `UPDATE receiver_lookups SET sealed_counterparty_name = ?, counterparty_name = NULL WHERE id = ?`,
        [sealed, r.id],
      );
      return r.sealed_counterparty_name ? 'rewrapped' : 'sealed';
    },
  };
}

interface InformationRow {
  id: string;
  sealed_counterparty_information: string | null;
  counterparty_information: Record<string, string> | string;
}

/**
 * Quotes or transactions (`table`) with a counterpartyInformation still to do: sealed under another
 * master key than the current one (rewrapped; a plaintext map beside it, which the mapper never
 * writes, is cleared since the sealed one is what is read), or a non-empty map written before
 * sealing (sealed now, the plaintext column set to `{}`). Rows with an empty map and nothing
 * sealed are never selected: there is nothing to seal.
 */
function counterpartyInformationJob(keyring: MasterKeyring, table: 'quotes' | 'transactions'): RewrapJob<InformationRow> {
  return {
    name: table,
    next: (em, afterId, limit) =>
      em.execute<InformationRow[]>(
        `SELECT id, sealed_counterparty_information, counterparty_information FROM ${table}
         WHERE id > ? AND (counterparty_information <> '{}'::jsonb
           OR split_part(sealed_counterparty_information, '.', 2) <> ?)
         ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
        [afterId, keyring.current.id, limit],
      ),
    idOf: (r) => r.id,
    async apply(em, r) {
      const sealed = r.sealed_counterparty_information
        ? rewrapValue(keyring, COUNTERPARTY_INFORMATION_SCHEME, r.id, r.sealed_counterparty_information)
        : sealCounterpartyInformation(keyring, r.id, fromJson(r.counterparty_information))
            .sealed_counterparty_information;
      await em.execute(
        `UPDATE ${table} SET sealed_counterparty_information = ?, counterparty_information = '{}'::jsonb WHERE id = ?`,
        [sealed, r.id],
      );
      return r.sealed_counterparty_information ? 'rewrapped' : 'sealed';
    },
  };
}

interface SenderInfoRow {
  id: string;
  sealed_sender_customer_info: string | null;
  sender_customer_info: Record<string, unknown> | string;
}

/**
 * Quotes with a senderCustomerInfo still to do: sealed under another master key than the current
 * one (rewrapped; a plaintext map beside it, which the mapper never writes, is cleared), or a
 * non-empty map written before sealing (sealed now, `sender_customer_info` set to `{}`). Quotes
 * with an empty map and nothing sealed are never selected. Counted apart from the quotes' job
 * (`quotesSenderCustomerInfo.*`): a row may have one value to seal and the other to rewrap.
 */
function senderCustomerInfoJob(keyring: MasterKeyring): RewrapJob<SenderInfoRow> {
  return {
    name: 'quotesSenderCustomerInfo',
    next: (em, afterId, limit) =>
      em.execute<SenderInfoRow[]>(
        `SELECT id, sealed_sender_customer_info, sender_customer_info FROM quotes
         WHERE id > ? AND (sender_customer_info <> '{}'::jsonb
           OR split_part(sealed_sender_customer_info, '.', 2) <> ?)
         ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
        [afterId, keyring.current.id, limit],
      ),
    idOf: (r) => r.id,
    async apply(em, r) {
      const sealed = r.sealed_sender_customer_info
        ? rewrapValue(keyring, SENDER_CUSTOMER_INFO_SCHEME, r.id, r.sealed_sender_customer_info)
        : sealSenderCustomerInfo(keyring, r.id, fromJson(r.sender_customer_info)).sealed_sender_customer_info;
      await em.execute(
        `UPDATE quotes SET sealed_sender_customer_info = ?, sender_customer_info = '{}'::jsonb WHERE id = ?`,
        [sealed, r.id],
      );
      return r.sealed_sender_customer_info ? 'rewrapped' : 'sealed';
    },
  };
}

interface ReceiverInfoRow {
  transaction_id: string;
  sealed_receiver_customer_info: string | null;
  receiver_customer_info: Record<string, unknown> | string | null;
}

/**
 * Incoming approvals with a receiverCustomerInfo still to do: sealed under another master key than
 * the current one (rewrapped, a plaintext map beside it cleared), or a non-empty map written before
 * sealing (sealed now, `receiver_customer_info` set to null). Approvals without a map, or with an
 * empty one, are never selected.
 */
function receiverCustomerInfoJob(keyring: MasterKeyring): RewrapJob<ReceiverInfoRow> {
  return {
    name: 'incomingApprovals',
    next: (em, afterId, limit) =>
      em.execute<ReceiverInfoRow[]>(
        `SELECT transaction_id, sealed_receiver_customer_info, receiver_customer_info FROM incoming_approvals
         WHERE transaction_id > ? AND (receiver_customer_info <> '{}'::jsonb
           OR split_part(sealed_receiver_customer_info, '.', 2) <> ?)
         ORDER BY transaction_id LIMIT ? FOR UPDATE SKIP LOCKED`,
        [afterId, keyring.current.id, limit],
      ),
    idOf: (r) => r.transaction_id,
    async apply(em, r) {
      const id = r.transaction_id;
      const sealed = r.sealed_receiver_customer_info
        ? rewrapValue(keyring, RECEIVER_CUSTOMER_INFO_SCHEME, id, r.sealed_receiver_customer_info)
        : sealReceiverCustomerInfo(keyring, id, fromJson(r.receiver_customer_info!)).sealed_receiver_customer_info;
      await em.execute(
        `UPDATE incoming_approvals SET sealed_receiver_customer_info = ?, receiver_customer_info = NULL
         WHERE transaction_id = ?`,
        [sealed, id],
      );
      return r.sealed_receiver_customer_info ? 'rewrapped' : 'sealed';
    },
  };
}

interface IdentifierRow {
  id: string;
  sealed_counterparty_identifier: string | null;
  counterparty_identifier: string | null;
}

/**
 * Transactions with a counterpartyIdentifier still to do: sealed under another master key than the
 * current one (rewrapped; a plaintext value beside it, which the mapper never writes, is cleared),
 * or a value written before sealing (sealed now, `counterparty_identifier` set to null). Rows
 * without one (null, or '', which reads as none) are never selected. Counted apart from the
 * transactions' counterpartyInformation job (`transactionsCounterpartyIdentifier.*`): a row may have
 * one value to seal and the other to rewrap.
 */
function counterpartyIdentifierJob(keyring: MasterKeyring): RewrapJob<IdentifierRow> {
  return {
    name: 'transactionsCounterpartyIdentifier',
    next: (em, afterId, limit) =>
      em.execute<IdentifierRow[]>(
        `SELECT id, sealed_counterparty_identifier, counterparty_identifier FROM transactions
         WHERE id > ? AND (counterparty_identifier <> ''
           OR split_part(sealed_counterparty_identifier, '.', 2) <> ?)
         ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
        [afterId, keyring.current.id, limit],
      ),
    idOf: (r) => r.id,
    async apply(em, r) {
      const sealed = r.sealed_counterparty_identifier
        ? rewrapValue(keyring, COUNTERPARTY_IDENTIFIER_SCHEME, r.id, r.sealed_counterparty_identifier)
        : sealCounterpartyIdentifier(keyring, r.id, r.counterparty_identifier!).sealed_counterparty_identifier;
      await em.execute(
        `UPDATE transactions SET sealed_counterparty_identifier = ?, counterparty_identifier = NULL WHERE id = ?`,
        [sealed, r.id],
      );
      return r.sealed_counterparty_identifier ? 'rewrapped' : 'sealed';
    },
  };
}

/** Rows per transaction of `rewrap`. */
export const REWRAP_BATCH = 500;

/**
 * `main.ts rewrap`: moves every sealed counterparty name (receiver lookups), counterparty
 * information (quotes, transactions), sender customer info (quotes), receiver customer info
 * (incoming approvals) and counterparty identifier (transactions) to the current master key (PAYMENTS_DATA_MASTER_KEY) and seals those
 * written before sealing. Once it reports no failure, the retired keys
 * (PAYMENTS_DATA_MASTER_KEYS_RETIRED) can be removed.
 */
export function rewrapPayments({ orm, config, logger }: CommandDeps<object>): Promise<Record<string, number>> {
  const keyring = keyringFromConfig(config, PAYMENTS_KEYRING);
  return rewrapRows(
    orm,
    [
      receiverLookupsJob(keyring),
      counterpartyInformationJob(keyring, 'quotes'),
      counterpartyInformationJob(keyring, 'transactions'),
      senderCustomerInfoJob(keyring),
      receiverCustomerInfoJob(keyring),
      counterpartyIdentifierJob(keyring),
    ],
    { batch: REWRAP_BATCH, logger },
  );
}
