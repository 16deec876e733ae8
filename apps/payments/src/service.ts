import { Type, grpcClientConfig, sandboxConfig } from '@sluice/config';
import { defineService, masterKeyConfig, type ServiceConfig } from '@sluice/runtime';
import { migrations } from './store/migrations.js';
import { rewrapPayments } from './store/rewrap.js';
import { PAYMENTS_KEYRING } from './store/sealing.js';
import { composePayments, type PaymentsAdapters } from './compose.js';

const config = Type.Object({
  ...sandboxConfig,
  // accounts: internal and external accounts, the ledger; identity: customers; wallet-auth: wallet signatures.
  ...grpcClientConfig('accounts'),
  ...grpcClientConfig('identity'),
  ...grpcClientConfig('wallet-auth'),
  ...masterKeyConfig(
    PAYMENTS_KEYRING,
    "receivers' names that counterparties answer to receiver lookups, the counterpartyInformation of quotes and transactions, quotes' senderCustomerInfo, incoming approvals' receiverCustomerInfo, transactions' counterpartyIdentifier (an external account's number or IBAN, a UMA address) and the UMA addresses of transactions (with their blind indexes), quotes and receiver lookups",
  ),
  JOB_POLL_MS: Type.Integer({
    default: 10_000,
    minimum: 10,
    maximum: 60_000,
    description:
      'safety poll of the job scheduler: a job scheduled now wakes it on commit (LISTEN/NOTIFY, every replica) and it sleeps until the next job is due, so this only bounds how late a lost notification is noticed (without a LISTEN connection it polls every 250 ms)',
  }),
  JOB_CONCURRENCY: Type.Integer({
    default: 5,
    minimum: 1,
    maximum: 64,
    description:
      'jobs one instance runs at once; a job that calls other services holds no database connection during its calls, one for its reads and its short completing transaction, so at most half of DATABASE_POOL_MAX (the other half stays for requests)',
  }),
  ADMISSION_MAX_JOB_LAG_MS: Type.Integer({
    default: 500,
    minimum: 0,
    maximum: 3_600_000,
    description:
      'new payments (quote executes, transfers) wait while the job scheduler is behind: its last claim took a full batch whose youngest job had been due longer than this (settlement is falling behind acceptance); 0 admits every payment at once',
  }),
  ADMISSION_MAX_WAIT_MS: Type.Integer({
    default: 2_000,
    minimum: 0,
    maximum: 60_000,
    description:
      'how long a new payment waits for the scheduler to catch up before it is refused with 503 SERVICE_UNAVAILABLE and Retry-After (nothing held or written); never more than the caller’s deadline less a second',
  }),
  JOB_LEASE_MS: Type.Integer({
    default: 60_000,
    minimum: 1_000,
    maximum: 3_600_000,
    description: 'how long a claimed job is exclusive; a crashed worker’s jobs run again after it',
  }),
  LOOKUP_TTL_SECONDS: Type.Integer({
    default: 900,
    minimum: 60,
    maximum: 86_400,
    description: 'how long a receiver lookup (lookupId) stays usable for quotes',
  }),
  QUOTE_TTL_SECONDS: Type.Integer({
    default: 120,
    minimum: 60,
    maximum: 300,
    description: 'how long a quote stays executable (expiresAt = createdAt + this)',
  }),
  INCOMING_APPROVAL_WINDOW_SECONDS: Type.Integer({
    default: 5,
    minimum: 1,
    maximum: 604_800,
    description:
      'after answering the INCOMING_PAYMENT.PENDING webhook with 202, how long the platform has to call POST /transactions/{id}/approve|reject before the payment FAILs (PAYMENT_APPROVAL_TIMED_OUT); a protocol deadline: not scaled by SANDBOX_TIME_SCALE',
  }),
  INCOMING_APPROVAL_ANSWER_TIMEOUT_SECONDS: Type.Integer({
    default: 30,
    minimum: 1,
    maximum: 604_800,
    description:
      'how long an incoming payment waits for the answer to its INCOMING_PAYMENT.PENDING webhook at all (delivery included) before it FAILs (PAYMENT_APPROVAL_TIMED_OUT); not scaled',
  }),
});

/** The validated configuration of payments. */
export type PaymentsConfig = ServiceConfig<typeof config>;

/** The payments service with some of its ports served by other adapters (tests, the benchmark's one-process baseline). */
export function definePaymentsService(adapters: PaymentsAdapters = {}) {
  return defineService({
    name: 'payments',
    schema: 'payments',
    domain: 'payments',
    config,
    migrations,
    compose: (deps) => composePayments(deps, adapters),
    commands: { rewrap: rewrapPayments },
  });
}

/**
 * The payments service: exchange rates, fees and quote amounts, receiver
 * lookups (UMA), the UMA provider directory, quotes and their payments,
 * same-currency transfers, incoming payments and every transaction, and the
 * durable scheduler that drives timed transitions.
 */
export const paymentsService = definePaymentsService();
