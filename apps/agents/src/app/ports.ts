import type { Environment } from '@sluice/core';
import type { EntityManager } from '@sluice/store';
import type { Agent, AgentAction } from '../domain/agent.js';

/** identity: the platform's customers. CUSTOMER_NOT_FOUND (also another platform's) passes through. */
export interface CustomerDirectory {
  customer(platformId: string, customerId: string): Promise<{ customerId: string; platformCustomerId: string }>;
}

/** An account as agents need it (owner and currency). */
export interface AccountRef {
  id: string;
  /** Absent for the platform's own accounts. */
  customerId?: string;
  currency: string;
}

/** accounts: the customer's internal and external accounts. Their NOT_FOUND errors pass through. */
export interface AccountsPort {
  /** Ids of every internal account of the customer. */
  internalAccountIds(platformId: string, customerId: string): Promise<string[]>;
  internalAccount(platformId: string, accountId: string): Promise<AccountRef>;
  externalAccount(platformId: string, accountId: string): Promise<AccountRef>;
}

/** A quote as agents need it; `wire` is payments' message, handed back to the API untouched. */
export interface PaymentQuote {
  id: string;
  status: string;
  sourceAccountId?: string;
  customerId?: string;
  sendingCurrency: string;
  totalSendingAmount: bigint;
  expiresAt: Date;
  /** The source is an EMBEDDED_WALLET (executing needs the wallet owner's signature). */
  embeddedWallet: boolean;
  transactionId?: string;
  wire: unknown;
}

/** A transaction as agents need it; `wire` is payments' message. */
export interface PaymentTransaction {
  id: string;
  customerId: string;
  wire: unknown;
}

/** A quote request of an agent: the fields agents rules look at, and payments' request to forward. */
export interface AgentQuoteInput {
  sourceKind: string;
  sourceAccountId: string;
  immediatelyExecute: boolean;
  wire: unknown;
}

/** Who a payments call is for. */
export interface PaymentScope {
  platformId: string;
  environment: Environment;
}

/**
 * payments: quotes, their execution, same-currency transfers, transactions and exchange rates.
 * Every money call carries the agent id (recorded on the transaction) and is idempotent on the
 * action: transfers use the action id as request key, a quote executes once.
 */
export interface PaymentsPort {
  createQuote(scope: PaymentScope & { customerId: string }, req: AgentQuoteInput): Promise<PaymentQuote>;
  getQuote(platformId: string, quoteId: string): Promise<PaymentQuote>;
  executeQuote(
    scope: PaymentScope,
    p: { quoteId: string; agentId?: string; walletSignature?: string; signingRequestId?: string },
  ): Promise<{ quote: PaymentQuote } | { challenge: unknown }>;
  transfer(
    scope: PaymentScope,
    p: {
      type: 'TRANSFER_OUT' | 'TRANSFER_IN';
      requestKey: string;
      sourceAccountId: string;
      destinationAccountId: string;
      amount: bigint;
      description?: string;
      agentId: string;
    },
  ): Promise<PaymentTransaction>;
  getTransaction(platformId: string, transactionId: string): Promise<PaymentTransaction>;
  /** The current rate from `from` to `to` for `amount` (sending major units per receiving major unit, decimal). */
  exchangeRate(scope: PaymentScope, p: { from: string; to: string; amount: bigint }): Promise<string>;
}

/** The events of agents, written to the outbox in the caller's database transaction. */
export interface AgentEvents {
  /** AGENT_ACTION.PENDING_APPROVAL (the webhook, with the quote acted on). */
  pendingApproval(em: EntityManager, action: AgentAction, quote: PaymentQuote | undefined): Promise<void>;
  /** AGENT_TOKEN.REVOKED: caches drop the agent's token at once. */
  tokenRevoked(em: EntityManager, agent: Pick<Agent, 'id' | 'platformId'>): Promise<void>;
  /** AGENT.UPDATED: paused, resumed, renamed, another policy. */
  updated(em: EntityManager, agent: Pick<Agent, 'id' | 'platformId'>): Promise<void>;
}
