import { keyringFromConfig, rewrapRows, sealedColumnJob, type CommandDeps, type SealedColumn } from '@sluice/runtime';
import { ACCOUNTS_KEYRING, EXTERNAL_ACCOUNT_SCHEME, dedupeKeys, type SealedAccountData } from './sealing.js';

/**
 * External accounts still to do: sealed under another master key than the current one (their
 * data key is rewrapped) or written before sealing (their plaintext columns sealed together, as
 * `sealAccountData` seals them, with the plaintext dedupe key, and cleared); either way the dedupe
 * key's blind index is recomputed under the current key. Deleted accounts too.
 */
const EXTERNAL_ACCOUNTS: SealedColumn = {
  name: 'externalAccounts',
  table: 'external_accounts',
  id: 'id',
  plain: `jsonb_build_object('accountInfo', account_info, 'primaryIdentifier', coalesce(primary_identifier, ''),
    'verifiedFullName', NULLIF(verified_full_name, ''), 'dedupe', dedupe_key)`,
  sealed: 'sealed_data',
  scheme: EXTERNAL_ACCOUNT_SCHEME,
  plainIs: 'fields',
  plainPending: 'sealed_data IS NULL',
  cleared: 'NULL',
  clears: ['account_info', 'primary_identifier', 'verified_full_name'],
  derived: (data, keyring) => ({
    dedupe_key: dedupeKeys(keyring, (JSON.parse(data) as SealedAccountData).dedupe)[0],
  }),
};

/** Rows per transaction of `rewrap`. */
export const REWRAP_BATCH = 500;

/**
 * `main.ts rewrap`: moves every external account to the current master key
 * (ACCOUNT_DATA_MASTER_KEY) and seals the rows written before sealing. Once it reports no
 * failure, the retired keys (ACCOUNT_DATA_MASTER_KEYS_RETIRED) can be removed.
 */
export function rewrapAccounts({ orm, config, logger }: CommandDeps<object>): Promise<Record<string, number>> {
  return rewrapRows(orm, [sealedColumnJob(keyringFromConfig(config, ACCOUNTS_KEYRING), EXTERNAL_ACCOUNTS)], {
    batch: REWRAP_BATCH,
    logger,
  });
}
