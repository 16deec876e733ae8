import { rewrapValue, type MasterKeyring } from '@sluice/crypto';
import { keyringFromConfig, rewrapRows, type CommandDeps, type RewrapJob } from '@sluice/runtime';
import type { ExternalAccountInfo } from '../domain/external-account.js';
import {
  ACCOUNTS_KEYRING,
  EXTERNAL_ACCOUNT_SCHEME,
  dedupeKeys,
  openAccountData,
  sealAccountData,
} from './sealing.js';

interface Row {
  id: string;
  sealed_data: string | null;
  account_info: ExternalAccountInfo | null;
  primary_identifier: string | null;
  verified_full_name: string | null;
  dedupe_key: string;
}

/**
 * External accounts still to do: sealed under another master key than the current one (their
 * data key is rewrapped and their dedupe key's blind index recomputed under the current key), or
 * written before sealing (sealed now, their plaintext columns cleared). Deleted accounts too.
 */
function externalAccountsJob(keyring: MasterKeyring): RewrapJob<Row> {
  return {
    name: 'externalAccounts',
    next: (em, afterId, limit) =>
      em.execute<Row[]>(
        `SELECT id, sealed_data, account_info, primary_identifier, verified_full_name, dedupe_key FROM external_accounts
         WHERE id > ? AND (sealed_data IS NULL OR split_part(sealed_data, '.', 2) <> ?)
         ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
        [afterId, keyring.current.id, limit],
      ),
    idOf: (r) => r.id,
    async apply(em, r) {
      let sealed: string;
      let dedupe: string;
      if (r.sealed_data) {
        sealed = rewrapValue(keyring, EXTERNAL_ACCOUNT_SCHEME, r.id, r.sealed_data);
        dedupe = openAccountData(keyring, r.id, sealed).dedupe;
      } else {
        dedupe = r.dedupe_key; // written before sealing: the plaintext dedupe key
        sealed = sealAccountData(keyring, r.id, {
          accountInfo: r.account_info!,
          primaryIdentifier: r.primary_identifier ?? '',
          ...(r.verified_full_name ? { verifiedFullName: r.verified_full_name } : {}),
          dedupe,
        });
      }
      await em.execute(
        `UPDATE external_accounts SET sealed_data = ?, dedupe_key = ?, account_info = NULL, primary_identifier = NULL,
           verified_full_name = NULL WHERE id = ?`,
        [sealed, dedupeKeys(keyring, dedupe)[0], r.id],
      );
      return r.sealed_data ? 'rewrapped' : 'sealed';
    },
  };
}

/** Rows per transaction of `rewrap`. */
export const REWRAP_BATCH = 500;

/**
 * `main.ts rewrap`: moves every external account to the current master key
 * (ACCOUNT_DATA_MASTER_KEY) and seals the rows written before sealing. Once it reports no
 * failure, the retired keys (ACCOUNT_DATA_MASTER_KEYS_RETIRED) can be removed.
 */
export function rewrapAccounts({ orm, config, logger }: CommandDeps<object>): Promise<Record<string, number>> {
  return rewrapRows(orm, [externalAccountsJob(keyringFromConfig(config, ACCOUNTS_KEYRING))], {
    batch: REWRAP_BATCH,
    logger,
  });
}
