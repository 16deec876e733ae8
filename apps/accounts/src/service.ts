import { Type, grpcClientConfig } from '@sluice/config';
import { defineService, masterKeyConfig, type ServiceConfig } from '@sluice/runtime';
import { migrations } from './store/migrations.js';
import { composeAccounts, type AccountsAdapters } from './compose.js';
import { ACCOUNTS_KEYRING } from './store/sealing.js';
import { rewrapAccounts } from './store/rewrap.js';

const config = Type.Object({
  ...grpcClientConfig('identity'),
  LEDGER_RECONCILE_INTERVAL_SECONDS: Type.Integer({
    default: 300,
    minimum: 0,
    maximum: 86_400,
    description:
      'how often every platform ledger is reconciled from its journal (one replica at a time, by advisory lock; findings go to ledger_reconcile_checks_total and the error log); 0 turns the schedule off',
  }),
  ...masterKeyConfig(ACCOUNTS_KEYRING, "external accounts' identifying data (account numbers, IBANs, beneficiaries)"),
});

/** The validated configuration of accounts. */
export type AccountsConfig = ServiceConfig<typeof config>;

/**
 * The accounts service (with some adapters replaced: tests, the benchmark's baseline): internal accounts (per customer and per platform, one per
 * currency), the double-entry ledger behind their balances, sandbox funding, and
 * INTERNAL_ACCOUNT.BALANCE_UPDATED events. Consumes identity events to provision
 * accounts as a backstop to the synchronous Ensure* calls.
 */
export function defineAccountsService(adapters: AccountsAdapters = {}) {
  return defineService({
    name: 'accounts',
    schema: 'accounts',
    domain: 'accounts',
    config,
    migrations,
    compose: (deps) => composeAccounts(deps, adapters),
    commands: { rewrap: rewrapAccounts },
  });
}

/** The accounts service as deployed. */
export const accountsService = defineAccountsService();
