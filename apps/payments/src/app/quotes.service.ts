import { randomBytes } from 'node:crypto';
import { invalidInput, isDomainError, newId, type Clock } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { fail } from '../domain/errors.js';
import {
  amountLimits,
  computeQuoteAmounts,
  type FeeSchedule,
  type LockedCurrencySide,
} from '../domain/pricing.js';
import type { PurposeOfPayment, Quote } from '../domain/quote.js';
import { quoteEntries } from '../domain/quote-ledger.js';
import { payoutRail } from '../domain/payout-rails.js';
import { REALTIME_FUNDING_CURRENCIES, sandboxFundingInstructions } from '../domain/payment-instructions.js';
import { payerDataProblems, type ReceiverLookup } from '../domain/receiver-lookup.js';
import { newReference, type Transaction, type TransactionEndpoint } from '../domain/transaction.js';
import type { JobScheduler } from '../store/job-scheduler.js';
import { QuoteRepository } from '../store/quote.repository.js';
import { TransactionRepository } from '../store/transaction.repository.js';
import type { AccountsPort, CustomerDirectory, Ledger } from './ports.js';
import type { QuotePaymentsService } from './quote-payments.service.js';
import type { TransfersService } from './transfers.service.js';
import type { Environment, EnvironmentAdapters, ReceiverLookupsService } from './receiver-lookups.service.js';

/** A validated POST /quotes request (field syntax checked by the RPC layer). */
export interface CreateQuoteRequest {
  platformId: string;
  environment: Environment;
  /**
   * ACCOUNT: an internal account pays (`customerId`, when given, must own it).
   * REALTIME_FUNDING: the payer pays the quote's paymentInstructions in `currency`,
   * on behalf of `customerId` (or of the platform when absent).
   */
  source:
    | { kind: 'ACCOUNT'; accountId: string; customerId?: string }
    | { kind: 'REALTIME_FUNDING'; currency: string; customerId?: string };
  destination:
    | { kind: 'ACCOUNT'; accountId: string; paymentRail?: string }
    | { kind: 'UMA_ADDRESS'; umaAddress: string; currency?: string };
  lockedCurrencySide: LockedCurrencySide;
  lockedCurrencyAmount: bigint;
  lookupId?: string;
  description?: string;
  purposeOfPayment?: PurposeOfPayment;
  senderCustomerInfo: Record<string, unknown>;
}

/** The kind of an internal account (public InternalAccount.type). */
export type InternalAccountType = 'INTERNAL_FIAT' | 'INTERNAL_CRYPTO' | 'EMBEDDED_WALLET' | 'UNKNOWN';

/** Reads the type of an internal account (accounts service); its NOT_FOUND errors pass through. */
export interface InternalAccountTypes {
  typeOf(platformId: string, accountId: string): Promise<InternalAccountType>;
}

/**
 * The wallet owner's authorization of an EMBEDDED_WALLET execution: wallet-auth's signed retry
 * (action EXECUTE_QUOTE, body `{"quoteId": ...}`). `verify` throws wallet-auth's 401 DomainError
 * (WALLET_SIGNATURE_MISSING, SIGNING_REQUEST_REUSED, WALLET_SIGNATURE_INVALID, ...) and consumes the request.
 */
export interface WalletSignatures {
  challenge(platformId: string, accountId: string, bodyJson: string): Promise<SigningChallenge>;
  verify(
    platformId: string,
    accountId: string,
    signed: { bodyJson: string; signature?: string; requestId?: string },
  ): Promise<void>;
}

/** A single-use signing request of wallet-auth: the signed retry's step 1 (HTTP 202). */
export interface SigningChallenge {
  requestId: string;
  payloadToSign: string;
  expiresAt: Date;
}

/**
 * What an execute answers: the quote as it is after the call, or, for an EMBEDDED_WALLET source executed
 * without signature headers, a fresh signing challenge (nothing moved).
 */
export type ExecuteOutcome =
  { quote: Quote; challenge?: never } | { challenge: SigningChallenge; quote?: never };

/** The body an EXECUTE_QUOTE signing request binds. */
export const executeQuoteBody = (quoteId: string): string => JSON.stringify({ quoteId });

/** The wallet signature headers of an execute (EMBEDDED_WALLET sources). */
export interface ExecuteSignature {
  signature?: string;
  requestId?: string;
}

/** Job kinds of quotes. */
export const QUOTE_JOBS = {
  /** Marks a quote still PENDING at its expiry EXPIRED. */
  expire: 'quote.expire',
  /**
   * Superseded: a quote now follows its transaction in the same database transaction
   * (TransfersService.move). Kept so that jobs scheduled by an older replica complete.
   */
  sync: 'quote.sync',
} as const;

/**
 * Quotes: resolve the source and the destination, lock the exchange rate and
 * fees (computeQuoteAmounts, exact integers, customer-favouring rounding) and
 * keep the quote PENDING until `expiresAt`; a durable job expires it. Execution
 * (or, for a REALTIME_FUNDING source, the funds arriving) claims the quote once
 * and hands the payment to QuotePaymentsService.
 */
export class QuotesService {
  private readonly repo = new QuoteRepository();
  private readonly transactions = new TransactionRepository();

  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly deps: {
      accounts: AccountsPort;
      lookups: ReceiverLookupsService;
      adapters: Record<Environment, EnvironmentAdapters>;
      fees: FeeSchedule;
      scheduler: JobScheduler;
      ledger: Ledger;
      customers: CustomerDirectory;
      accountTypes: InternalAccountTypes;
      walletSignatures: WalletSignatures;
      transfers: TransfersService;
      quotePayments: QuotePaymentsService;
      ttlMs: number;
      logger: Logger;
    },
  ) {}

  /** Registers the quote jobs on the scheduler. */
  registerJobs(): void {
    this.deps.scheduler.register(QUOTE_JOBS.sync, async () => undefined);
    this.deps.scheduler.register<{ quoteId: string }>(QUOTE_JOBS.expire, async (job, em) => {
      const q = await this.expire(em, job.payload.quoteId);
      if (q) this.deps.logger.info({ quoteId: q.id }, 'quote expired');
    });
  }

  /**
   * PENDING → EXPIRED once past expiresAt (guarded), in `em`: an unfunded
   * real-time-funding quote's transaction becomes EXPIRED with it
   * (OUTGOING_PAYMENT.EXPIRED), and a hold left by an execute that lost the claim
   * to the expiry is released. Returns the expired quote, or undefined.
   */
  private async expire(em: EntityManager, quoteId: string): Promise<Quote | undefined> {
    const now = this.clock.now();
    const q = await this.repo.transition(em, quoteId, 'PENDING', 'EXPIRED', now, { expiredAt: now });
    if (!q) return undefined;
    if (q.transactionId) {
      const t = await this.transactions.get(em, q.platformId, q.transactionId, true);
      if (t?.status === 'PENDING') {
        await this.deps.transfers.move(em, t, 'EXPIRED', { failureReason: 'QUOTE_EXPIRED' });
      }
    }
    if (q.source.kind === 'ACCOUNT') await this.releaseHold(q);
    return q;
  }

  /**
   * POST /quotes. `immediatelyExecute` is refused (before anything is written) for an
   * EMBEDDED_WALLET source (it needs the wallet signature) and for a REALTIME_FUNDING
   * source (it executes when its funds arrive). A REALTIME_FUNDING quote is created
   * with its OUTGOING transaction (PENDING, awaiting funding) and paymentInstructions.
   */
  async create(req: CreateQuoteRequest & { immediatelyExecute?: boolean }): Promise<Quote> {
    const payer = await this.payerOf(req);
    if (req.immediatelyExecute && payer.embeddedWallet) {
      throw invalidInput([
        {
          field: 'immediatelyExecute',
          message:
            'is not available for an EMBEDDED_WALLET source: create the quote, then execute it with the wallet signature',
        },
      ]);
    }
    if (req.immediatelyExecute && req.source.kind === 'REALTIME_FUNDING') {
      throw invalidInput([
        {
          field: 'immediatelyExecute',
          message:
            'is not available for a REALTIME_FUNDING source: the quote executes when its paymentInstructions are paid',
        },
      ]);
    }
    const { destination, lookup, counterpartyInformation } = await this.destinationOf(req, payer);
    if (lookup) {
      const problems = payerDataProblems(lookup, req.senderCustomerInfo);
      if (problems.length) {
        throw invalidInput(
          problems.map(({ name, problem }) => ({
            field: `senderCustomerInfo.${name}`,
            message:
              problem === 'missing'
                ? 'is required by the receiver (requiredPayerDataFields of the lookup)'
                : 'must be a non-blank string (or an object for a structured field such as ADDRESS)',
          })),
        );
      }
    }
    const from = payer.endpoint.currency;
    const to = destination.currency;
    if (from === to) {
      throw fail(
        'SAME_CURRENCY_QUOTE',
        `Source and destination are both in ${from}: use POST /transfer-out or POST /transfer-in for same-currency transfers`,
        { field: 'destination', currency: from },
      );
    }
    const { rates } = this.deps.adapters[req.environment];
    const supported = rates.currencies();
    const sourceField = req.source.kind === 'ACCOUNT' ? 'source.accountId' : 'source.currency';
    for (const [field, code] of [
      [sourceField, from],
      [destination.kind === 'UMA_ADDRESS' ? 'destination.currency' : 'destination.accountId', to],
    ] as const) {
      if (!supported.includes(code)) {
        throw fail('UNSUPPORTED_CURRENCY', `Payments in ${code} are not supported`, { field, supported });
      }
    }
    const amounts = computeQuoteAmounts({
      side: req.lockedCurrencySide,
      amount: req.lockedCurrencyAmount,
      rate: rates.rate(from, to),
      fees: this.deps.fees.terms(from, to),
    });
    this.checkLimits(from, amounts.totalSendingAmount, to, amounts.totalReceivingAmount);
    const now = this.clock.now();
    const quote: Quote = {
      id: newId('Quote'),
      platformId: req.platformId,
      status: 'PENDING',
      source: payer.endpoint,
      destination,
      ...(payer.customer ? { customerId: payer.customer.customerId } : {}),
      ...(req.source.kind === 'ACCOUNT' ? { sourceEmbeddedWallet: payer.embeddedWallet } : {}),
      amounts,
      ...(lookup ? { lookupId: lookup.id } : {}),
      ...(req.description !== undefined ? { description: req.description } : {}),
      ...(req.purposeOfPayment ? { purposeOfPayment: req.purposeOfPayment } : {}),
      senderCustomerInfo: req.senderCustomerInfo,
      counterpartyInformation,
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.deps.ttlMs),
      updatedAt: now,
    };
    let awaitingFunds: Transaction | undefined;
    if (req.source.kind === 'REALTIME_FUNDING') {
      if (req.environment !== 'SANDBOX') {
        throw fail(
          'RAIL_UNAVAILABLE',
          'No real-time funding rail is configured for production platforms yet',
        );
      }
      const customer = payer.customer?.platformCustomerId
        ? { customerId: payer.customer.customerId, platformCustomerId: payer.customer.platformCustomerId }
        : undefined;
      awaitingFunds = this.newTransaction(quote, {
        id: newId('Transaction'),
        counterpartyIdentifier: await this.counterpartyOf(req.platformId, destination),
        customer,
      });
      quote.transactionId = awaitingFunds.id;
      quote.paymentInstructions = sandboxFundingInstructions(
        quote.id,
        from,
        amounts.totalSendingAmount,
        awaitingFunds.reference,
      );
    }
    await transactional(this.orm, async (em) => {
      await this.repo.insert(em, quote);
      if (awaitingFunds) {
        await this.transactions.insert(em, awaitingFunds);
        // Quote created, awaiting the payer's funds: PENDING (OUTGOING_PAYMENT.PENDING).
        await this.deps.transfers.move(em, awaitingFunds, 'PENDING');
      }
      await this.deps.scheduler.schedule(
        {
          kind: QUOTE_JOBS.expire,
          id: `${QUOTE_JOBS.expire}:${quote.id}`,
          payload: { quoteId: quote.id },
          delayMs: this.deps.ttlMs,
          realTime: true,
        },
        em,
      );
    });
    if (!payer.embeddedWallet) return quote;
    // The wallet owner authorizes the execution: stamp payloadToSign, send it with POST /quotes/{id}/execute.
    const challenge = await this.deps.walletSignatures.challenge(
      quote.platformId,
      quote.source.accountId!,
      executeQuoteBody(quote.id),
    );
    const signed = await this.repo.setSigningRequest(
      this.orm.em.fork(),
      quote.id,
      challenge,
      this.clock.now(),
    );
    return (
      signed ?? { ...quote, signingRequestId: challenge.requestId, payloadToSign: challenge.payloadToSign }
    );
  }

  /**
   * GET /quotes/{id}: QUOTE_NOT_FOUND for an unknown or another platform's id.
   * A PENDING quote already past its expiry reads as EXPIRED (and is marked so)
   * even if the expiry job has not run yet.
   */
  async get(platformId: string, id: string): Promise<Quote> {
    const q = await this.repo.get(this.orm.em.fork(), platformId, id);
    if (!q) throw fail('QUOTE_NOT_FOUND', `Quote ${id} not found`, { quoteId: id });
    if (q.status === 'PENDING' && q.expiresAt.getTime() <= this.clock.now().getTime()) {
      const expired = await transactional(this.orm, (em) => this.expire(em, q.id));
      return expired ?? (await this.repo.get(this.orm.em.fork(), platformId, id))!;
    }
    return q;
  }

  /**
   * POST /quotes/{id}/execute. Exactly once per quote, whatever the retries:
   * 1. the hold `quote:<uuid>` on the source for totalSendingAmount towards CLEARING
   *    (idempotent by id: concurrent executes place one hold; INSUFFICIENT_FUNDS is
   *    thrown and the quote stays PENDING);
   * 2. the claim: `UPDATE quotes SET status = 'PROCESSING', transaction_id = ? WHERE
   *    status = 'PENDING' AND expires_at > now` in the same database transaction as
   *    the OUTGOING transaction's insert (one winner; transaction_id and the
   *    transaction's request key are unique) and its safety-net submission job;
   * 3. QuotePaymentsService books it (internal account) or hands it to the rail
   *    (external account, UMA address). A claim lost to the expiry releases the hold.
   * An EMBEDDED_WALLET source first needs wallet-auth to verify (and consume) the
   * wallet signature: its 401 passes through before anything is held; without any
   * signature header the answer is a fresh signing challenge (202). A quote already
   * executed is returned as it is. A REALTIME_FUNDING quote is not executed this way:
   * it executes when its funds arrive (POST /sandbox/send in the sandbox).
   */
  async execute(
    platformId: string,
    environment: Environment,
    quoteId: string,
    signature: ExecuteSignature = {},
  ): Promise<ExecuteOutcome> {
    const q = await this.get(platformId, quoteId);
    if (q.status === 'EXPIRED') throw this.expiredError(q);
    if (q.source.kind === 'REALTIME_FUNDING') {
      throw fail(
        'QUOTE_NOT_EXECUTABLE',
        'A REALTIME_FUNDING quote executes when its paymentInstructions are paid (in the sandbox: POST /sandbox/send)',
        { quoteId: q.id, sourceType: 'REALTIME_FUNDING' },
      );
    }
    if (q.status !== 'PENDING') return { quote: q };
    if (environment !== 'SANDBOX') {
      throw fail('RAIL_UNAVAILABLE', 'No payment rail is configured for production platforms yet');
    }
    // Recorded at creation; quotes older than that record ask accounts.
    const embeddedWallet =
      q.sourceEmbeddedWallet ??
      (await this.deps.accountTypes.typeOf(platformId, q.source.accountId!)) === 'EMBEDDED_WALLET';
    if (embeddedWallet && !signature.signature && !signature.requestId) {
      // The signed retry's step 1: a fresh signing request for this execution. The client stamps its
      // payloadToSign and repeats the execute with both headers. This is also how a client gets a new
      // request after a signed execute whose hold was refused (that request was consumed).
      const challenge = await this.deps.walletSignatures.challenge(
        platformId,
        q.source.accountId!,
        executeQuoteBody(q.id),
      );
      return { challenge };
    }
    // The destination is read again (a deleted or deactivated account is not paid), with the customer's id.
    const [counterpartyIdentifier, platformCustomerId] = await Promise.all([
      this.counterpartyOf(platformId, q.destination),
      q.customerId ? this.deps.customers.platformCustomerId(platformId, q.customerId) : undefined,
    ]);
    const customer =
      q.customerId && platformCustomerId ? { customerId: q.customerId, platformCustomerId } : undefined;
    if (embeddedWallet) {
      // Embedded-wallet funds move only with the wallet owner's signature: wallet-auth verifies and
      // consumes the signing request (single use) before anything is held; its 401 passes through.
      const requestId = signature.requestId ?? q.signingRequestId;
      await this.deps.walletSignatures.verify(platformId, q.source.accountId!, {
        bodyJson: executeQuoteBody(q.id),
        ...(signature.signature ? { signature: signature.signature } : {}),
        ...(requestId ? { requestId } : {}),
      });
    }
    const holdId = quoteEntries.base(q.id);
    await this.deps.ledger.placeHold({
      platformId,
      holdId,
      accountId: q.source.accountId!,
      amount: q.amounts.totalSendingAmount,
      currency: q.source.currency,
      counter: { system: 'CLEARING' },
      kind: 'QUOTE_EXECUTION',
      ...(q.description ? { description: q.description } : {}),
    });
    const transactionId = newId('Transaction');
    const claimed = await transactional(this.orm, async (em) => {
      const now = this.clock.now();
      const won = await this.repo.transition(em, q.id, 'PENDING', 'PROCESSING', now, {
        notExpiredAt: now,
        transactionId,
      });
      if (!won) return undefined;
      const t = this.newTransaction(won, { id: transactionId, holdId, counterpartyIdentifier, customer });
      await this.transactions.insert(em, t);
      // The hold is already placed: straight to PENDING (OUTGOING_PAYMENT.PENDING through the shared state machine).
      const pending = await this.deps.transfers.move(em, t, 'PENDING');
      await this.deps.quotePayments.scheduleSubmit(em, pending, environment);
      // Claimed: the expiry job has nothing left to do.
      await this.deps.scheduler.complete(em, `${QUOTE_JOBS.expire}:${q.id}`);
      return won;
    });
    if (!claimed) {
      const cur = (await this.repo.get(this.orm.em.fork(), platformId, quoteId))!;
      if (cur.transactionId) return { quote: cur };
      // Not claimed by anyone: the quote expired meanwhile.
      const expired = await transactional(this.orm, (em) => this.expire(em, cur.id));
      if (!expired) await this.releaseHold(cur);
      throw this.expiredError(cur);
    }
    await this.handOff(platformId, transactionId, environment, quoteId);
    return { quote: await this.get(platformId, quoteId) };
  }

  /**
   * POST /sandbox/send: the payer pays a REALTIME_FUNDING quote's instructions. The
   * funds arriving claim the quote (PENDING → PROCESSING, guarded against expiry) and
   * the payment proceeds as an execution (funding entry SETTLEMENT → CLEARING, then
   * the payout or booking). A quote already funded is answered with its transaction
   * as it is (nothing moves twice). Returns the OUTGOING transaction.
   */
  async sandboxSend(req: {
    platformId: string;
    environment: Environment;
    quoteId: string;
    currencyCode: string;
    amount?: bigint;
  }): Promise<Transaction> {
    if (req.environment !== 'SANDBOX') {
      throw fail('RAIL_UNAVAILABLE', 'POST /sandbox/send simulates a payer for sandbox platforms only');
    }
    const q = await this.get(req.platformId, req.quoteId);
    if (q.source.kind !== 'REALTIME_FUNDING' || !q.transactionId) {
      throw invalidInput([
        {
          field: 'quoteId',
          message:
            'is not funded in real time (its source is an internal account): execute it with POST /quotes/{quoteId}/execute',
        },
      ]);
    }
    if (q.status === 'EXPIRED') throw this.expiredError(q);
    const errors = [];
    if (req.currencyCode !== q.source.currency) {
      errors.push({
        field: 'currencyCode',
        message: `must be ${q.source.currency}, the quote's sending currency`,
      });
    }
    if (req.amount !== undefined && req.amount !== q.amounts.totalSendingAmount) {
      errors.push({
        field: 'currencyAmount',
        message: `must be ${q.amounts.totalSendingAmount}, the quote's totalSendingAmount (or be omitted)`,
      });
    }
    if (errors.length) throw invalidInput(errors);
    if (q.status === 'PENDING') {
      const claimed = await transactional(this.orm, async (em) => {
        const now = this.clock.now();
        const won = await this.repo.transition(em, q.id, 'PENDING', 'PROCESSING', now, { notExpiredAt: now });
        if (!won) return false;
        const t = await this.transactions.get(em, q.platformId, q.transactionId!, true);
        if (t) await this.deps.quotePayments.scheduleSubmit(em, t, req.environment);
        await this.deps.scheduler.complete(em, `${QUOTE_JOBS.expire}:${q.id}`);
        return true;
      });
      if (!claimed) {
        const cur = await this.get(req.platformId, req.quoteId);
        if (cur.status === 'EXPIRED') throw this.expiredError(cur);
      }
      await this.handOff(req.platformId, q.transactionId, req.environment, q.id);
    }
    return this.deps.transfers.get(req.platformId, q.transactionId);
  }

  /** Hands a claimed payment on; a failure is left to its safety-net job. */
  private async handOff(
    platformId: string,
    transactionId: string,
    environment: Environment,
    quoteId: string,
  ): Promise<void> {
    try {
      await this.deps.quotePayments.submit(platformId, transactionId, environment);
    } catch (err) {
      // The transaction exists and its submit safety-net job retries the hand-off.
      this.deps.logger.warn(
        { err, quoteId, transactionId },
        'payment hand-off failed; the submit job retries',
      );
    }
  }

  /** What the rail pays to: the external account's primary identifier or the UMA address; none for an internal account. */
  private async counterpartyOf(platformId: string, d: TransactionEndpoint): Promise<string | undefined> {
    if (d.kind === 'UMA_ADDRESS') return d.umaAddress;
    if (d.accountId?.startsWith('InternalAccount:')) {
      await this.deps.accounts.getInternalAccount(platformId, d.accountId);
      return undefined;
    }
    const external = await this.deps.accounts.getExternalAccount(platformId, d.accountId!);
    if (external.status !== 'ACTIVE') {
      throw fail('EXTERNAL_ACCOUNT_NOT_USABLE', `External account ${external.id} is not active`, {
        field: 'destination.accountId',
        status: external.status,
      });
    }
    return external.primaryIdentifier;
  }

  /** The OUTGOING transaction of a quote (CREATED; the caller inserts it and moves it on). */
  private newTransaction(
    q: Quote,
    o: {
      id: string;
      holdId?: string;
      counterpartyIdentifier: string | undefined;
      customer: { customerId: string; platformCustomerId: string } | undefined;
    },
  ): Transaction {
    const now = this.clock.now();
    return {
      id: o.id,
      platformId: q.platformId,
      type: 'OUTGOING',
      status: 'CREATED',
      source: q.source,
      destination: q.destination,
      ...(o.customer ?? {}),
      sentAmount: q.amounts.totalSendingAmount,
      receivedAmount: q.amounts.totalReceivingAmount,
      fees: q.amounts.feesIncluded,
      exchangeRate: q.amounts.exchangeRate,
      rateDetails: q.amounts.rateDetails,
      reference: newReference((n) => randomBytes(n)),
      ...(q.description !== undefined ? { description: q.description } : {}),
      counterpartyInformation: q.counterpartyInformation,
      quoteId: q.id,
      requestKey: `quote-execute:${q.id}`,
      ...(o.counterpartyIdentifier ? { counterpartyIdentifier: o.counterpartyIdentifier } : {}),
      ...(o.holdId ? { holdId: o.holdId } : {}),
      createdAt: now,
      updatedAt: now,
    };
  }

  /** Voids the execution hold of a quote that will never execute (no-op when none was placed). */
  private async releaseHold(q: Quote): Promise<void> {
    const holdId = quoteEntries.base(q.id);
    try {
      await this.deps.ledger.voidHold({ platformId: q.platformId, holdId, voidId: `${holdId}:void` });
    } catch (err) {
      if (isDomainError(err) && err.code === 'HOLD_NOT_FOUND') return;
      throw err;
    }
  }

  private expiredError(q: Quote) {
    return fail(
      'QUOTE_EXPIRED',
      `Quote ${q.id} expired at ${q.expiresAt.toISOString()}; create a new quote`,
      {
        quoteId: q.id,
        expiresAt: q.expiresAt.toISOString(),
      },
    );
  }

  /**
   * The payer of a quote: an internal account (its owner must match
   * `source.customerId` when given; EMBEDDED_WALLET noted) or, for real-time
   * funding, the customer (or the platform) paying in `currency`.
   */
  private async payerOf(req: CreateQuoteRequest): Promise<{
    endpoint: TransactionEndpoint;
    /** The customer on whose behalf the quote is made (platformCustomerId resolved for real-time funding). */
    customer: { customerId: string; platformCustomerId?: string } | undefined;
    embeddedWallet: boolean;
  }> {
    const src = req.source;
    if (src.kind === 'REALTIME_FUNDING') {
      if (!REALTIME_FUNDING_CURRENCIES.includes(src.currency)) {
        throw fail('UNSUPPORTED_CURRENCY', `Real-time funding in ${src.currency} is not available`, {
          field: 'source.currency',
          supported: REALTIME_FUNDING_CURRENCIES,
        });
      }
      const customer = src.customerId
        ? {
            customerId: src.customerId,
            platformCustomerId: await this.deps.customers.platformCustomerId(req.platformId, src.customerId),
          }
        : undefined;
      return {
        endpoint: { kind: 'REALTIME_FUNDING', currency: src.currency },
        customer,
        embeddedWallet: false,
      };
    }
    const account = await this.deps.accounts.getInternalAccount(req.platformId, src.accountId);
    if (src.customerId !== undefined && src.customerId !== account.customerId) {
      throw invalidInput([{ field: 'source.customerId', message: 'must be the owner of source.accountId' }]);
    }
    const embeddedWallet =
      (account.type ?? (await this.deps.accountTypes.typeOf(req.platformId, account.id))) ===
      'EMBEDDED_WALLET';
    return {
      endpoint: { kind: 'ACCOUNT', accountId: account.id, currency: account.currency },
      customer: account.customerId ? { customerId: account.customerId } : undefined,
      embeddedWallet,
    };
  }

  private async destinationOf(
    req: CreateQuoteRequest,
    payer: { endpoint: TransactionEndpoint; customer?: { customerId: string } | undefined },
  ): Promise<{
    destination: TransactionEndpoint;
    lookup?: ReceiverLookup;
    counterpartyInformation: Record<string, string>;
  }> {
    const d = req.destination;
    const customerId = payer.customer?.customerId;
    if (d.kind === 'UMA_ADDRESS') {
      if (!req.lookupId) {
        throw invalidInput([
          {
            field: 'lookupId',
            message: 'is required for UMA_ADDRESS destinations (GET /receiver/uma/{address})',
          },
        ]);
      }
      const lookup = await this.deps.lookups.get(req.platformId, req.lookupId);
      if (lookup.kind !== 'UMA' || lookup.receiverUmaAddress?.toLowerCase() !== d.umaAddress.toLowerCase()) {
        throw invalidInput([{ field: 'lookupId', message: `was not made for the receiver ${d.umaAddress}` }]);
      }
      this.checkLookupCustomer(lookup, customerId);
      const currency = d.currency ?? lookup.supportedCurrencies[0]?.currency;
      if (!currency || !lookup.supportedCurrencies.some((c) => c.currency === currency)) {
        throw fail('UNSUPPORTED_CURRENCY', `The receiver does not accept ${currency ?? 'any currency'}`, {
          field: 'destination.currency',
          supported: lookup.supportedCurrencies.map((c) => c.currency),
        });
      }
      return {
        destination: { kind: 'UMA_ADDRESS', umaAddress: lookup.receiverUmaAddress!, currency },
        lookup,
        counterpartyInformation: lookup.counterpartyName ? { FULL_NAME: lookup.counterpartyName } : {},
      };
    }
    let lookup: ReceiverLookup | undefined;
    if (req.lookupId) {
      lookup = await this.deps.lookups.get(req.platformId, req.lookupId);
      if (lookup.kind !== 'EXTERNAL_ACCOUNT' || lookup.externalAccountId !== d.accountId) {
        throw invalidInput([{ field: 'lookupId', message: `was not made for the account ${d.accountId}` }]);
      }
      this.checkLookupCustomer(lookup, customerId);
    }
    if (d.accountId.startsWith('InternalAccount:')) {
      if (d.paymentRail !== undefined) {
        throw invalidInput([
          {
            field: 'destination.paymentRail',
            message:
              'applies to external accounts only (a payment to an internal account is booked in the ledger)',
          },
        ]);
      }
      const account = await this.deps.accounts.getInternalAccount(req.platformId, d.accountId);
      if (account.id === payer.endpoint.accountId) {
        throw invalidInput([
          { field: 'destination.accountId', message: 'must differ from source.accountId' },
        ]);
      }
      return {
        destination: { kind: 'ACCOUNT', accountId: account.id, currency: account.currency },
        ...(lookup ? { lookup } : {}),
        counterpartyInformation: {},
      };
    }
    const account = await this.deps.accounts.getExternalAccount(req.platformId, d.accountId);
    if (account.status !== 'ACTIVE') {
      throw fail(
        'EXTERNAL_ACCOUNT_NOT_USABLE',
        `External account ${account.id} is ${account.status.toLowerCase()}, not active`,
        { field: 'destination.accountId', status: account.status },
      );
    }
    if ((account.customerId ?? null) !== (customerId ?? null)) {
      throw invalidInput([
        {
          field: 'destination.accountId',
          message: 'must belong to the same customer (or the platform) as the source account',
        },
      ]);
    }
    const { rail, error } = payoutRail(account.accountType, d.paymentRail);
    if (error) throw invalidInput([{ field: 'destination.paymentRail', message: error }]);
    return {
      destination: {
        kind: 'ACCOUNT',
        accountId: account.id,
        currency: account.currency,
        ...(rail ? { paymentRail: rail } : {}),
      },
      ...(lookup ? { lookup } : {}),
      counterpartyInformation: {},
    };
  }

  private checkLookupCustomer(lookup: ReceiverLookup, customerId: string | undefined): void {
    if (lookup.customerId && lookup.customerId !== customerId) {
      throw invalidInput([
        { field: 'lookupId', message: 'was made for another customer than the source account’s' },
      ]);
    }
  }

  private checkLimits(from: string, sending: bigint, to: string, receiving: bigint): void {
    const s = amountLimits(from);
    const r = amountLimits(to);
    const field = 'lockedCurrencyAmount';
    if (sending < s.min || receiving < r.min) {
      throw fail(
        'AMOUNT_TOO_SMALL',
        `The payment must send at least ${s.min} ${from} and receive at least ${r.min} ${to} minor units`,
        { field, minSendingAmount: String(s.min), minReceivingAmount: String(r.min) },
      );
    }
    if (sending > s.max || receiving > r.max) {
      throw fail(
        'AMOUNT_TOO_LARGE',
        `The payment may send at most ${s.max} ${from} and receive at most ${r.max} ${to} minor units`,
        { field, maxSendingAmount: String(s.max), maxReceivingAmount: String(r.max) },
      );
    }
  }
}
