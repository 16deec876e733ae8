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
import { UNSIMULATED_QUOTE_SUFFIXES } from '../domain/quote-rail.js';
import { sandboxSuffix } from '../domain/payment-rail.js';
import { missingPayerData, type ReceiverLookup } from '../domain/receiver-lookup.js';
import { newReference, type Transaction, type TransactionEndpoint } from '../domain/transaction.js';
import type { JobScheduler } from '../store/job-scheduler.js';
import { QuoteRepository } from '../store/quote.repository.js';
import { TransactionRepository } from '../store/transaction.repository.js';
import type { AccountsPort, CustomerDirectory, Ledger } from './ports.js';
import { TRANSFER_JOBS, type TransfersService } from './transfers.service.js';
import type { Environment, EnvironmentAdapters, ReceiverLookupsService } from './receiver-lookups.service.js';

/** A validated POST /quotes request (field syntax checked by the RPC layer). */
export interface CreateQuoteRequest {
  platformId: string;
  environment: Environment;
  sourceAccountId: string;
  sourceCustomerId?: string;
  destination:
    { kind: 'ACCOUNT'; accountId: string } | { kind: 'UMA_ADDRESS'; umaAddress: string; currency?: string };
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
  challenge(
    platformId: string,
    accountId: string,
    bodyJson: string,
  ): Promise<{ requestId: string; payloadToSign: string }>;
  verify(
    platformId: string,
    accountId: string,
    signed: { bodyJson: string; signature?: string; requestId?: string },
  ): Promise<void>;
}

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
  /** Moves a PROCESSING quote to COMPLETED/FAILED once its transaction ends (re-checks with backoff). */
  sync: 'quote.sync',
} as const;

/**
 * Quotes: resolve the source and the destination, lock the exchange rate and
 * fees (computeQuoteAmounts, exact integers, customer-favouring rounding) and
 * keep the quote PENDING until `expiresAt`; a durable job expires it.
 */
interface SyncPayload {
  platformId: string;
  quoteId: string;
  check: number;
}

/** The quote status a transaction's status implies, once it is final. */
function quoteOutcome(status: Transaction['status']): 'COMPLETED' | 'FAILED' | undefined {
  if (status === 'COMPLETED') return 'COMPLETED';
  if (status === 'FAILED' || status === 'REJECTED' || status === 'REFUNDED') return 'FAILED';
  return undefined;
}

/** The ledger hold of a quote's execution (derived from the quote, so every attempt uses the same one). */
const holdIdOf = (q: Pick<Quote, 'id'>): string => `quote:${q.id.slice('Quote:'.length)}`;

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
      ttlMs: number;
      logger: Logger;
    },
  ) {}

  /** Registers the quote jobs on the scheduler. */
  registerJobs(): void {
    this.deps.scheduler.register<SyncPayload>(QUOTE_JOBS.sync, async (job, em) => {
      const { platformId, quoteId } = job.payload;
      const q = await this.repo.get(em, platformId, quoteId, true);
      if (!q || q.status !== 'PROCESSING' || !q.transactionId) return;
      const t = await this.transactions.get(em, platformId, q.transactionId);
      const to = t ? quoteOutcome(t.status) : undefined;
      if (to) {
        await this.repo.transition(em, q.id, 'PROCESSING', to, this.clock.now());
        return;
      }
      await this.scheduleSync(em, q, job.payload.check + 1);
    });
    this.deps.scheduler.register<{ quoteId: string }>(QUOTE_JOBS.expire, async (job, em) => {
      const now = this.clock.now();
      const q = await this.repo.transition(em, job.payload.quoteId, 'PENDING', 'EXPIRED', now, {
        expiredAt: now,
      });
      if (q) {
        // An execute that placed the hold but lost the claim to the expiry leaves it open: release it.
        await this.releaseHold(q);
        this.deps.logger.info({ quoteId: q.id }, 'quote expired');
      }
    });
  }

  /** POST /quotes (`immediatelyExecute` is refused for EMBEDDED_WALLET sources before anything is written). */
  async create(req: CreateQuoteRequest & { immediatelyExecute?: boolean }): Promise<Quote> {
    const source = await this.deps.accounts.getInternalAccount(req.platformId, req.sourceAccountId);
    const embeddedWallet =
      (await this.deps.accountTypes.typeOf(req.platformId, source.id)) === 'EMBEDDED_WALLET';
    if (req.immediatelyExecute && embeddedWallet) {
      throw invalidInput([
        {
          field: 'immediatelyExecute',
          message:
            'is not available for an EMBEDDED_WALLET source: create the quote, then execute it with the wallet signature',
        },
      ]);
    }
    if (req.sourceCustomerId !== undefined && req.sourceCustomerId !== source.customerId) {
      throw invalidInput([{ field: 'source.customerId', message: 'must be the owner of source.accountId' }]);
    }
    const { destination, lookup, counterpartyInformation } = await this.destinationOf(req, source.customerId);
    if (lookup) {
      const missing = missingPayerData(lookup, req.senderCustomerInfo);
      if (missing.length) {
        throw invalidInput(
          missing.map((name) => ({
            field: `senderCustomerInfo.${name}`,
            message: 'is required by the receiver (requiredPayerDataFields of the lookup)',
          })),
        );
      }
    }
    const from = source.currency;
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
    for (const [field, code] of [
      ['source.accountId', from],
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
      source: { kind: 'ACCOUNT', accountId: source.id, currency: from },
      destination,
      ...(source.customerId ? { customerId: source.customerId } : {}),
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
    await transactional(this.orm, async (em) => {
      await this.repo.insert(em, quote);
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
    if (!embeddedWallet) return quote;
    // The wallet owner authorizes the execution: stamp payloadToSign, send it with POST /quotes/{id}/execute.
    const challenge = await this.deps.walletSignatures.challenge(
      quote.platformId,
      source.id,
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
    const em = this.orm.em.fork();
    const q = await this.repo.get(em, platformId, id);
    if (!q) throw fail('QUOTE_NOT_FOUND', `Quote ${id} not found`, { quoteId: id });
    const now = this.clock.now();
    if (q.status === 'PENDING' && q.expiresAt.getTime() <= now.getTime()) {
      const expired = await this.repo.transition(em, q.id, 'PENDING', 'EXPIRED', now, { expiredAt: now });
      if (expired) await this.releaseHold(expired);
      return expired ?? (await this.repo.get(em, platformId, id))!;
    }
    return this.sync(q);
  }

  /**
   * POST /quotes/{id}/execute. Exactly once per quote, whatever the retries:
   * 1. the hold `quote:<uuid>` on the source for totalSendingAmount (idempotent by id: concurrent
   *    executes place one hold; INSUFFICIENT_FUNDS is thrown and the quote stays PENDING);
   * 2. the claim: `UPDATE quotes SET status = 'PROCESSING', transaction_id = ? WHERE status = 'PENDING'
   *    AND expires_at > now` in the same database transaction as the OUTGOING transaction's insert
   *    (one winner; transaction_id and the transaction's request key are unique);
   * 3. the transaction is handed to the rail through TransfersService (its state machine, webhooks,
   *    settlement job and submit safety net). A claim lost to the expiry releases the hold.
   * An EMBEDDED_WALLET source first needs wallet-auth to verify (and consume) the wallet signature:
   * its 401 passes through before anything is held.
   * A quote already executed is returned as it is.
   */
  async execute(
    platformId: string,
    environment: Environment,
    quoteId: string,
    signature: ExecuteSignature = {},
  ): Promise<Quote> {
    const q = await this.get(platformId, quoteId);
    if (q.status === 'EXPIRED') throw this.expiredError(q);
    if (q.status !== 'PENDING') return q;
    if (environment !== 'SANDBOX') {
      throw fail('RAIL_UNAVAILABLE', 'No payment rail is configured for production platforms yet');
    }
    const dest = q.destination;
    if (dest.kind !== 'ACCOUNT' || !dest.accountId?.startsWith('ExternalAccount:')) {
      throw fail(
        'QUOTE_NOT_EXECUTABLE',
        'Executing quotes to internal accounts or UMA addresses is not available yet; only external-account destinations can be executed',
        { quoteId: q.id, destinationType: dest.kind },
      );
    }
    const embeddedWallet =
      (await this.deps.accountTypes.typeOf(platformId, q.source.accountId!)) === 'EMBEDDED_WALLET';
    const external = await this.deps.accounts.getExternalAccount(platformId, dest.accountId);
    if (external.status !== 'ACTIVE') {
      throw fail('EXTERNAL_ACCOUNT_NOT_USABLE', `External account ${external.id} is not active`, {
        field: 'destination.accountId',
        status: external.status,
      });
    }
    const suffix = sandboxSuffix(external.primaryIdentifier);
    if (suffix && UNSIMULATED_QUOTE_SUFFIXES.includes(suffix)) {
      throw fail(
        'QUOTE_NOT_EXECUTABLE',
        `The sandbox outcome ${suffix} (returned payment, user cancellation, failed refund) is not simulated yet`,
        { quoteId: q.id, field: 'destination.accountId' },
      );
    }
    const customer = q.customerId
      ? {
          customerId: q.customerId,
          platformCustomerId: await this.deps.customers.platformCustomerId(platformId, q.customerId),
        }
      : undefined;
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
    const holdId = holdIdOf(q);
    await this.deps.ledger.placeHold({
      platformId,
      holdId,
      accountId: q.source.accountId!,
      amount: q.amounts.totalSendingAmount,
      currency: q.source.currency,
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
      await this.insertTransaction(em, won, {
        id: transactionId,
        holdId,
        counterpartyIdentifier: external.primaryIdentifier,
        environment,
        customer,
      });
      return won;
    });
    if (!claimed) {
      const cur = (await this.repo.get(this.orm.em.fork(), platformId, quoteId))!;
      if (cur.transactionId) return this.sync(cur);
      // Not claimed by anyone: the quote expired meanwhile.
      const now = this.clock.now();
      await this.repo.transition(this.orm.em.fork(), cur.id, 'PENDING', 'EXPIRED', now, { expiredAt: now });
      await this.releaseHold(cur);
      throw this.expiredError(cur);
    }
    try {
      await this.deps.transfers.submit(platformId, transactionId, environment);
    } catch (err) {
      // The transaction exists and its submit safety-net job retries the hand-off.
      this.deps.logger.warn({ err, quoteId, transactionId }, 'rail hand-off failed; the submit job retries');
    }
    return this.get(platformId, quoteId);
  }

  /** A PROCESSING quote follows its transaction: COMPLETED when it completes, FAILED when it fails. */
  private async sync(q: Quote): Promise<Quote> {
    if (q.status !== 'PROCESSING' || !q.transactionId) return q;
    const t = await this.deps.transfers.get(q.platformId, q.transactionId);
    const to = quoteOutcome(t.status);
    if (!to) return q;
    const em = this.orm.em.fork();
    return (
      (await this.repo.transition(em, q.id, 'PROCESSING', to, this.clock.now())) ??
      (await this.repo.get(em, q.platformId, q.id))!
    );
  }

  private async insertTransaction(
    em: EntityManager,
    q: Quote,
    o: {
      id: string;
      holdId: string;
      counterpartyIdentifier: string;
      environment: Environment;
      customer: { customerId: string; platformCustomerId: string } | undefined;
    },
  ): Promise<void> {
    const { id, holdId, counterpartyIdentifier, environment } = o;
    const now = this.clock.now();
    const t: Transaction = {
      id,
      platformId: q.platformId,
      type: 'OUTGOING',
      status: 'CREATED',
      source: q.source,
      destination: q.destination,
      ...(o.customer ?? {}),
      sentAmount: q.amounts.totalSendingAmount,
      receivedAmount: q.amounts.totalReceivingAmount,
      fees: q.amounts.feesIncluded,
      reference: newReference((n) => randomBytes(n)),
      ...(q.description !== undefined ? { description: q.description } : {}),
      counterpartyInformation: q.counterpartyInformation,
      quoteId: q.id,
      requestKey: `quote-execute:${q.id}`,
      counterpartyIdentifier,
      holdId,
      createdAt: now,
      updatedAt: now,
    };
    await this.transactions.insert(em, t);
    await this.scheduleSync(em, q, 1);
    // The hold is already placed: straight to PENDING (OUTGOING_PAYMENT.PENDING through the shared state machine).
    await this.deps.transfers.move(em, t, 'PENDING');
    await this.deps.scheduler.schedule(
      {
        kind: TRANSFER_JOBS.submit,
        id: `${TRANSFER_JOBS.submit}:${t.id}`,
        payload: { platformId: t.platformId, transactionId: t.id, environment },
        delayMs: 30_000,
        realTime: true,
      },
      em,
    );
  }

  private async scheduleSync(em: EntityManager, q: Quote, check: number): Promise<void> {
    const payload: SyncPayload = { platformId: q.platformId, quoteId: q.id, check };
    await this.deps.scheduler.schedule(
      {
        kind: QUOTE_JOBS.sync,
        id: `${QUOTE_JOBS.sync}:${q.id}:${check}`,
        payload: { ...payload },
        // 2 s, 4 s, ... capped at 60 s (sandbox-scaled like the rail's delays).
        delayMs: Math.min(1000 * 2 ** Math.min(check, 6), 60_000),
      },
      em,
    );
  }

  /** Voids the execution hold of a quote that will never execute (no-op when none was placed). */
  private async releaseHold(q: Quote): Promise<void> {
    const holdId = holdIdOf(q);
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

  private async destinationOf(
    req: CreateQuoteRequest,
    customerId: string | undefined,
  ): Promise<{
    destination: TransactionEndpoint;
    lookup?: ReceiverLookup;
    counterpartyInformation: Record<string, string>;
  }> {
    const d = req.destination;
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
      const account = await this.deps.accounts.getInternalAccount(req.platformId, d.accountId);
      if (account.id === req.sourceAccountId) {
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
    return {
      destination: { kind: 'ACCOUNT', accountId: account.id, currency: account.currency },
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
