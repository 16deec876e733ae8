import { randomBytes } from 'node:crypto';
import { DomainError, isDomainError, newId, type Clock, type Environment } from '@sluice/core';
import { transactional, type MikroORM } from '@sluice/store';
import { fail } from '../domain/errors.js';
import type { ExchangeRateProvider } from '../domain/exchange-rates.js';
import { JOB_KINDS, jobIds } from '../domain/jobs.js';
import { sandboxFundingInstructions } from '../domain/payment-instructions.js';
import { computeQuoteAmounts, type FeeSchedule } from '../domain/pricing.js';
import type { Quote } from '../domain/quote.js';
import type { CreateQuoteRequest } from '../domain/quote-request.js';
import { checkImmediateExecution, checkPayerData, checkQuoteLimits, quoteTransaction } from '../domain/quote-rules.js';
import { newReference } from '../domain/transaction.js';
import type { JobScheduler } from '../store/job-scheduler.js';
import type { QuoteRepository } from '../store/quote.repository.js';
import type { WalletSignatures } from './ports.js';
import type { FreshQuotes } from './fresh-quotes.js';
import { executeQuoteBody, type QuoteExecutionService } from './quote-execution.service.js';
import type { QuoteParties } from './quote-parties.js';
import type { TransactionLifecycle } from './transaction-lifecycle.js';

/**
 * POST /quotes: resolve the payer and the payee, lock the exchange rate and fees
 * (computeQuoteAmounts, exact integers, customer-favouring rounding) and keep the quote
 * PENDING until `expiresAt` (a durable job expires it). Every quote is created with its OUTGOING
 * transaction (PENDING: the quote has been created), which its execution carries forward; a
 * REALTIME_FUNDING quote also gets its paymentInstructions, an EMBEDDED_WALLET source the signing
 * challenge its execution needs.
 */
export class QuoteCreationService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly deps: {
      parties: QuoteParties;
      rates: Record<Environment, ExchangeRateProvider>;
      fees: FeeSchedule;
      walletSignatures: WalletSignatures;
      quotes: QuoteRepository;
      lifecycle: TransactionLifecycle;
      scheduler: JobScheduler;
      execution: QuoteExecutionService;
      fresh: FreshQuotes;
      /** A quote's lifetime (QUOTE_TTL_SECONDS). */
      ttlMs: number;
    },
  ) {}

  /**
   * Creates a quote; with `immediatelyExecute`, executes it at once (refused before anything is
   * written for EMBEDDED_WALLET and REALTIME_FUNDING sources). An execution that fails names the
   * quote in its error: the quote exists, PENDING, and may be executed later.
   */
  async create(req: CreateQuoteRequest): Promise<Quote> {
    const quote = await this.createPending(req);
    if (!req.immediatelyExecute) return quote;
    try {
      // immediatelyExecute is refused at creation for EMBEDDED_WALLET sources, so no signing challenge here.
      const executed = await this.deps.execution.executeQuote({
        platformId: req.platformId,
        environment: req.environment,
        quoteId: quote.id,
      });
      return executed.quote ?? quote;
    } catch (err) {
      if (!isDomainError(err)) throw err;
      throw new DomainError(err.kind, err.code, `${err.message} (quote ${quote.id} was created and not executed)`, {
        ...err.details,
        quoteId: quote.id,
      });
    }
  }

  private async createPending(req: CreateQuoteRequest): Promise<Quote> {
    const payer = await this.deps.parties.payer(req);
    checkImmediateExecution(req, payer.embeddedWallet);
    // The customer's platformCustomerId (identity) is asked beside the payee's read (accounts), not
    // after it: one hop less of the create's latency. A refusal of the payee is still the answer.
    const customerRead = payer.customer?.platformCustomerId
      ? undefined
      : this.deps.parties.platformCustomerId(req.platformId, payer.customer?.customerId);
    customerRead?.catch(() => undefined); // awaited below; not an unhandled rejection if the payee fails first
    const { destination, lookup, counterpartyInformation, counterpartyIdentifier } = await this.deps.parties.payee(req, payer);
    if (lookup) checkPayerData(lookup, req.senderCustomerInfo);
    const from = payer.endpoint.currency;
    const to = destination.currency;
    if (from === to) {
      throw fail(
        'SAME_CURRENCY_QUOTE',
        `Source and destination are both in ${from}: use POST /transfer-out or POST /transfer-in for same-currency transfers`,
        { field: 'destination', currency: from },
      );
    }
    const rates = this.deps.rates[req.environment];
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
    checkQuoteLimits(from, amounts.totalSendingAmount, to, amounts.totalReceivingAmount);
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
    if (req.source.kind === 'REALTIME_FUNDING' && req.environment !== 'SANDBOX') {
      throw fail('RAIL_UNAVAILABLE', 'No real-time funding rail is configured for production platforms yet');
    }
    // The quote's OUTGOING transaction exists from now on, PENDING ("quote has been created"): it is
    // the one the execution (or the funds arriving) carries forward, and it EXPIREs with the quote.
    // The destination was read (and checked usable) by payee() just now: its identifier comes from that read.
    const platformCustomerId = payer.customer?.platformCustomerId ?? (await customerRead);
    const transaction = quoteTransaction(quote, {
      id: newId('Transaction'),
      reference: newReference((n) => randomBytes(n)),
      now,
      counterpartyIdentifier,
      customer: payer.customer && platformCustomerId ? { customerId: payer.customer.customerId, platformCustomerId } : undefined,
    });
    quote.transactionId = transaction.id;
    if (req.source.kind === 'REALTIME_FUNDING')
      quote.paymentInstructions = sandboxFundingInstructions(quote.id, from, amounts.totalSendingAmount, transaction.reference);
    const pending = await transactional(this.orm, async (em) => {
      await this.deps.quotes.insert(em, quote);
      // Quote created: PENDING (OUTGOING_PAYMENT.PENDING).
      const recorded = await this.deps.lifecycle.recordMoved(em, transaction, 'PENDING');
      await this.deps.scheduler.schedule(
        {
          kind: JOB_KINDS.quoteExpire,
          id: jobIds.quoteExpire(quote.id),
          payload: { quoteId: quote.id },
          delayMs: this.deps.ttlMs,
          realTime: true,
        },
        em,
      );
      return recorded;
    });
    if (!payer.embeddedWallet) {
      this.deps.fresh.remember(quote, pending);
      return quote;
    }
    // The wallet owner authorizes the execution: stamp payloadToSign, send it with POST /quotes/{id}/execute.
    const challenge = await this.deps.walletSignatures.challenge(quote.platformId, quote.source.accountId!, executeQuoteBody(quote.id));
    const signed = await this.deps.quotes.setSigningRequest(this.orm.em.fork(), quote.id, challenge, this.clock.now());
    return signed ?? { ...quote, signingRequestId: challenge.requestId, payloadToSign: challenge.payloadToSign };
  }
}
