import { rewrapValue, type MasterKeyring } from '@sluice/crypto';
import { keyringFromConfig, rewrapRows, type CommandDeps, type RewrapJob } from '@sluice/runtime';
import { COUNTERPARTY_NAME_SCHEME, PAYMENTS_KEYRING, sealCounterpartyName } from './sealing.js';

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

/** Rows per transaction of `rewrap`. */
export const REWRAP_BATCH = 500;

/**
 * `main.ts rewrap`: moves every sealed counterparty name to the current master key
 * (PAYMENTS_DATA_MASTER_KEY) and seals the names written before sealing. Once it reports no
 * failure, the retired keys (PAYMENTS_DATA_MASTER_KEYS_RETIRED) can be removed.
 */
export function rewrapPayments({ orm, config, logger }: CommandDeps<object>): Promise<Record<string, number>> {
  return rewrapRows(orm, [receiverLookupsJob(keyringFromConfig(config, PAYMENTS_KEYRING))], {
    batch: REWRAP_BATCH,
    logger,
  });
}
