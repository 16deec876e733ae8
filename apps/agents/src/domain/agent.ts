import { AGENT_ACTION_STATUSES, type AgentActionStatus, type Environment } from '@sluice/core';
import type { ActionType, Reservation, Usage } from './enforcement.js';
import type { Refusal } from './errors.js';
import type { AgentPolicy } from './policy.js';

/** An agent: a narrow, revocable authority over one customer's money. */
export interface Agent {
  id: string;
  platformId: string;
  environment: Environment;
  name: string;
  customerId: string;
  platformCustomerId: string;
  isPaused: boolean;
  /** True once a device code was redeemed (it holds a token). */
  isConnected: boolean;
  policy: AgentPolicy;
  usage?: Usage;
  createdAt: Date;
  updatedAt: Date;
}

/** A device code of an agent (the code itself is shown once and stored only as a hash). */
export interface DeviceCode {
  codeHash: string;
  agentId: string;
  expiresAt: Date;
  redeemedAt?: Date;
  /** Set when a newer code replaced this unredeemed one. */
  supersededAt?: Date;
  /** The key of the request that issued it (a retry with the key answers this code's place). */
  requestKey?: string;
  createdAt: Date;
}

/**
 * The life of an action. The public status of EXECUTING is APPROVED: the payment is being
 * handed to payments (a crash here is resumed by the recovery worker, payments calls being
 * idempotent on the action).
 */
export const ACTION_STATES = ['PENDING_APPROVAL', 'EXECUTING', 'APPROVED', 'REJECTED', 'FAILED'] as const;
export type ActionState = (typeof ACTION_STATES)[number];
export const ACTION_STATUSES = AGENT_ACTION_STATUSES;
export type ActionStatus = AgentActionStatus;

export const publicStatus = (s: ActionState): ActionStatus => (s === 'EXECUTING' ? 'APPROVED' : s);

/** The states a public status filter selects. */
export const statesOf = (s: ActionStatus): ActionState[] => (s === 'APPROVED' ? ['EXECUTING', 'APPROVED'] : [s]);

/** Why an action FAILED without a payments error. */
export const APPROVAL_EXPIRED = 'APPROVAL_EXPIRED';
export const AGENT_DELETED = 'AGENT_DELETED';

export interface TransferDetails {
  amount: bigint;
  currency: string;
  sourceAccountId: string;
  destinationAccountId: string;
}

/** An agent's money-moving request, checked against its policy (reference AgentAction). */
export interface AgentAction {
  id: string;
  platformId: string;
  agentId: string;
  customerId: string;
  platformCustomerId: string;
  type: ActionType;
  state: ActionState;
  quoteId?: string;
  transfer?: TransferDetails;
  description?: string;
  /** Transfers: the caller's request key (a retry with it answers this action). */
  requestKey?: string;
  /** EXECUTE_QUOTE from an EMBEDDED_WALLET: the signature headers to execute with. */
  walletSignature?: string;
  signingRequestId?: string;
  transactionId?: string;
  rejectionReason?: string;
  failureReason?: string;
  /** AUTO: the payments refusal the submission was answered with (a retry with its key is answered the same). */
  refusal?: Refusal;
  reservation: Reservation;
  /** PENDING_APPROVAL until then (the quote's expiry for EXECUTE_QUOTE, if earlier). */
  expiresAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}
