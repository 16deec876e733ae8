import { isId, newId, type Clock } from '@sluice/core';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import type { Outbox } from '@sluice/events';
import { accountNotFound, fail } from '../domain/errors.js';
import {
  MAX_BALANCE,
  toPublicInternalAccount,
  type InternalAccountRecord,
} from '../domain/internal-account.js';
import {
  assertPostWithinHold,
  assertValidEntry,
  entryFingerprint,
  sandboxFundingAccountId,
  sandboxFundingEntry,
  totalsDeltas,
  type JournalEntry,
  type JournalLine,
} from '../domain/ledger.js';
import { ACCOUNTS_EVENTS } from '../events/event-types.js';
import { InternalAccountRepository } from '../store/internal-account.repository.js';
import { LedgerRepository } from '../store/ledger.repository.js';

export interface RecordResult {
  /** False when the entry already existed with the same content (a retry): nothing moved. */
  applied: boolean;
}

export interface SandboxFundResult {
  account: InternalAccountRecord;
  entryId: string;
  replayed: boolean;
}

/**
 * Posts journal entries: header (unique id), lines, running totals and, when
 * posted balances of internal accounts move, their INTERNAL_ACCOUNT.BALANCE_UPDATED
 * events, all in one transaction.
 */
export class LedgerService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly outbox: Outbox,
    private readonly accounts = new InternalAccountRepository(),
    private readonly ledger = new LedgerRepository(),
  ) {}

  /**
   * Records one entry in the caller's transaction. A retry (same platform and id,
   * same content) is a no-op; the same id with different content is
   * JOURNAL_ENTRY_CONFLICT. Wrap the transaction with `withLedgerErrors` so the
   * database's refusals (overdraft, balance limit, double resolution) become
   * domain errors.
   */
  async recordIn(em: EntityManager, entry: JournalEntry): Promise<RecordResult> {
    assertValidEntry(entry);
    const fingerprint = entryFingerprint(entry);
    const now = this.clock.now();
    if (!(await this.ledger.insertEntry(em, entry, fingerprint, now))) {
      const existing = await this.ledger.getEntry(em, entry.platformId, entry.id);
      if (existing?.fingerprint !== fingerprint) {
        throw fail(
          'JOURNAL_ENTRY_CONFLICT',
          `Journal entry ${entry.id} already exists with different content`,
          { entryId: entry.id },
        );
      }
      return { applied: false };
    }
    let pendingLines: JournalLine[] = [];
    if (entry.pendingEntryId !== undefined) {
      const pending = await this.ledger.getEntry(em, entry.platformId, entry.pendingEntryId);
      if (!pending || pending.phase !== 'PENDING')
        throw new Error(
          `journal entry ${entry.id} resolves ${entry.pendingEntryId}, which is not a pending entry`,
        );
      pendingLines = await this.ledger.linesOf(em, entry.platformId, entry.pendingEntryId);
      if (entry.phase === 'POST_PENDING') assertPostWithinHold(entry, pendingLines);
    }
    await this.ledger.insertLines(em, entry);
    await this.ledger.applyTotals(em, entry.platformId, totalsDeltas(entry, pendingLines), now);
    if (entry.phase === 'POSTED' || entry.phase === 'POST_PENDING') {
      const moved = entry.lines.map((l) => l.accountId).filter((id) => isId(id, 'InternalAccount'));
      await this.accounts.touch(em, moved, now);
      for (const id of moved) {
        const account = await this.accounts.get(em, entry.platformId, id);
        if (!account) throw new Error(`ledger line on ${id} has no internal account`);
        await this.outbox.add(em, {
          type: ACCOUNTS_EVENTS.BALANCE_UPDATED,
          platformId: entry.platformId,
          data: toPublicInternalAccount(account),
          occurredAt: now,
        });
      }
    }
    return { applied: true };
  }

  /** Sandbox only: credits `amount` to the account from the platform's sandbox funding system account. */
  sandboxFund(
    platformId: string,
    accountId: string,
    amount: bigint,
    entryId?: string,
  ): Promise<SandboxFundResult> {
    const id = entryId || newId('JournalEntry');
    return withLedgerErrors(() =>
      transactional(this.orm, async (em) => {
        const account = await this.accounts.get(em, platformId, accountId);
        if (!account) throw accountNotFound(accountId);
        if (account.environment !== 'SANDBOX')
          throw fail('SANDBOX_ONLY', 'Only sandbox accounts can be funded this way');
        const entry = sandboxFundingEntry({
          entryId: id,
          platformId,
          accountId,
          currency: account.currency,
          amount,
        });
        await this.ledger.ensureSystemAccount(
          em,
          {
            id: sandboxFundingAccountId(platformId, account.currency),
            platformId,
            currency: account.currency,
          },
          this.clock.now(),
        );
        const { applied } = await this.recordIn(em, entry);
        const after = await this.accounts.get(em, platformId, accountId);
        return { account: after!, entryId: id, replayed: !applied };
      }),
    );
  }
}

/** Runs a ledger transaction, turning the database's refusals into domain errors. */
export async function withLedgerErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const text = `${(err as { constraint?: string }).constraint ?? ''} ${(err as Error).message ?? ''}`;
    if (text.includes('ledger_accounts_no_overdraft'))
      throw fail('INSUFFICIENT_FUNDS', 'The available balance of the account is too low');
    if (text.includes('ledger_accounts_balance_limit'))
      throw fail('BALANCE_LIMIT_EXCEEDED', `The balance of the account may not exceed ${MAX_BALANCE}`);
    if (text.includes('journal_entries_resolve_once'))
      throw fail('JOURNAL_ENTRY_CONFLICT', 'The pending entry was already posted or voided');
    throw err;
  }
}
