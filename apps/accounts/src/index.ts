export { accountsService, defineAccountsService, type AccountsConfig } from './service.js';
export { composeAccounts, type AccountsAdapters, type AccountsGraph } from './compose.js';
