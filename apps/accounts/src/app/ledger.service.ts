import { invalidInput, isDomainError, isId, newId, type Clock } from '@sluice/core';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import type { Counter, Metrics } from '@sluice/metrics';
import {
  accountNotFound,
  externalAccountNotFound,
  fail,
  holdAlreadyResolved,
  holdNotFound,
} from '../domain/errors.js';
import type { ExternalAccountRecord } from '../domain/external-account.js';
import { MAX_BALANCE, type InternalAccountRecord } from '../domain/internal-account.js';
import {
  assertPostWithinHold,
  assertValidEntry,
  entryFingerprint,
  holdEntry,
  holdFromEntries,
  isSystemAccountId,
  postHoldEntry,
  sandboxFundingEntry,
  systemAccountId,
  totalsDeltas,
  voidHoldEntry,
  type Hold,
  type JournalEntry,
  type JournalLine,
  type LedgerAccountRef,
} from '../domain/ledger.js';
import {
  validateHoldIds,
  validatePlaceHold,
  validatePlatformId,
  validatePostHold,
  validateSandboxFund,
  validateHoldPostEntry,
  validateTransfer,
  validateVoidHold,
  type PlaceHoldRequest,
  type TransferRequest,
  type ValidHold,
  type ValidTransfer,
} from '../domain/validation.js';
import { InternalAccountRepository } from '../store/internal-account.repository.js';
import { LedgerRepository, type HoldEntries, type TotalsMismatch } from '../store/ledger.repository.js';
import type { AccountEvents } from './ports.js';

export interface RecordResult {
  /** False when the entry already existed with the same content (a retry): nothing moved. */
  applied: boolean;
  /** When applied: the internal accounts whose running totals it moved, as they are after it. */
  accounts: InternalAccountRecord[];
  /** When it was recorded (its `created_at`). */
  at: Date;
}

/** A hold step's outcome: the hold now, its debited account now, and whether the step was a retry. */
export interface HoldResult {
  hold: Hold;
  account: InternalAccountRecord;
  replayed: boolean;
  /** PlaceHold's payee, when it named one. */
  payee?: ExternalAccountRecord;
}

/** How the ledger reads a hold's payee (the external accounts' repository). */
export interface PayeeReader {
  get(em: EntityManager, platformId: string, id: string): Promise<ExternalAccountRecord | undefined>;
  /** `get`'s read (parameters: platform id, account id), for the hold's own statement to embed. */
  readonly liveSql: string;
  /** A row of `liveSql` as `to_jsonb` returns it. */
  fromJsonRow(row: object): ExternalAccountRecord;
}

export interface TransferResult {
  entryId: string;
  replayed: boolean;
  /** The internal accounts of the lines after the entry, in line order. */
  accounts: InternalAccountRecord[];
}

export interface ReconcileReport {
  currencies: {
    currency: string;
    balances: bigint;
    lines: bigint;
    pendingDebits: bigint;
    pendingCredits: bigint;
    accounts: number;
  }[];
  mismatches: TotalsMismatch[];
  unbalancedEntryIds: string[];
  consistent: boolean;
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
    private readonly events: AccountEvents,
    /** Counts ReconcileLedger checks by result (`ledger_reconcile_checks_total`). */
    metrics?: Metrics,
    /** Reads PlaceHold's payee in the hold's transaction. */
    private readonly payees?: PayeeReader,
  ) {
    this.checks = metrics?.counter({
      name: 'ledger_reconcile_checks_total',
      help: 'ReconcileLedger checks of a platform ledger, by result (consistent or inconsistent)',
      labelNames: ['result'],
    });
  }

  private readonly accounts = new InternalAccountRepository();
  private readonly ledger = new LedgerRepository();
  private readonly checks: Counter<'result'> | undefined;

  /**
   * Records one entry in the caller's transaction. A retry (same platform and id,
   * same content) is a no-op; the same id with different content is
   * JOURNAL_ENTRY_CONFLICT. Wrap the transaction with `withLedgerErrors` so the
   * database's refusals (overdraft, balance limit, double resolution) become
   * domain errors. A resolution (POST_PENDING, VOID_PENDING) takes the lines of the
   * hold it resolves when the caller has them (read here otherwise).
   *
   * An entry that moves one internal account (a hold, its post or void towards a system
   * account, a funding, a capture into SETTLEMENT moves none) is one statement
   * (`LedgerRepository.writeEntry`), plus the balance event of a posted one.
   */
  async recordIn(
    em: EntityManager,
    entry: JournalEntry,
    pendingLines?: readonly JournalLine[],
  ): Promise<RecordResult> {
    assertValidEntry(entry);
    const fingerprint = entryFingerprint(entry);
    const now = this.clock.now();
    let pending: readonly JournalLine[] = [];
    if (entry.pendingEntryId !== undefined) {
      pending = pendingLines ?? (await this.pendingLinesOf(em, entry));
      if (entry.phase === 'POST_PENDING') assertPostWithinHold(entry, pending);
    }
    // System accounts keep no running totals (see isSystemAccountId): no hot row per platform and currency.
    const deltas = totalsDeltas(entry, pending).filter((d) => !isSystemAccountId(d.accountId));
    const posts = entry.phase === 'POSTED' || entry.phase === 'POST_PENDING';
    // System accounts are created on first use; a resolution's lines name the hold's accounts, which exist.
    const systemAccounts =
      entry.pendingEntryId === undefined
        ? entry.lines
            .filter((l) => isSystemAccountId(l.accountId))
            .map((l) => ({ id: l.accountId, currency: l.currency }))
        : [];
    const written = await this.ledger.writeEntry(em, entry, fingerprint, now, {
      systemAccounts,
      ...(deltas.length === 1 ? { totals: deltas[0], touch: posts } : {}),
    });
    if (!written.inserted) {
      // Not inserted: a committed entry has this id, or (a resolution) the hold was
      // resolved by another entry meanwhile. A new statement, so both are visible here.
      const existing = await this.ledger.getEntry(em, entry.platformId, entry.id);
      if (!existing) {
        const hold =
          entry.pendingEntryId !== undefined
            ? await this.ledger.getHoldEntries(em, entry.platformId, entry.pendingEntryId)
            : undefined;
        const resolved = hold && holdFromEntries(hold.entry, hold.lines, hold.resolution);
        if (resolved?.resolutionId !== undefined) throw holdAlreadyResolved(resolved);
        throw new Error(`journal entry ${entry.id} was neither inserted nor found`);
      }
      if (existing.fingerprint !== fingerprint) {
        throw fail(
          'JOURNAL_ENTRY_CONFLICT',
          `Journal entry ${entry.id} already exists with different content`,
          { entryId: entry.id },
        );
      }
      return { applied: false, accounts: [], at: now };
    }
    let accounts: InternalAccountRecord[] = [];
    if (deltas.length === 1) accounts = [written.account!];
    else if (deltas.length > 1) {
      // Several internal accounts (a transfer between two): their rows one at a time, in canonical order.
      await this.ledger.applyTotals(em, entry.platformId, deltas, now);
      const ids = deltas.map((d) => d.accountId);
      if (posts) await this.accounts.touch(em, ids, now);
      for (const id of ids) {
        const account = await this.accounts.get(em, entry.platformId, id);
        if (!account) throw new Error(`ledger line on ${id} has no internal account`);
        accounts.push(account);
      }
    }
    if (posts) {
      for (const l of entry.lines) {
        const account = accounts.find((a) => a.id === l.accountId);
        if (account) await this.events.balanceUpdated(em, account, now);
      }
    }
    return { applied: true, accounts, at: now };
  }

  /** The lines of the PENDING entry a resolution names (when its caller did not read the hold). */
  private async pendingLinesOf(em: EntityManager, entry: JournalEntry): Promise<JournalLine[]> {
    const pending = await this.ledger.getEntry(em, entry.platformId, entry.pendingEntryId!);
    if (!pending || pending.phase !== 'PENDING')
      throw new Error(
        `journal entry ${entry.id} resolves ${entry.pendingEntryId}, which is not a pending entry`,
      );
    return this.ledger.linesOf(em, entry.platformId, entry.pendingEntryId!);
  }

  /**
   * Sandbox only: credits `amount` to the account from the platform's sandbox funding
   * system account. `entryId` (default a new JournalEntry id) makes a retry a no-op.
   */
  async sandboxFund(
    platformId: string,
    accountId: string,
    amount: bigint,
    entryId?: string,
  ): Promise<SandboxFundResult> {
    validateSandboxFund({ platformId, accountId, amount, ...(entryId !== undefined ? { entryId } : {}) });
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
        const { applied, accounts } = await this.recordIn(em, entry);
        // A retry moved nothing: the account as read above.
        const after = applied ? accounts.find((a) => a.id === accountId)! : account;
        return { account: after, entryId: id, replayed: !applied };
      }),
    );
  }

  /**
   * Places a hold: one PENDING entry debiting the internal account towards the counter
   * account. The database refuses it when the available balance would go below zero.
   * A new hold towards a system account is one statement (`placeHoldAtOnce`); the
   * transaction below answers everything else (retries, refusals, internal counter accounts).
   */
  async placeHold(request: PlaceHoldRequest): Promise<HoldResult> {
    const o = validatePlaceHold(request);
    const payeeId = request.payeeExternalAccountId;
    const placed = await this.placeHoldAtOnce(o, payeeId);
    if (placed) return placed;
    return withLedgerErrors(() =>
      transactional(this.orm, async (em) => {
        // The payee first: an unknown or deleted one holds nothing.
        let payee: ExternalAccountRecord | undefined;
        if (payeeId !== undefined && this.payees) {
          payee = await this.payees.get(em, o.platformId, payeeId);
          if (!payee) throw externalAccountNotFound(payeeId);
        }
        const account = await this.accounts.get(em, o.platformId, o.accountId);
        if (!account) throw accountNotFound(o.accountId);
        if (account.currency !== o.currency)
          throw invalidInput([
            { field: 'currency', message: `must be the account's currency (${account.currency})` },
          ]);
        const counterAccountId = await this.resolveAccount(
          em,
          o.platformId,
          o.counterAccount,
          o.currency,
          'counterAccount',
        );
        if (counterAccountId === o.accountId)
          throw invalidInput([{ field: 'counterAccount', message: 'must differ from accountId' }]);
        const entry = holdEntry({ ...o, counterAccountId });
        const { applied, accounts, at } = await this.recordIn(em, entry);
        // Placed now: the hold is the entry just written, the account as its totals update returned it.
        const result: HoldResult = applied
          ? {
              hold: holdFromEntries({ ...entry, createdAt: at }, entry.lines)!,
              account: accounts.find((a) => a.id === o.accountId)!,
              replayed: false,
            }
          : await this.holdResult(em, o.platformId, o.holdId, true);
        return payee ? { ...result, payee } : result;
      }),
    );
  }

  /**
   * PlaceHold's common case in one statement, outside a transaction (no BEGIN or COMMIT, and none of
   * the reads of the transactional path): a new hold towards a system account, written only when the
   * account of the platform holds the currency and the payee, if named, is live (read by the same
   * statement). The database enforces what it always does (the available balance under the row
   * lock; one entry per id). Undefined when that statement placed nothing — a retry of the hold, a
   * check that failed, an internal counter account — or failed with anything but a refusal of the
   * ledger (a deadlock, a lost connection): the transactional path then answers, as it always did.
   */
  private async placeHoldAtOnce(o: ValidHold, payeeId: string | undefined): Promise<HoldResult | undefined> {
    if (!('system' in o.counterAccount)) return undefined;
    const counterAccountId = systemAccountId(o.platformId, o.counterAccount.system, o.currency);
    const entry = holdEntry({ ...o, counterAccountId });
    assertValidEntry(entry);
    const now = this.clock.now();
    const [totals] = totalsDeltas(entry).filter((d) => !isSystemAccountId(d.accountId));
    const payee = payeeId !== undefined ? this.payees : undefined;
    let written: Awaited<ReturnType<LedgerRepository['writeEntry']>>;
    try {
      written = await withLedgerErrors(() =>
        this.ledger.writeEntry(this.orm.em.fork(), entry, entryFingerprint(entry), now, {
          systemAccounts: [{ id: counterAccountId, currency: o.currency }],
          totals,
          gate: {
            accountId: o.accountId,
            currency: o.currency,
            ...(payee ? { payee: { sql: payee.liveSql, params: [o.platformId, payeeId] } } : {}),
          },
        }),
      );
    } catch (err) {
      if (isDomainError(err)) throw err;
      return undefined;
    }
    if (!written.inserted) return undefined;
    return {
      hold: holdFromEntries({ ...entry, createdAt: now }, entry.lines)!,
      account: written.account!,
      replayed: false,
      ...(payee && written.payee ? { payee: payee.fromJsonRow(written.payee) } : {}),
    };
  }

  /**
   * Posts `amount` (default: all) of a hold; resolves it once (another resolution id is a conflict).
   * `entry`: a posted entry (PostTransfer's rules) recorded first in the same transaction, so both
   * commit together or neither does.
   */
  async postHold(o: {
    platformId: string;
    holdId: string;
    postId: string;
    amount?: bigint;
    entry?: Omit<TransferRequest, 'platformId'>;
  }): Promise<HoldResult> {
    validatePostHold(o);
    const entry = o.entry && validateHoldPostEntry({ ...o.entry, platformId: o.platformId });
    const before = entry && ((em: EntityManager) => this.recordTransfer(em, entry));
    return this.resolveHold(o.platformId, o.holdId, o.postId, before, (hold) => {
      const amount = o.amount ?? hold.amount;
      if (amount > hold.amount)
        throw invalidInput([
          { field: 'amount', message: `must be at most the held amount (${hold.amount})` },
        ]);
      return postHoldEntry(hold, o.postId, amount);
    });
  }

  /** Voids a hold: releases it, nothing moves; resolves it once. */
  async voidHold(o: { platformId: string; holdId: string; voidId: string }): Promise<HoldResult> {
    validateVoidHold(o);
    return this.resolveHold(o.platformId, o.holdId, o.voidId, undefined, (hold) =>
      voidHoldEntry(hold, o.voidId),
    );
  }

  /** The hold and its state; HOLD_NOT_FOUND when the platform has no hold with this id. */
  async getHold(platformId: string, holdId: string): Promise<Hold> {
    validateHoldIds(platformId, holdId);
    return (await this.loadHold(this.orm.em.fork(), platformId, holdId)).hold;
  }

  /**
   * Records one posted entry of balanced lines over internal and system accounts
   * (structure and balance checked first, the accounts in the transaction). Internal
   * accounts may not go below zero or above the balance limit.
   */
  async postTransfer(request: TransferRequest): Promise<TransferResult> {
    const o = validateTransfer(request);
    return withLedgerErrors(() => transactional(this.orm, (em) => this.recordTransfer(em, o)));
  }

  /** A posted transfer entry in the caller's transaction (PostTransfer, or before a hold's post). */
  private async recordTransfer(em: EntityManager, o: ValidTransfer): Promise<TransferResult> {
    const lines: JournalLine[] = [];
    for (const [i, l] of o.lines.entries())
      lines.push({
        accountId: await this.resolveAccount(em, o.platformId, l.account, l.currency, `lines[${i}]`),
        currency: l.currency,
        amount: l.amount,
      });
    const recorded = await this.recordIn(em, {
      id: o.entryId,
      platformId: o.platformId,
      kind: o.kind,
      phase: 'POSTED',
      lines,
      ...(o.description !== undefined ? { description: o.description } : {}),
    });
    // Applied: the accounts as the entry left them; a retry reads them.
    const accounts: InternalAccountRecord[] = [];
    for (const l of lines) {
      if (!isId(l.accountId, 'InternalAccount')) continue;
      const after = recorded.accounts.find((a) => a.id === l.accountId);
      accounts.push(after ?? (await this.accounts.get(em, o.platformId, l.accountId))!);
    }
    return { entryId: o.entryId, replayed: !recorded.applied, accounts };
  }

  /** Recomputes the platform's ledger from its journal (read-only; in `em`'s transaction if given). */
  async reconcile(platformId: string, em: EntityManager = this.orm.em.fork()): Promise<ReconcileReport> {
    validatePlatformId(platformId);
    const currencies = await this.ledger.currencyTotals(em, platformId);
    const mismatches = await this.ledger.reconcile(em, platformId);
    const unbalancedEntryIds = await this.ledger.unbalancedEntries(em, platformId);
    const consistent =
      mismatches.length === 0 &&
      unbalancedEntryIds.length === 0 &&
      currencies.every((c) => c.balances === 0n && c.lines === 0n && c.pendingDebits === c.pendingCredits);
    this.checks?.inc({ result: consistent ? 'consistent' : 'inconsistent' });
    return { currencies, mismatches, unbalancedEntryIds, consistent };
  }

  private resolveHold(
    platformId: string,
    holdId: string,
    resolutionId: string,
    before: ((em: EntityManager) => Promise<unknown>) | undefined,
    build: (hold: Hold) => JournalEntry,
  ): Promise<HoldResult> {
    return withLedgerErrors(() =>
      transactional(this.orm, async (em) => {
        await before?.(em);
        const { hold, entries } = await this.loadHold(em, platformId, holdId);
        // Fast path of the database's guarantee (unique pending_entry_id), with a clearer message.
        if (hold.resolutionId !== undefined && hold.resolutionId !== resolutionId)
          throw holdAlreadyResolved(hold);
        const entry = build(hold);
        const { applied, accounts, at } = await this.recordIn(em, entry, entries.lines);
        if (!applied) return this.holdResult(em, platformId, holdId, true);
        // Resolved now: the hold as read with the entry just written, the account as its totals update returned it.
        const resolution = { id: entry.id, phase: entry.phase, createdAt: at, lines: entry.lines };
        return {
          hold: holdFromEntries(entries.entry, entries.lines, resolution)!,
          account: accounts.find((a) => a.id === hold.accountId)!,
          replayed: false,
        };
      }),
    );
  }

  private async holdResult(
    em: EntityManager,
    platformId: string,
    holdId: string,
    replayed: boolean,
  ): Promise<HoldResult> {
    const { hold } = await this.loadHold(em, platformId, holdId);
    const account = await this.accounts.get(em, platformId, hold.accountId);
    if (!account) throw new Error(`hold ${holdId} debits ${hold.accountId}, which has no internal account`);
    return { hold, account, replayed };
  }

  /** The hold and the entries it was read from (one statement). */
  private async loadHold(
    em: EntityManager,
    platformId: string,
    holdId: string,
  ): Promise<{ hold: Hold; entries: HoldEntries }> {
    const entries = await this.ledger.getHoldEntries(em, platformId, holdId);
    const hold = entries && holdFromEntries(entries.entry, entries.lines, entries.resolution);
    if (!hold || !isId(hold.accountId, 'InternalAccount')) throw holdNotFound(holdId);
    return { hold, entries: entries! };
  }

  /**
   * The ledger account id a caller names: an internal account of the platform in that
   * currency (INTERNAL_ACCOUNT_NOT_FOUND otherwise; another currency is a field error),
   * or the platform's system account for that currency (created by the first entry that names it).
   */
  private async resolveAccount(
    em: EntityManager,
    platformId: string,
    ref: LedgerAccountRef,
    currency: string,
    field: string,
  ): Promise<string> {
    if ('internalAccountId' in ref) {
      const a = await this.accounts.get(em, platformId, ref.internalAccountId);
      if (!a) throw accountNotFound(ref.internalAccountId);
      if (a.currency !== currency)
        throw invalidInput([
          { field, message: `${ref.internalAccountId} holds ${a.currency}, not ${currency}` },
        ]);
      return a.id;
    }
    // Created on first use by the entry that names it (recordIn).
    return systemAccountId(platformId, ref.system, currency);
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
    // Backstop only: recordIn's insert skips a conflicting resolution and reports it with details.
    if (text.includes('journal_entries_resolve_once'))
      throw fail('JOURNAL_ENTRY_CONFLICT', 'The pending entry was already posted or voided');
    throw err;
  }
}
