import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { AgentAction } from '../resources/agent.js';
import { InternalAccount } from '../resources/internal-account.js';
import { Transaction } from '../resources/transaction.js';
import { Customer } from '../resources/customer.js';
import { UmaInvitation } from '../resources/invitation.js';
import { BulkCustomerImportJob } from '../resources/bulk-import.js';
import { Verification } from '../resources/verification.js';
import { stringEnum } from '../schema.js';

/**
 * The catalogue of events between services: one typed contract per event type,
 * imported by its producer (the outbox checks the data against the type) and by
 * every consumer (which parses against the schema and dead-letters what does not
 * match). An event whose contract is a webhook carries, as `data`, the public
 * resource exactly as the REST API returns it (the same schema and mapper), and
 * the webhook-dispatcher delivers it to the platform.
 */

/** Event domains: the service that owns a type publishes it on its domain's stream. */
export const EVENT_DOMAINS = [
  'identity',
  'accounts',
  'payments',
  'wallet_auth',
  'compliance',
  'agents',
  'webhooks',
] as const;
export type EventDomain = (typeof EVENT_DOMAINS)[number];

/** One event type: its name (`RESOURCE.VERB`), owner, payload schema and whether it is a public webhook. */
export interface EventContract<T extends string = string, S extends TSchema = TSchema> {
  type: T;
  owner: EventDomain;
  data: S;
  /** A public webhook type: `data` is the public resource and the dispatcher delivers it. */
  webhook: boolean;
  /**
   * A request–response webhook: the platform's answer matters to the owner. The dispatcher makes
   * one attempt (no retries: the answer decides) and relays the answer back to the owner as
   * INCOMING_PAYMENT.APPROVAL_ANSWERED.
   */
  answered?: boolean;
  description: string;
}

/** The `data` type of an event contract. */
export type EventData<C extends EventContract> = Static<C['data']>;

function event<T extends string, S extends TSchema>(
  type: T,
  o: { owner: EventDomain; data: S; webhook?: boolean; answered?: boolean; description: string },
): EventContract<T, S> {
  return {
    type,
    owner: o.owner,
    data: o.data,
    webhook: o.webhook ?? false,
    answered: o.answered ?? false,
    description: o.description,
  };
}

const Environment = stringEnum(['SANDBOX', 'PRODUCTION'] as const);

/**
 * What identity says of a customer change. `environment` and
 * `embeddedWalletCurrencies` (the platform's, as they were when the change was
 * made) let a consumer provision the customer's accounts without asking identity;
 * events written before they were added lack them.
 */
const CustomerChange = Type.Object({
  customerId: Type.String(),
  customerType: Type.String(),
  platformCustomerId: Type.String(),
  currencies: Type.Array(Type.String()),
  umaAddress: Type.String(),
  environment: Type.Optional(Environment),
  embeddedWalletCurrencies: Type.Optional(Type.Array(Type.String())),
});

const ExternalAccountChange = Type.Object({
  externalAccountId: Type.String(),
  /** Absent for platform-owned accounts. */
  customerId: Type.Optional(Type.String()),
  currency: Type.String(),
  accountType: Type.String(),
  beneficiaryVerificationStatus: Type.String(),
  platformAccountId: Type.Optional(Type.String()),
});

/**
 * The platform's answer to a request–response webhook, as the dispatcher saw it: `RESPONDED` with
 * the HTTP status and the (capped) body, `TIMED_OUT` (no answer within the attempt's timeout),
 * `NO_RESPONSE` (refused target, network error) or `NO_ENDPOINT` (the platform has none). The owner
 * judges the answer; the dispatcher only relays it.
 */
const ApprovalAnswer = Type.Object({
  transactionId: Type.String(),
  webhookId: Type.String(),
  outcome: stringEnum(['RESPONDED', 'TIMED_OUT', 'NO_RESPONSE', 'NO_ENDPOINT'] as const),
  responseStatus: Type.Optional(Type.Integer()),
  responseBody: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  answeredAt: Type.String(),
});

const outgoing = <T extends string>(type: T, description: string) =>
  event(type, { owner: 'payments', data: Transaction, webhook: true, description });
const incoming = <T extends string>(type: T, description: string) =>
  event(type, { owner: 'payments', data: Transaction, webhook: true, description });

const verification = <T extends string>(type: T, description: string) =>
  event(type, { owner: 'compliance', data: Verification, webhook: true, description });
const customerStatus = <T extends string>(type: T, description: string) =>
  event(type, { owner: 'identity', data: Customer, webhook: true, description });

/** Every event type of the system, by a constant name. */
export const EVENTS = {
  // identity
  PLATFORM_CREATED: event('PLATFORM.CREATED', {
    owner: 'identity',
    data: Type.Object({ name: Type.String(), environment: Environment }),
    description: 'A platform was created (bootstrap).',
  }),
  PLATFORM_CONFIG_UPDATED: event('PLATFORM_CONFIG.UPDATED', {
    owner: 'identity',
    data: Type.Object({
      supportedCurrencies: Type.Array(Type.String()),
      embeddedWalletCurrencies: Type.Array(Type.String()),
      umaDomain: Type.Union([Type.String(), Type.Null()]),
      webhookEndpoint: Type.Union([Type.String(), Type.Null()]),
      /** Where hosted KYC links point (absent in events written before it was added). */
      kycLinkUrlTemplate: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      webhookSigningSecretRotated: Type.Boolean(),
      /** The platform's environment (absent in events written before it was added). */
      environment: Type.Optional(Environment),
      /** The dispatcher disabled the endpoint (410 Gone, or failing too long) and it was not set anew since. */
      webhookEndpointDisabled: Type.Optional(Type.Boolean()),
    }),
    description: 'A platform’s configuration changed (never carries secrets).',
  }),
  TOKEN_CREATED: event('TOKEN.CREATED', {
    owner: 'identity',
    data: Type.Object({
      tokenId: Type.String(),
      name: Type.String(),
      permissions: Type.Array(Type.String()),
    }),
    description: 'An API token was created.',
  }),
  TOKEN_DELETED: event('TOKEN.DELETED', {
    owner: 'identity',
    data: Type.Object({ tokenId: Type.String() }),
    description: 'An API token no longer authenticates; credential caches drop it at once.',
  }),
  CUSTOMER_CREATED: event('CUSTOMER.CREATED', {
    owner: 'identity',
    data: CustomerChange,
    description: 'A customer was created.',
  }),
  CUSTOMER_UPDATED: event('CUSTOMER.UPDATED', {
    owner: 'identity',
    data: CustomerChange,
    description: 'A customer changed.',
  }),
  CUSTOMER_DELETED: event('CUSTOMER.DELETED', {
    owner: 'identity',
    data: Type.Object({ customerId: Type.String() }),
    description: 'A customer was deleted (soft).',
  }),
  CUSTOMER_KYC_APPROVED: customerStatus('CUSTOMER.KYC_APPROVED', 'An individual’s kycStatus became APPROVED; data is the customer.'),
  CUSTOMER_KYC_REJECTED: customerStatus('CUSTOMER.KYC_REJECTED', 'An individual’s kycStatus became REJECTED; data is the customer.'),
  CUSTOMER_KYC_PENDING: customerStatus('CUSTOMER.KYC_PENDING', 'An individual’s kycStatus became PENDING; data is the customer.'),
  CUSTOMER_KYB_APPROVED: customerStatus('CUSTOMER.KYB_APPROVED', 'A business’s kybStatus became APPROVED; data is the customer.'),
  CUSTOMER_KYB_REJECTED: customerStatus('CUSTOMER.KYB_REJECTED', 'A business’s kybStatus became REJECTED; data is the customer.'),
  CUSTOMER_KYB_PENDING: customerStatus('CUSTOMER.KYB_PENDING', 'A business’s kybStatus became PENDING; data is the customer.'),
  CUSTOMER_VERIFICATION_STATUS_APPLIED: event('CUSTOMER_VERIFICATION.STATUS_APPLIED', {
    owner: 'identity',
    data: Type.Object({
      customerId: Type.String(),
      verificationId: Type.String(),
      status: Type.String(),
      /** False when the customer is deleted, unknown or of another type (nothing was set). */
      applied: Type.Boolean(),
    }),
    description: 'Identity handled a CUSTOMER_VERIFICATION.STATUS_CHANGED: compliance may show the decision.',
  }),
  INVITATION_CLAIMED: event('INVITATION.CLAIMED', {
    owner: 'identity',
    data: UmaInvitation,
    webhook: true,
    description: 'An UMA invitation of the platform was claimed; data is the invitation (status CLAIMED).',
  }),
  BULK_UPLOAD_COMPLETED: event('BULK_UPLOAD.COMPLETED', {
    owner: 'identity',
    data: BulkCustomerImportJob,
    webhook: true,
    description:
      'A bulk customer import processed every row and at least one row has its customer; data is the job (failed rows in errors).',
  }),
  BULK_UPLOAD_FAILED: event('BULK_UPLOAD.FAILED', {
    owner: 'identity',
    data: BulkCustomerImportJob,
    webhook: true,
    description: 'A bulk customer import processed every row and every row failed; data is the job.',
  }),
  // compliance
  CUSTOMER_VERIFICATION_STATUS_CHANGED: event('CUSTOMER_VERIFICATION.STATUS_CHANGED', {
    owner: 'compliance',
    data: Type.Object({
      customerId: Type.String(),
      customerType: stringEnum(['INDIVIDUAL', 'BUSINESS'] as const),
      /** The kycStatus (individual) or kybStatus (business) identity is to set. */
      status: stringEnum(['PENDING', 'APPROVED', 'REJECTED'] as const),
      verificationId: Type.String(),
    }),
    description: 'A verification decided what a customer’s kycStatus/kybStatus is; identity applies it.',
  }),
  VERIFICATION_RESOLVE_ERRORS: verification('VERIFICATION.RESOLVE_ERRORS', 'A verification lists what is missing.'),
  VERIFICATION_IN_PROGRESS: verification('VERIFICATION.IN_PROGRESS', 'A complete verification was submitted to screening.'),
  VERIFICATION_PENDING_MANUAL_REVIEW: verification('VERIFICATION.PENDING_MANUAL_REVIEW', 'A verification awaits a manual review.'),
  VERIFICATION_APPROVED: verification('VERIFICATION.APPROVED', 'A verification was approved.'),
  VERIFICATION_REJECTED: verification('VERIFICATION.REJECTED', 'A verification was rejected.'),
  // accounts
  INTERNAL_ACCOUNT_BALANCE_UPDATED: event('INTERNAL_ACCOUNT.BALANCE_UPDATED', {
    owner: 'accounts',
    data: InternalAccount,
    webhook: true,
    description: 'The posted balance of an internal account changed; data is the account.',
  }),
  EXTERNAL_ACCOUNT_CREATED: event('EXTERNAL_ACCOUNT.CREATED', {
    owner: 'accounts',
    data: ExternalAccountChange,
    description: 'An external account was registered (no account numbers: consumers ask accounts for them).',
  }),
  EXTERNAL_ACCOUNT_DELETED: event('EXTERNAL_ACCOUNT.DELETED', {
    owner: 'accounts',
    data: ExternalAccountChange,
    description: 'An external account was deleted.',
  }),
  // payments
  OUTGOING_PAYMENT_PENDING: outgoing(
    'OUTGOING_PAYMENT.PENDING',
    'An outgoing payment awaits its funds or execution.',
  ),
  OUTGOING_PAYMENT_PROCESSING: outgoing(
    'OUTGOING_PAYMENT.PROCESSING',
    'An outgoing payment was sent to its rail.',
  ),
  OUTGOING_PAYMENT_COMPLETED: outgoing('OUTGOING_PAYMENT.COMPLETED', 'An outgoing payment completed.'),
  OUTGOING_PAYMENT_FAILED: outgoing('OUTGOING_PAYMENT.FAILED', 'An outgoing payment failed or was rejected.'),
  OUTGOING_PAYMENT_EXPIRED: outgoing(
    'OUTGOING_PAYMENT.EXPIRED',
    'The quote of an outgoing payment expired unexecuted.',
  ),
  OUTGOING_PAYMENT_REFUND_PENDING: outgoing(
    'OUTGOING_PAYMENT.REFUND_PENDING',
    'Money of a failed payment is on its way back.',
  ),
  OUTGOING_PAYMENT_REFUND_COMPLETED: outgoing(
    'OUTGOING_PAYMENT.REFUND_COMPLETED',
    'The refund arrived; the payment is REFUNDED.',
  ),
  OUTGOING_PAYMENT_REFUND_FAILED: outgoing(
    'OUTGOING_PAYMENT.REFUND_FAILED',
    'The refund failed; the funds wait for an operator.',
  ),
  INCOMING_PAYMENT_PENDING: event('INCOMING_PAYMENT.PENDING', {
    owner: 'payments',
    data: Transaction,
    webhook: true,
    answered: true,
    description:
      'An incoming payment awaits the platform’s approval: a request–response webhook (any 2xx but 202 approves, 403 rejects, 422 asks for more information, 202 defers to POST /transactions/{id}/approve|reject within the window).',
  }),
  INCOMING_PAYMENT_COMPLETED: incoming('INCOMING_PAYMENT.COMPLETED', 'An incoming payment was credited.'),
  INCOMING_PAYMENT_FAILED: incoming(
    'INCOMING_PAYMENT.FAILED',
    'An incoming payment failed, was rejected or expired.',
  ),
  // webhooks (the dispatcher)
  INCOMING_PAYMENT_APPROVAL_ANSWERED: event('INCOMING_PAYMENT.APPROVAL_ANSWERED', {
    owner: 'webhooks',
    data: ApprovalAnswer,
    description:
      'What the platform answered the INCOMING_PAYMENT.PENDING webhook (or that it did not): payments decides the payment from it.',
  }),
  WEBHOOK_ENDPOINT_DISABLED: event('WEBHOOK_ENDPOINT.DISABLED', {
    owner: 'webhooks',
    data: Type.Object({
      url: Type.String(),
      reason: Type.String(),
      disabledAt: Type.String(),
    }),
    description:
      'The dispatcher disabled a platform’s webhook endpoint (it answered 410 Gone, or failed every attempt for WEBHOOK_DISABLE_AFTER_HOURS): its webhooks are no longer sent until the platform sets webhookEndpoint again. Shown in the delivery log and in GET /config.',
  }),
  // agents
  AGENT_ACTION_PENDING_APPROVAL: event('AGENT_ACTION.PENDING_APPROVAL', {
    owner: 'agents',
    data: AgentAction,
    webhook: true,
    description:
      'An agent action awaits the platform’s approval; data is the AgentAction (quote or transfer details included).',
  }),
  AGENT_TOKEN_REVOKED: event('AGENT_TOKEN.REVOKED', {
    owner: 'agents',
    data: Type.Object({ agentId: Type.String() }),
    description:
      'An agent’s access token no longer authenticates (agent deleted, or a new code redeemed); caches drop it at once.',
  }),
  AGENT_UPDATED: event('AGENT.UPDATED', {
    owner: 'agents',
    data: Type.Object({ agentId: Type.String() }),
    description:
      'An agent was paused, resumed, renamed or given another policy; credential caches drop it at once.',
  }),
} as const;

/** Every contract, by its type name. */
export const EVENT_CONTRACTS: ReadonlyMap<string, EventContract> = new Map(
  Object.values(EVENTS).map((c) => [c.type, c as EventContract]),
);

/** The contract of a type name, if the catalogue has one. */
export function eventContract(type: string): EventContract | undefined {
  return EVENT_CONTRACTS.get(type);
}

/** The event types that are public webhooks (besides TEST, which the dispatcher makes itself). */
export const WEBHOOK_EVENT_TYPES: readonly string[] = [...EVENT_CONTRACTS.values()]
  .filter((c) => c.webhook)
  .map((c) => c.type);

/** The contracts a domain owns (the types its stream carries). */
export function contractsOf(owner: EventDomain): EventContract[] {
  return [...EVENT_CONTRACTS.values()].filter((c) => c.owner === owner);
}
