import {
  decodeCursor,
  invalidInput,
  isDomainError,
  isId,
  isPermanentRefusal,
  newId,
  pageSize,
  type Clock,
  type Page,
} from '@sluice/core';
import type { Logger } from '@sluice/logging';
import { transactional, type MikroORM } from '@sluice/store';
import {
  APPROVAL_EXPIRED,
  statesOf,
  type ActionStatus,
  type Agent,
  type AgentAction,
  type TransferDetails,
} from '../domain/agent.js';
import {
  currenciesToCheck,
  convertAmount,
  evaluateAction,
  requirePermission,
  type ActionCheck,
  type ActionType,
} from '../domain/enforcement.js';
import { fail, keyReused, refusalError, refusalOf, requireRequestKey } from '../domain/errors.js';
import { checkAgentQuote, checkTransfer } from '../domain/action-rules.js';
import type { ActionRepository } from '../store/action.repository.js';
import type { AgentRepository } from '../store/agent.repository.js';
import type { AgentQuoteRepository } from '../store/device-code.repository.js';
import type {
  AccountsPort,
  AgentEvents,
  AgentQuoteInput,
  PaymentQuote,
  PaymentScope,
  PaymentTransaction,
  PaymentsPort,
} from './ports.js';
import type { UsageReleaser } from './usage.js';

/** The agent a call of the agent's own API acts as (from its bearer token). */
export interface AgentRef {
  platformId: string;
  agentId: string;
}

/** An action with the quote and transaction it refers to, as payments has them now. */
export interface ActionView {
  action: AgentAction;
  quote?: PaymentQuote;
  transaction?: PaymentTransaction;
}

export interface ActionsSettings {
  /** How long a PENDING_APPROVAL action waits for the platform (an EXECUTE_QUOTE at most until its quote expires). */
  approvalTtlMs: number;
  /** An EXECUTING action untouched this long is driven again by the recovery worker. */
  stallMs: number;
}

/** What a submission asks for (after the agent-side checks of its accounts or quote). */
interface Submission {
  type: ActionType;
  /** The customer's internal account acted on. */
  accountId: string;
  amount: bigint;
  currency: string;
  quote?: PaymentQuote;
  transfer?: TransferDetails;
  description?: string;
  requestKey?: string;
  walletSignature?: string;
  signingRequestId?: string;
}

/** What a submission with a request key asked for (a retry with the key must ask for the same). */
interface Asked {
  type: ActionType;
  quoteId?: string | undefined;
  transfer?: Pick<TransferDetails, 'sourceAccountId' | 'destinationAccountId' | 'amount'> | undefined;
}

const agentNotFound = (agentId: string) => fail('AGENT_NOT_FOUND', `Agent ${agentId} not found`);
/** A quote of another agent (or none) answers as an unknown one. */
const quoteNotFound = (quoteId: string) => fail('QUOTE_NOT_FOUND', `Quote ${quoteId} not found`);

/**
 * Agent actions: every money-moving call of an agent becomes an AgentAction, checked against
 * the policy and reserved in the usage counters atomically (one transaction under the agent's
 * row lock), then executed through payments (AUTO) or left PENDING_APPROVAL for the platform.
 * No remote call runs inside a transaction: convert (payments' rate), reserve and commit, call
 * payments, record the outcome. Payments calls are idempotent on the action (transfer request
 * key = action id; a quote executes once), so an EXECUTING action left by a crash is simply
 * driven again by `recoverStalled`.
 */
export class ActionsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly settings: ActionsSettings,
    private readonly deps: {
      agents: AgentRepository;
      actions: ActionRepository;
      quotes: AgentQuoteRepository;
      payments: PaymentsPort;
      accounts: AccountsPort;
      events: AgentEvents;
      usage: UsageReleaser;
      logger: Logger;
    },
  ) {}

  /** POST /agents/me/quotes (CREATE_QUOTES): a quote from one of the customer's internal accounts. */
  async createQuote(ref: AgentRef, input: AgentQuoteInput): Promise<PaymentQuote> {
    const agent = await this.agent(ref);
    if (agent.isPaused) throw fail('AGENT_PAUSED', 'The agent is paused; the platform must resume it first');
    requirePermission(agent.policy, 'CREATE_QUOTES');
    checkAgentQuote(input);
    const quote = await this.deps.payments.createQuote(
      { platformId: agent.platformId, environment: agent.environment, customerId: agent.customerId },
      input,
    );
    await this.deps.quotes.insert(this.orm.em.fork(), quote.id, agent.id, this.clock.now());
    return quote;
  }

  /** GET /agents/me/quotes/{quoteId}: only a quote this agent created (QUOTE_NOT_FOUND otherwise). */
  async getQuote(ref: AgentRef, quoteId: string): Promise<PaymentQuote> {
    await this.agent(ref);
    if (!(await this.ownsQuote(ref.agentId, quoteId))) throw quoteNotFound(quoteId);
    return this.deps.payments.getQuote(ref.platformId, quoteId);
  }

  /**
   * POST /agents/me/quotes/{quoteId}/execute (EXECUTE_QUOTES): an EXECUTE_QUOTE action for the
   * quote's totalSendingAmount from its source account. A retry of an earlier submission (the same
   * `requestKey`) answers as that one did (`answerOf`: its refusal, or its action as it is now),
   * whatever became of the quote since; the key with another quote is a reused key. Else a quote
   * with a live action answers that action (nothing is reserved twice). An EMBEDDED_WALLET source
   * without signature headers answers the signing challenge, reserves nothing and stores nothing
   * under the key.
   */
  async executeQuote(
    ref: AgentRef,
    p: { quoteId: string; walletSignature?: string; signingRequestId?: string; requestKey?: string },
  ): Promise<{ action: ActionView } | { challenge: unknown }> {
    requireRequestKey(p.requestKey);
    // The agent, its ownership of the quote, an earlier submission under the key and the quote's live
    // action: four reads that need only the request, made at once (one round trip's wait, not four),
    // then checked in this order.
    const [agent, owned, first, live] = await Promise.all([
      this.deps.agents.get(this.orm.em.fork(), ref.platformId, ref.agentId),
      this.ownsQuote(ref.agentId, p.quoteId),
      p.requestKey ? this.deps.actions.byRequestKey(this.orm.em.fork(), ref.agentId, p.requestKey) : undefined,
      this.deps.actions.liveOfQuote(this.orm.em.fork(), p.quoteId),
    ]);
    if (!agent) throw agentNotFound(ref.agentId);
    if (!owned) throw quoteNotFound(p.quoteId);
    if (first) return { action: await this.sameRequest(first, { type: 'EXECUTE_QUOTE', quoteId: p.quoteId }) };
    if (live) return { action: await this.view(live) };
    const quote = await this.deps.payments.getQuote(agent.platformId, p.quoteId);
    if (quote.status === 'EXPIRED' || quote.expiresAt.getTime() <= this.clock.now().getTime()) {
      throw fail('QUOTE_EXPIRED', `Quote ${quote.id} has expired`, { quoteId: quote.id });
    }
    if (quote.status !== 'PENDING' || !quote.sourceAccountId) {
      throw fail('QUOTE_NOT_EXECUTABLE', `Quote ${quote.id} is ${quote.status}, not PENDING`, { quoteId: quote.id });
    }
    if (quote.embeddedWallet && !p.walletSignature && !p.signingRequestId) {
      // The signed retry's step 1 (nothing is held by payments, nothing reserved here).
      const r = await this.deps.payments.executeQuote(this.scope(agent), { quoteId: quote.id });
      if ('challenge' in r) return r;
    }
    const action = await this.submit(agent, {
      type: 'EXECUTE_QUOTE',
      accountId: quote.sourceAccountId,
      amount: quote.totalSendingAmount,
      currency: quote.sendingCurrency,
      quote,
      ...(p.walletSignature ? { walletSignature: p.walletSignature } : {}),
      ...(p.signingRequestId ? { signingRequestId: p.signingRequestId } : {}),
      ...(p.requestKey ? { requestKey: p.requestKey } : {}),
    });
    return { action };
  }

  /**
   * POST /agents/me/transfer-out and /transfer-in (CREATE_TRANSFERS): both accounts must be the
   * customer's (404 otherwise, as for an unknown id); the internal account is the one the
   * policy's account restrictions look at.
   */
  async transfer(
    ref: AgentRef,
    p: {
      type: 'TRANSFER_OUT' | 'TRANSFER_IN';
      sourceAccountId: string;
      destinationAccountId: string;
      amount: bigint;
      description?: string;
      requestKey: string;
    },
  ): Promise<ActionView> {
    // The agent and an earlier submission under the key, read at once.
    const [agent, first] = await Promise.all([
      this.deps.agents.get(this.orm.em.fork(), ref.platformId, ref.agentId),
      this.deps.actions.byRequestKey(this.orm.em.fork(), ref.agentId, p.requestKey),
    ]);
    if (!agent) throw agentNotFound(ref.agentId);
    checkTransfer(p);
    // A retry of a submission (the same Idempotency-Key) answers its action, whatever became of it.
    if (first) return this.sameRequest(first, { type: p.type, transfer: p });
    requirePermission(agent.policy, 'CREATE_TRANSFERS');
    const [internalId, externalId] =
      p.type === 'TRANSFER_OUT' ? [p.sourceAccountId, p.destinationAccountId] : [p.destinationAccountId, p.sourceAccountId];
    const [internal, external] = await Promise.all([
      this.deps.accounts.internalAccount(agent.platformId, internalId),
      this.deps.accounts.externalAccount(agent.platformId, externalId),
    ]);
    // Another customer's account answers as an unknown one.
    if (internal.customerId !== agent.customerId) {
      throw fail('INTERNAL_ACCOUNT_NOT_FOUND', `Internal account ${internalId} not found`, { accountId: internalId });
    }
    if (external.customerId !== agent.customerId) {
      throw fail('EXTERNAL_ACCOUNT_NOT_FOUND', `External account ${externalId} not found`, { accountId: externalId });
    }
    if (internal.currency !== external.currency) {
      const field = p.type === 'TRANSFER_OUT' ? 'destination.accountId' : 'source.accountId';
      throw invalidInput([{ field, message: `currency ${external.currency} does not match the internal account's ${internal.currency}` }]);
    }
    return this.submit(agent, {
      type: p.type,
      accountId: internal.id,
      amount: p.amount,
      currency: internal.currency,
      transfer: { amount: p.amount, currency: internal.currency, sourceAccountId: p.sourceAccountId, destinationAccountId: p.destinationAccountId },
      ...(p.description !== undefined ? { description: p.description } : {}),
      requestKey: p.requestKey,
    });
  }

  /** The answer to an earlier submission with the same key, if it asked for the same (quote or transfer). */
  private async sameRequest(a: AgentAction, p: Asked): Promise<ActionView> {
    const [t, u] = [a.transfer, p.transfer];
    const sameTransfer = t && u ? t.sourceAccountId === u.sourceAccountId && t.destinationAccountId === u.destinationAccountId && t.amount === u.amount : !t && !u;
    if (a.type !== p.type || a.quoteId !== p.quoteId || !sameTransfer) throw keyReused('agent');
    return this.answerOf(a);
  }

  /**
   * What a submission of `a` answers, the first time and on every retry with its key: the refusal
   * it was answered with when payments refused its AUTO payment (the same status and body), else
   * the action as it is now.
   */
  private async answerOf(a: AgentAction): Promise<ActionView> {
    if (a.refusal) throw refusalError(a.refusal);
    return this.view(a);
  }

  /** GET /agents/me/actions. */
  async listOwn(ref: AgentRef, q: { status?: ActionStatus; limit?: number; cursor?: string }): Promise<Page<ActionView>> {
    await this.agent(ref);
    return this.list({ platformId: ref.platformId, agentId: ref.agentId, ...(q.status ? { states: statesOf(q.status) } : {}) }, q);
  }

  /** GET /agents/me/actions/{actionId}: only this agent's. */
  async getOwn(ref: AgentRef, actionId: string): Promise<ActionView> {
    await this.agent(ref);
    return this.view(await this.action(ref.platformId, ref.agentId, actionId));
  }

  /** GET /agents/approvals: the platform's PENDING_APPROVAL actions. */
  async listApprovals(
    platformId: string,
    q: { agentId?: string; customerId?: string; startDate?: Date; endDate?: Date; ascending?: boolean; limit?: number; cursor?: string },
  ): Promise<Page<ActionView>> {
    return this.list(
      {
        platformId,
        states: ['PENDING_APPROVAL'],
        ...(q.agentId ? { agentId: q.agentId } : {}),
        ...(q.customerId ? { customerId: q.customerId } : {}),
        ...(q.startDate ? { createdFrom: q.startDate } : {}),
        ...(q.endDate ? { createdTo: q.endDate } : {}),
      },
      q,
      q.ascending ? 'ASC' : 'DESC',
    );
  }

  /**
   * POST /agents/{agentId}/actions/{actionId}/approve: PENDING_APPROVAL → EXECUTING by one guarded
   * update (a second approve, or one racing a reject, finds it gone: ACTION_NOT_PENDING), then the
   * payment runs once: APPROVED with its transaction, or FAILED with payments' reason (usage
   * released). An action past its expiry (its quote's, or the approval window) FAILs instead, and
   * that is the answer (as the reference has it for an expired quote).
   */
  async approve(platformId: string, agentId: string, actionId: string): Promise<ActionView> {
    const action = await this.action(platformId, agentId, actionId);
    const now = this.clock.now();
    if (action.state === 'PENDING_APPROVAL' && action.expiresAt && action.expiresAt.getTime() <= now.getTime()) {
      const expired = await this.expire(action);
      if (expired) return this.view(expired);
    }
    const claimed = await transactional(this.orm, (em) =>
      this.deps.actions.transition(em, action.id, 'PENDING_APPROVAL', 'EXECUTING', this.clock.now()),
    );
    if (!claimed) throw this.notPending(await this.action(platformId, agentId, actionId));
    return this.view(await this.runPaymentOrLeave(claimed));
  }

  /** POST /agents/{agentId}/actions/{actionId}/reject: REJECTED with the reason, nothing moves, usage released. */
  async reject(platformId: string, agentId: string, actionId: string, reason: string | undefined): Promise<ActionView> {
    const action = await this.action(platformId, agentId, actionId);
    const rejected = await transactional(this.orm, (em) =>
      this.deps.usage.end(em, action, 'PENDING_APPROVAL', 'REJECTED', reason !== undefined ? { rejectionReason: reason } : {}),
    );
    if (!rejected) throw this.notPending(await this.action(platformId, agentId, actionId));
    return this.view(rejected);
  }

  /** Fails PENDING_APPROVAL actions past their expiry (APPROVAL_EXPIRED), releasing their usage. Returns how many. */
  async expireDue(limit = 50): Promise<number> {
    const due = await this.deps.actions.expired(this.orm.em.fork(), this.clock.now(), limit);
    for (const a of due) await this.expire(a);
    return due.length;
  }

  /** When the worker next has an approval to expire or an execution to check (undefined: none waits). */
  nextDueAt(): Promise<Date | undefined> {
    return this.deps.actions.nextDueAt(this.orm.em.fork(), this.settings.stallMs);
  }

  /** Drives EXECUTING actions whose executor went quiet (a crash between reserve and outcome). Returns how many. */
  async recoverStalled(limit = 20): Promise<number> {
    const before = new Date(this.clock.now().getTime() - this.settings.stallMs);
    const stalled = await this.deps.actions.stalled(this.orm.em.fork(), before, limit);
    let driven = 0;
    for (const a of stalled) {
      // A new lease: only one recoverer drives it (payments calls are idempotent anyway).
      if (!(await this.deps.actions.touch(this.orm.em.fork(), a.id, this.clock.now(), before))) continue;
      driven++;
      try {
        await this.runPayment(a);
      } catch (err) {
        this.deps.logger.warn({ err, actionId: a.id }, 'stalled agent action still cannot reach payments; retried later');
      }
    }
    return driven;
  }

  // -- internals --------------------------------------------------------------------------------

  /**
   * Checks and reserves, atomically: converts the amount into the policy's currencies at
   * payments' current rate (outside any transaction), then under the agent's row lock
   * evaluates the policy against the counters as they are and writes the action and the new
   * counters in one commit, so N concurrent submissions never exceed a limit. AUTO actions then
   * execute; APPROVAL_REQUIRED ones wait (AGENT_ACTION.PENDING_APPROVAL, same commit).
   */
  private async submit(agent: Agent, s: Submission): Promise<ActionView> {
    for (let attempt = 0; ; attempt++) {
      const amounts = await this.convert(agent, s);
      const outcome = await transactional(this.orm, async (em) => {
        const locked = await this.deps.agents.get(em, agent.platformId, agent.id, true);
        if (!locked) throw fail('AGENT_NOT_FOUND', `Agent ${agent.id} not found`);
        // A concurrent twin of this submission (the same key, serialised by the agent's lock) is
        // answered as the first; a quote has one live action: a concurrent execute of the same
        // quote answers the first one's action.
        const first = s.requestKey ? await this.deps.actions.byRequestKey(em, locked.id, s.requestKey) : undefined;
        if (first) return { action: first, retry: undefined, existing: 'key' as const };
        const live = s.quote ? await this.deps.actions.liveOfQuote(em, s.quote.id) : undefined;
        if (live) return { action: live, retry: undefined, existing: 'quote' as const };
        const need = currenciesToCheck(locked.policy);
        const limitAmount = amounts.get(need.limit);
        const thresholdAmount = need.threshold ? amounts.get(need.threshold) : undefined;
        // The policy's currencies changed since the conversion: convert again.
        if (limitAmount === undefined || (need.threshold && thresholdAmount === undefined)) {
          return { retry: locked, action: undefined, existing: false };
        }
        const check: ActionCheck = {
          type: s.type,
          accountId: s.accountId,
          limitAmount,
          ...(thresholdAmount !== undefined ? { thresholdAmount } : {}),
        };
        const now = this.clock.now();
        const decision = evaluateAction(locked, locked.usage, check, now);
        const pending = decision.mode === 'APPROVAL_REQUIRED';
        const ttl = new Date(now.getTime() + this.settings.approvalTtlMs);
        const expiresAt = s.quote && s.quote.expiresAt < ttl ? s.quote.expiresAt : ttl;
        const action: AgentAction = {
          id: newId('AgentAction'),
          platformId: locked.platformId,
          agentId: locked.id,
          customerId: locked.customerId,
          platformCustomerId: locked.platformCustomerId,
          type: s.type,
          state: pending ? 'PENDING_APPROVAL' : 'EXECUTING',
          ...(s.quote ? { quoteId: s.quote.id } : {}),
          ...(s.transfer ? { transfer: s.transfer } : {}),
          ...(s.description !== undefined ? { description: s.description } : {}),
          ...(s.requestKey !== undefined ? { requestKey: s.requestKey } : {}),
          ...(s.walletSignature ? { walletSignature: s.walletSignature } : {}),
          ...(s.signingRequestId ? { signingRequestId: s.signingRequestId } : {}),
          reservation: decision.reservation,
          ...(pending ? { expiresAt } : {}),
          createdAt: now,
          updatedAt: now,
        };
        await this.deps.actions.insert(em, action);
        await this.deps.agents.saveUsage(em, locked.id, decision.usage);
        if (pending) await this.deps.events.pendingApproval(em, action, s.quote);
        return { action, retry: undefined, existing: false };
      });
      if (outcome.existing === 'key') return this.sameRequest(outcome.action!, { type: s.type, quoteId: s.quote?.id, transfer: s.transfer });
      if (outcome.existing) return this.answerOf(outcome.action!);
      if (outcome.action) {
        if (outcome.action.state === 'PENDING_APPROVAL') return { action: outcome.action, ...(s.quote ? { quote: s.quote } : {}) };
        // AUTO: a refused payment is the agent's answer, recorded with the FAILED action (its usage
        // released) so that a retry with the same key is answered the same.
        return this.answerOf(await this.runPaymentOrLeave(outcome.action, true, agent.environment));
      }
      if (attempt >= 2) throw fail('POLICY_CHANGED', 'The agent’s policy changed during the request; retry');
      agent = outcome.retry!;
    }
  }

  /** The action's amount in every currency the agent's policy may need (its own, converted, rounded up). */
  private async convert(agent: Agent, s: Submission): Promise<Map<string, bigint>> {
    const need = currenciesToCheck(agent.policy);
    const out = new Map<string, bigint>([[s.currency, s.amount]]);
    for (const to of new Set([need.limit, ...(need.threshold ? [need.threshold] : [])])) {
      if (out.has(to)) continue;
      const rate = await this.deps.payments.exchangeRate(this.scope(agent), { from: s.currency, to, amount: s.amount });
      out.set(to, convertAmount(s.amount, s.currency, to, rate));
    }
    return out;
  }

  /**
   * As `runPayment`, but an outage is not an answer: the payment may or may not have happened, and
   * an error would invite the caller to submit again (a second reservation, a second payment).
   * The action is returned as it is — APPROVED, its transaction not known yet — and the recovery
   * worker finishes it.
   */
  private async runPaymentOrLeave(
    action: AgentAction,
    answered = false,
    environment?: Agent['environment'],
  ): Promise<AgentAction> {
    try {
      return await this.runPayment(action, answered, environment);
    } catch (err) {
      this.deps.logger.warn({ err, actionId: action.id }, 'payments did not answer for an agent action; the recovery worker finishes it');
      return action;
    }
  }

  /**
   * Runs the payment of an EXECUTING action and records the outcome. A refusal (insufficient
   * funds, an expired quote, a bad signature) fails the action and releases its usage (`answered`:
   * the refusal is the submission's answer, kept with the action as `refusal`); an outage leaves it
   * EXECUTING (the recovery worker drives it again) and is thrown. An agent's environment is written
   * once, when it is created: a caller that holds the agent passes it (`known`) instead of a read.
   */
  private async runPayment(action: AgentAction, answered = false, known?: Agent['environment']): Promise<AgentAction> {
    const environment = known ?? (await this.deps.agents.environmentOf(this.orm.em.fork(), action.agentId));
    if (!environment) throw new Error(`agent ${action.agentId} of action ${action.id} does not exist`);
    const scope: PaymentScope = { platformId: action.platformId, environment };
    let transactionId: string;
    try {
      transactionId = await this.pay(scope, action);
    } catch (err) {
      if (!isPermanentRefusal(err)) throw err;
      const failed = await transactional(this.orm, (em) =>
        this.deps.usage.end(em, action, 'EXECUTING', 'FAILED', { failureReason: err.code, ...(answered ? { refusal: refusalOf(err) } : {}) }),
      );
      return failed ?? (await this.reread(action));
    }
    const done = await transactional(this.orm, (em) =>
      this.deps.actions.transition(em, action.id, 'EXECUTING', 'APPROVED', this.clock.now(), { transactionId }),
    );
    return done ?? (await this.reread(action));
  }

  /** The payments call of an action (idempotent on it); the transaction id it produced. */
  private async pay(scope: PaymentScope, a: AgentAction): Promise<string> {
    if (a.type === 'EXECUTE_QUOTE') {
      const r = await this.deps.payments.executeQuote(scope, {
        quoteId: a.quoteId!,
        agentId: a.agentId,
        ...(a.walletSignature ? { walletSignature: a.walletSignature } : {}),
        ...(a.signingRequestId ? { signingRequestId: a.signingRequestId } : {}),
      });
      if ('challenge' in r || !r.quote.transactionId) {
        throw fail('QUOTE_NOT_EXECUTABLE', `Quote ${a.quoteId} was not executed`, { quoteId: a.quoteId });
      }
      return r.quote.transactionId;
    }
    const t = a.transfer!;
    const tx = await this.deps.payments.transfer(scope, {
      type: a.type,
      requestKey: a.id,
      sourceAccountId: t.sourceAccountId,
      destinationAccountId: t.destinationAccountId,
      amount: t.amount,
      ...(a.description !== undefined ? { description: a.description } : {}),
      agentId: a.agentId,
    });
    return tx.id;
  }

  /**
   * Fails a PENDING_APPROVAL action past its expiry, releasing its usage: QUOTE_EXPIRED when its
   * quote's expiry came before the approval window's end, else APPROVAL_EXPIRED.
   */
  private async expire(a: AgentAction): Promise<AgentAction | undefined> {
    const byQuote =
      a.type === 'EXECUTE_QUOTE' && a.expiresAt !== undefined && a.expiresAt.getTime() - a.createdAt.getTime() < this.settings.approvalTtlMs;
    return transactional(this.orm, (em) =>
      this.deps.usage.end(em, a, 'PENDING_APPROVAL', 'FAILED', { failureReason: byQuote ? 'QUOTE_EXPIRED' : APPROVAL_EXPIRED }),
    );
  }

  private async list(
    filter: Parameters<ActionRepository['list']>[1],
    q: { limit?: number; cursor?: string },
    order: 'ASC' | 'DESC' = 'DESC',
  ): Promise<Page<ActionView>> {
    const limit = pageSize(q.limit);
    const after = decodeCursor(q.cursor);
    const page = await this.deps.actions.list(this.orm.em.fork(), filter, { limit, order, ...(after ? { after } : {}) });
    return { ...page, data: await Promise.all(page.data.map((a) => this.view(a))) };
  }

  /** The action with its quote and transaction as payments has them now (omitted if payments cannot say). */
  async view(action: AgentAction): Promise<ActionView> {
    const quiet = <T>(p: Promise<T>) =>
      p.catch((err: unknown) => {
        if (!isDomainError(err)) this.deps.logger.warn({ err, actionId: action.id }, 'payments unavailable for an action view');
        return undefined;
      });
    const [quote, transaction] = await Promise.all([
      action.quoteId ? quiet(this.deps.payments.getQuote(action.platformId, action.quoteId)) : undefined,
      action.transactionId ? quiet(this.deps.payments.getTransaction(action.platformId, action.transactionId)) : undefined,
    ]);
    return { action, ...(quote ? { quote } : {}), ...(transaction ? { transaction } : {}) };
  }

  private async agent(ref: AgentRef): Promise<Agent> {
    const agent = await this.deps.agents.get(this.orm.em.fork(), ref.platformId, ref.agentId);
    if (!agent) throw agentNotFound(ref.agentId);
    return agent;
  }

  private async action(platformId: string, agentId: string, actionId: string): Promise<AgentAction> {
    const a = isId(actionId, 'AgentAction') ? await this.deps.actions.get(this.orm.em.fork(), platformId, actionId) : undefined;
    if (!a || a.agentId !== agentId) throw fail('AGENT_ACTION_NOT_FOUND', `Agent action ${actionId} not found`);
    return a;
  }

  private async reread(a: AgentAction): Promise<AgentAction> {
    return (await this.deps.actions.get(this.orm.em.fork(), a.platformId, a.id))!;
  }

  /** Whether the agent created the quote (false for a malformed id, which is not looked up). */
  private async ownsQuote(agentId: string, quoteId: string): Promise<boolean> {
    return isId(quoteId, 'Quote') && (await this.deps.quotes.isAgents(this.orm.em.fork(), quoteId, agentId));
  }

  private notPending(a: AgentAction) {
    return fail('ACTION_NOT_PENDING', `Action ${a.id} is not pending approval`, { status: a.state === 'EXECUTING' ? 'APPROVED' : a.state });
  }

  private scope(agent: Agent): PaymentScope {
    return { platformId: agent.platformId, environment: agent.environment };
  }
}
