export {
  paymentsService,
  createPaymentsService,
  transfersOf,
  schedulerOf,
  type PaymentsAdapters,
} from './service.js';
export type {
  AccountsPort,
  CustomerDirectory,
  Ledger,
  ExternalAccountInfo,
  InternalAccountInfo,
} from './app/ports.js';
export type { PaymentRail } from './domain/payment-rail.js';
