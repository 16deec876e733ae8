import { blindIndexes, openValue, sealValue, type MasterKeyring, type SealedValueScheme } from '@sluice/crypto';
import type { ExternalAccountInfo } from '../domain/external-account.js';

/**
 * External accounts at rest, sealed with the envelope kit of `@sluice/crypto` under accounts'
 * master keyring: what identifies an account and its holder (the whole accountInfo: account
 * number, IBAN, routing number, CLABE, wallet address, beneficiary name and address...; the
 * primary identifier; the verified name) sealed together in `external_accounts.sealed_data`,
 * bound to the account id. Duplicates are found by `dedupe_key`, a blind index (keyed HMAC) of
 * what identifies the account. Rows written before sealing are still read, and `main.ts rewrap`
 * seals them.
 */
export const ACCOUNTS_KEYRING = {
  current: 'ACCOUNT_DATA_MASTER_KEY',
  retired: 'ACCOUNT_DATA_MASTER_KEYS_RETIRED',
  idLabel: 'sluice-account-data-master-key-id:v1',
};

export const EXTERNAL_ACCOUNT_SCHEME: SealedValueScheme = {
  prefix: 'sae1',
  context: 'sluice:accounts-external-account:v1',
  field: 'account-data',
};

/** Label of the blind index of an account's dedupe key. */
const DEDUPE_INDEX = 'accounts:external-account-dedupe:v1';

/** What is sealed of an external account; `dedupe` (the plaintext dedupe key) lets a rewrap recompute its index. */
export interface SealedAccountData {
  accountInfo: ExternalAccountInfo;
  primaryIdentifier: string;
  verifiedFullName?: string;
  dedupe: string;
}

export function sealAccountData(keyring: MasterKeyring, accountId: string, d: SealedAccountData): string {
  return sealValue(keyring, EXTERNAL_ACCOUNT_SCHEME, accountId, JSON.stringify(d));
}

export function openAccountData(keyring: MasterKeyring, accountId: string, sealed: string): SealedAccountData {
  return JSON.parse(openValue(keyring, EXTERNAL_ACCOUNT_SCHEME, accountId, sealed)) as SealedAccountData;
}

/**
 * The stored dedupe keys that mean "this account": the blind index under the current key (the
 * one to store) first, then under each retired key, then the plaintext key of rows written
 * before sealing.
 */
export function dedupeKeys(keyring: MasterKeyring, dedupe: string): string[] {
  return [...blindIndexes(keyring, DEDUPE_INDEX, dedupe), dedupe];
}
