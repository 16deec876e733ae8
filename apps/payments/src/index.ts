export { paymentsService, definePaymentsService, type PaymentsConfig } from './service.js';
export { composePayments, type PaymentsAdapters, type PaymentsGraph } from './compose.js';
export type {
  AccountsPort,
  CustomerDirectory,
  Ledger,
  ExternalAccountInfo,
  InternalAccountInfo,
} from './app/ports.js';
export type { PaymentRail } from './domain/payment-rail.js';
