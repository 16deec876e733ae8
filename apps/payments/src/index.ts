export { paymentsService, definePaymentsService, type PaymentsConfig } from './service.js';
export { composePayments, type PaymentsAdapters, type PaymentsGraph } from './compose.js';
export type {
  AccountsPort,
  ApprovalPolicies,
  CustomerDirectory,
  CustomerRef,
  ExternalAccountInfo,
  InternalAccountInfo,
  Ledger,
  PayoutRail,
  SigningChallenge,
  TransferRail,
  WalletSignatures,
} from './app/ports.js';
