import { randomBytes } from 'node:crypto';
import { invalidInput, isId, newId, type Clock, type Environment } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import { transactional, type MikroORM } from '@sluice/store';
import { fail } from '../domain/errors.js';
import { quoteLedgerIds } from '../domain/ids.js';
import { jobIds } from '../domain/jobs.js';
import { quoteFollowing } from '../domain/state-machines.js';
import type { Quote } from '../domain/quote.js';
import type { ExecuteQuoteRequest, SandboxSendRequest } from '../domain/quote-request.js';
import { checkSandboxPayment, quoteExpired, quoteTransaction } from '../domain/quote-rules.js';
import { newReference, type Transaction, type TransactionEndpoint } from '../domain/transaction.js';
import type { JobScheduler } from '../store/job-scheduler.js';
import type { QuoteRepository } from '../store/quote.repository.js';
import type { JobLagAdmission } from './admission.js';
import type { Ledger, SigningChallenge, WalletSignatures } from './ports.js';
import type { FreshQuotes } from './fresh-quotes.js';
import type { QuoteExpiryService } from './quote-expiry.service.js';
import type { QuoteParties } from './quote-parties.js';
import type { QuotePaymentsService } from './quote-payments.service.js';
import type { TransactionLifecycle } from './transaction-lifecycle.js';
import type { TransactionsService } from './transactions.service.js';

/**
 * What an execute answers: the quote as it is after the call, or, for an EMBEDDED_WALLET source executed
 * without signature headers, a fresh signing challenge (nothing moved).
 */
export type ExecuteOutcome =
  { quote: Quote; challenge?: never } | { challenge: SigningChallenge; quote?: never };

/** The body an EXECUTE_QUOTE signing request binds. */
export const executeQuoteBody = (quoteId: string): string => JSON.stringify({ quoteId });

/**
 * The claim of a quote, exactly once whatever the retries: an execution (POST
 * /quotes/{id}/execute, an internal-account source) or the arrival of its funds (POST
 * /sandbox/send, a REALTIME_FUNDING source) moves it PENDING → PROCESSING, guarded against
 * its expiry, and hands its payment to QuotePaymentsService.
 */
export class QuoteExecutionService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly deps: {
      admission: JobLagAdmission;
      parties: QuoteParties;
      walletSignatures: WalletSignatures;
      ledger: Ledger;
      quotes: QuoteRepository;
      expiry: QuoteExpiryService;
      fresh: FreshQuotes;
      transactions: TransactionsService;
      lifecycle: TransactionLifecycle;
      quotePayments: QuotePaymentsService;
      scheduler: JobScheduler;
      logger: Logger;
    },
  ) {}

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
  async executeQuote(req: ExecuteQuoteRequest): Promise<ExecuteOutcome> {
    const { platformId, quoteId } = req;
    // A quote this process just created starts the execute as created (FreshQuotes), not read back.
    const fresh = this.deps.fresh.take(platformId, quoteId, this.clock.now());
    if (!fresh) return this.executeFrom(req, await this.deps.expiry.read(platformId, quoteId));
    try {
      return await this.executeFrom(req, fresh.quote, fresh.transaction);
    } catch (err) {
      // The quote may have moved on elsewhere since it was created here (another replica executed
      // it): answered as from the database — a quote no longer PENDING is returned as it is.
      const cur = await this.deps.expiry.read(platformId, quoteId);
      if (cur.status === 'PENDING') throw err;
      return this.executeFrom(req, cur);
    }
  }

  /** `created`: the quote's transaction as its creation (in this process) committed it, if kept. */
  private async executeFrom(req: ExecuteQuoteRequest, q: Quote, created?: Transaction): Promise<ExecuteOutcome> {
    const { platformId, environment, quoteId } = req;
    if (q.status === 'EXPIRED') throw quoteExpired(q);
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
    const sourceAccountId = q.source.accountId!;
    // Recorded at creation; quotes older than that record ask accounts.
    const embeddedWallet =
      q.sourceEmbeddedWallet ?? (await this.deps.parties.isEmbeddedWallet(platformId, sourceAccountId));
    if (embeddedWallet && !req.signature && !req.requestId) {
      // The signed retry's step 1: a fresh signing request for this execution. The client stamps its
      // payloadToSign and repeats the execute with both headers. This is also how a client gets a new
      // request after a signed execute whose hold was refused (that request was consumed).
      return {
        challenge: await this.deps.walletSignatures.challenge(
          platformId,
          sourceAccountId,
          executeQuoteBody(q.id),
        ),
      };
    }
    // A new payment: it waits while settlement is behind (refused after a while, nothing done yet),
    // before an embedded wallet's signature is consumed or anything is held.
    await this.deps.admission.admit();
    // The destination is read again (a deleted or deactivated account is not paid): an external
    // account by the hold's own call (accounts reads it in the hold's transaction; a deleted one holds
    // nothing), anything else now. The customer's platformCustomerId is needed only by a quote made
    // before quotes carried their transaction (which recorded it at creation).
    const payeeId = externalPayeeOf(q.destination);
    const [counterpartyBefore, platformCustomerId] = await Promise.all([
      payeeId ? undefined : this.deps.parties.counterpartyOf(platformId, q.destination),
      q.transactionId ? undefined : this.deps.parties.platformCustomerId(platformId, q.customerId),
    ]);
    const customer =
      q.customerId && platformCustomerId ? { customerId: q.customerId, platformCustomerId } : undefined;
    if (embeddedWallet) {
      // Embedded-wallet funds move only with the wallet owner's signature: wallet-auth verifies and
      // consumes the signing request (single use) before anything is held; its 401 passes through.
      const requestId = req.requestId ?? q.signingRequestId;
      await this.deps.walletSignatures.verify(platformId, sourceAccountId, {
        bodyJson: executeQuoteBody(q.id),
        ...(req.signature ? { signature: req.signature } : {}),
        ...(requestId ? { requestId } : {}),
      });
    }
    const holdId = quoteLedgerIds(q.id).hold;
    const { payee } = await this.deps.ledger.placeHold({
      platformId,
      holdId,
      accountId: sourceAccountId,
      amount: q.amounts.totalSendingAmount,
      currency: q.source.currency,
      counter: { system: 'CLEARING' },
      kind: 'QUOTE_EXECUTION',
      ...(q.description ? { description: q.description } : {}),
      ...(payeeId ? { payeeExternalAccountId: payeeId } : {}),
    });
    // A payee found but not usable is refused with the hold left in place: the quote stays PENDING,
    // so a later execute replays that hold and its expiry releases it (a hold voided now could be
    // replayed as placed). An accounts replica that does not read payees yet answers none: asked now.
    const counterpartyIdentifier = payeeId
      ? payee
        ? this.deps.parties.usablePayee(payee)
        : await this.deps.parties.counterpartyOf(platformId, q.destination)
      : counterpartyBefore;
    // Quotes carry their transaction from creation; one created before that was recorded gets it now.
    const transactionId = q.transactionId ?? newId('Transaction');
    const claimed = await transactional(this.orm, async (em) => {
      const now = this.clock.now();
      const won = await this.deps.quotes.transition(em, q.id, 'PENDING', 'PROCESSING', now, {
        notExpiredAt: now,
        ...(q.transactionId ? {} : { transactionId }),
      });
      if (!won) return undefined;
      // The transaction the quote's creation inserted: as kept then (written later only if unchanged
      // since: asSeen), else read under its lock.
      let pending = !q.transactionId
        ? undefined
        : created?.id === q.transactionId
          ? this.deps.lifecycle.asSeen(created)
          : await this.deps.transactions.find(platformId, transactionId, em, true);
      // An agent's approved action executes the quote: its transaction names the agent from now on.
      if (pending && req.agentId)
        pending = await this.deps.lifecycle.attributeToAgent(em, pending, req.agentId);
      if (!pending) {
        const t = quoteTransaction(won, {
          id: transactionId,
          reference: newReference((n) => randomBytes(n)),
          now,
          holdId,
          counterpartyIdentifier,
          customer,
          ...(req.agentId ? { agentId: req.agentId } : {}),
        });
        // The hold is already placed: straight to PENDING (OUTGOING_PAYMENT.PENDING).
        pending = await this.deps.lifecycle.recordMoved(em, t, 'PENDING');
      }
      await this.deps.quotePayments.scheduleSubmit(em, pending, environment);
      // Claimed: the expiry job has nothing left to do.
      await this.deps.scheduler.complete(em, jobIds.quoteExpire(q.id));
      return { quote: won, transaction: pending };
    });
    if (!claimed) {
      const cur = (await this.deps.quotes.get(this.orm.em.fork(), platformId, quoteId))!;
      // Claimed by a concurrent execute: answered as it is.
      if (cur.status !== 'PENDING' && cur.status !== 'EXPIRED') return { quote: cur };
      // Not claimed by anyone: the quote expired meanwhile; expiring it releases the hold placed above.
      await this.deps.expiry.expire(cur.id);
      throw quoteExpired(cur);
    }
    // The claim's own rows as committed: the hand-off need not read them again, and the answer is
    // the claimed quote as the hand-off's transaction moved it (read again only if the hand-off failed).
    const handed = await this.handOff(platformId, transactionId, environment, quoteId, claimed);
    return {
      quote: handed
        ? quoteFollowing(claimed.quote, handed)
        : await this.deps.expiry.read(platformId, quoteId),
    };
  }

  /**
   * POST /sandbox/send: the payer pays a REALTIME_FUNDING quote's instructions. The
   * funds arriving claim the quote (PENDING → PROCESSING, guarded against expiry) and
   * the payment proceeds as an execution (funding entry SETTLEMENT → CLEARING, then
   * the payout or booking). A quote already funded is answered with its transaction
   * as it is (nothing moves twice). Returns the OUTGOING transaction.
   */
  async sandboxSend(req: SandboxSendRequest): Promise<Transaction> {
    if (req.environment !== 'SANDBOX') {
      throw fail('RAIL_UNAVAILABLE', 'POST /sandbox/send simulates a payer for sandbox platforms only');
    }
    const q = await this.deps.expiry.read(req.platformId, req.quoteId);
    if (q.source.kind !== 'REALTIME_FUNDING' || !q.transactionId) {
      throw invalidInput([
        {
          field: 'quoteId',
          message:
            'is not funded in real time (its source is an internal account): execute it with POST /quotes/{quoteId}/execute',
        },
      ]);
    }
    if (q.status === 'EXPIRED') throw quoteExpired(q);
    checkSandboxPayment(q, req);
    const transactionId = q.transactionId;
    if (q.status === 'PENDING') {
      const claimed = await transactional(this.orm, async (em) => {
        const now = this.clock.now();
        const won = await this.deps.quotes.transition(em, q.id, 'PENDING', 'PROCESSING', now, {
          notExpiredAt: now,
        });
        if (!won) return false;
        const t = await this.deps.transactions.find(q.platformId, transactionId, em, true);
        if (t) await this.deps.quotePayments.scheduleSubmit(em, t, req.environment);
        await this.deps.scheduler.complete(em, jobIds.quoteExpire(q.id));
        return true;
      });
      if (!claimed) {
        const cur = await this.deps.expiry.read(req.platformId, req.quoteId);
        if (cur.status === 'EXPIRED') throw quoteExpired(cur);
      }
      const handed = await this.handOff(req.platformId, transactionId, req.environment, q.id);
      if (handed) return handed;
    }
    return this.deps.transactions.get(req.platformId, transactionId);
  }

  /** Hands a claimed payment on and returns its transaction then; a failure is left to its safety-net job. */
  private async handOff(
    platformId: string,
    transactionId: string,
    environment: Environment,
    quoteId: string,
    claimed?: { quote: Quote; transaction: Transaction },
  ): Promise<Transaction | undefined> {
    try {
      return await this.deps.quotePayments.submit(platformId, transactionId, environment, claimed);
    } catch (err) {
      // The transaction exists and its submit safety-net job retries the hand-off.
      this.deps.logger.warn(
        { err, quoteId, transactionId },
        'payment hand-off failed; the submit job retries',
      );
      return undefined;
    }
  }
}

/** The external account a quote pays to, if its destination is one. */
function externalPayeeOf(d: TransactionEndpoint): string | undefined {
  return d.kind === 'ACCOUNT' && isId(d.accountId, 'ExternalAccount') ? d.accountId : undefined;
}
