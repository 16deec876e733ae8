import { loadMasterKeyring, type MasterKeyring } from '@sluice/crypto';
import { PAYMENTS_KEYRING } from '../../src/store/sealing.js';

/**
 * What payments' `rewrap` reports when it finds nothing to do: every job of
 * apps/payments/src/store/rewrap.ts with no failure, nothing sealed or rewrapped.
 */
export const REWRAP_NOTHING_LEFT: Readonly<Record<string, number>> = Object.freeze({
  'receiverLookups.failed': 0,
  'quotes.failed': 0,
  'transactions.failed': 0,
  'quotesSenderCustomerInfo.failed': 0,
  'incomingApprovals.failed': 0,
  'transactionsCounterpartyIdentifier.failed': 0,
});

/** Payments' keyring of one master key (what a process configured with it alone opens). */
export const keyringOf = (key: string): MasterKeyring => loadMasterKeyring(key, undefined, PAYMENTS_KEYRING);
