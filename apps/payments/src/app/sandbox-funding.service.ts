import { randomBytes } from 'node:crypto';
import { newId, type Clock } from '@sluice/core';
import { isUniqueViolation, transactional, type MikroORM } from '@sluice/store';
import { fail } from '../domain/errors.js';
import type { SandboxFundRequest } from '../domain/incoming-request.js';
import { JOB_KINDS, jobIds } from '../domain/jobs.js';
import { newReference, type Transaction } from '../domain/transaction.js';
import type { JobScheduler } from '../store/job-scheduler.js';
import type { AccountsPort, CustomerDirectory } from './ports.js';
import type { IncomingService } from './incoming.service.js';
import type { TransactionLifecycle } from './transaction-lifecycle.js';
import type { TransactionsService } from './transactions.service.js';

/**
 * POST /sandbox/internal-accounts/{id}/fund: money arriving from outside, as an INCOMING
 * transaction (source REALTIME_FUNDING in the account's currency) credited to the internal
 * account like an incoming payment that needs no approval — PROCESSING (a deposit the platform
 * asked for itself: no INCOMING_PAYMENT.PENDING approval request), then the credit from the
 * settlement account (IncomingService.complete: entry id derived from the transaction, its
 * safety-net job after a crash) and COMPLETED, with INCOMING_PAYMENT.COMPLETED. Every balance
 * change is therefore a transaction the platform can list. Sandbox platforms only.
 */
export class SandboxFundingService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly deps: {
      accounts: AccountsPort;
      customers: CustomerDirectory;
      transactions: TransactionsService;
      lifecycle: TransactionLifecycle;
      scheduler: JobScheduler;
      incoming: IncomingService;
    },
  ) {}

  async fund(req: SandboxFundRequest): Promise<Transaction> {
    if (req.environment !== 'SANDBOX')
      throw fail('RAIL_UNAVAILABLE', 'Sandbox funding simulates deposits for sandbox platforms only');
    const replay = await this.replay(req);
    if (replay) return this.deps.incoming.complete(req.platformId, replay.id);
    const account = await this.deps.accounts.getInternalAccount(req.platformId, req.accountId);
    const platformCustomerId = account.customerId
      ? await this.deps.customers.platformCustomerId(req.platformId, account.customerId)
      : undefined;
    const now = this.clock.now();
    const t: Transaction = {
      id: newId('Transaction'),
      platformId: req.platformId,
      type: 'INCOMING',
      status: 'CREATED',
      source: { kind: 'REALTIME_FUNDING', currency: account.currency },
      destination: { kind: 'ACCOUNT', accountId: account.id, currency: account.currency },
      ...(account.customerId && platformCustomerId
        ? { customerId: account.customerId, platformCustomerId }
        : {}),
      sentAmount: req.amount,
      receivedAmount: req.amount,
      fees: 0n,
      reference: newReference((n) => randomBytes(n)),
      description: 'Sandbox funding',
      counterpartyInformation: {},
      ...(req.requestKey ? { requestKey: req.requestKey } : {}),
      createdAt: now,
      updatedAt: now,
    };
    try {
      await transactional(this.orm, async (em) => {
        await this.deps.lifecycle.record(em, t);
        await this.deps.lifecycle.move(em, t, 'PROCESSING');
        // The safety net: credits the funding if this process dies before doing it below.
        await this.deps.scheduler.schedule(
          {
            kind: JOB_KINDS.incomingComplete,
            id: jobIds.incomingComplete(t.id),
            payload: { platformId: t.platformId, transactionId: t.id },
            delayMs: 0,
          },
          em,
        );
      });
    } catch (err) {
      if (!isUniqueViolation(err, 'transactions_request_key_unique')) throw err;
      const first = await this.replay(req);
      if (!first) throw err;
      return this.deps.incoming.complete(req.platformId, first.id);
    }
    return this.deps.incoming.complete(t.platformId, t.id);
  }

  /** The funding of this request key; the key reused for another funding is refused. */
  private async replay(req: SandboxFundRequest): Promise<Transaction | undefined> {
    if (!req.requestKey) return undefined;
    const t = await this.deps.transactions.byRequestKey(req.platformId, req.requestKey);
    if (!t) return undefined;
    if (
      t.type !== 'INCOMING' ||
      t.destination.accountId !== req.accountId ||
      t.receivedAmount !== req.amount
    ) {
      throw fail('IDEMPOTENCY_KEY_REUSED', 'This idempotency key was used for a different request', {
        transactionId: t.id,
      });
    }
    return t;
  }
}
