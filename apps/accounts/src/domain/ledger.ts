import { createHash } from 'node:crypto';
import { isId, MAX_AMOUNT } from '@sluice/core';

/**
 * The ledger: double-entry journal entries over ledger accounts.
 *
 * A line's `amount` is signed: positive credits the account, negative debits it.
 * Every entry balances per currency (its lines sum to zero in each currency), so
 * the balances of all accounts in a currency always sum to zero. An internal
 * account's balance is its credits minus its debits (what the platform owes its
 * holder); system accounts stand for the outside world and go negative.
 *
 * Phases (two-phase transfers, as TigerBeetle's):
 * - POSTED: the lines move posted balances at once.
 * - PENDING: a hold; the lines count as pending debits/credits. The available
 *   balance is posted credits − posted debits − pending debits.
 * - POST_PENDING: resolves a PENDING entry (`pendingEntryId`): releases all its
 *   pending amounts and posts this entry's lines (at most the held amounts).
 * - VOID_PENDING: resolves a PENDING entry by releasing it; no lines.
 * A pending entry is resolved at most once (unique key on `pendingEntryId`).
 */
export type EntryPhase = 'POSTED' | 'PENDING' | 'POST_PENDING' | 'VOID_PENDING';

/** Business reason of an entry; later issues add theirs (transfers, payments, fees). */
export type EntryKind = 'SANDBOX_FUNDING' | (string & {});

export interface JournalLine {
  accountId: string;
  currency: string;
  /** > 0 credits the account, < 0 debits it. */
  amount: bigint;
}

export interface JournalEntry {
  /** Unique per platform; a second entry with the same id is a retry. */
  id: string;
  platformId: string;
  kind: EntryKind;
  phase: EntryPhase;
  pendingEntryId?: string;
  lines: JournalLine[];
  description?: string;
}

/** Caller-supplied entry ids: 1-200 characters of [A-Za-z0-9:._-]. */
export const ENTRY_ID_PATTERN = /^[A-Za-z0-9:._-]{1,200}$/;

/**
 * Checks the invariants every entry must hold before it is written; a failure is a
 * programming error (the database re-checks balance at commit).
 */
export function assertValidEntry(entry: JournalEntry): void {
  if (!ENTRY_ID_PATTERN.test(entry.id))
    throw new Error(`journal entry id ${JSON.stringify(entry.id)} is malformed`);
  const resolves = entry.phase === 'POST_PENDING' || entry.phase === 'VOID_PENDING';
  if (resolves !== (entry.pendingEntryId !== undefined))
    throw new Error(
      `journal entry ${entry.id}: pendingEntryId is required exactly for POST_PENDING and VOID_PENDING`,
    );
  if (entry.phase === 'VOID_PENDING') {
    if (entry.lines.length) throw new Error(`journal entry ${entry.id}: a void has no lines`);
    return;
  }
  if (entry.lines.length < 2) throw new Error(`journal entry ${entry.id} needs at least two lines`);
  const seen = new Set<string>();
  const sums = new Map<string, bigint>();
  for (const l of entry.lines) {
    if (l.amount === 0n) throw new Error(`journal entry ${entry.id}: zero line on ${l.accountId}`);
    if (l.amount > MAX_AMOUNT || l.amount < -MAX_AMOUNT)
      throw new Error(`journal entry ${entry.id}: line amount out of range`);
    if (seen.has(l.accountId))
      throw new Error(`journal entry ${entry.id}: account ${l.accountId} appears twice`);
    seen.add(l.accountId);
    sums.set(l.currency, (sums.get(l.currency) ?? 0n) + l.amount);
  }
  for (const [cur, sum] of sums)
    if (sum !== 0n) throw new Error(`journal entry ${entry.id} does not balance in ${cur} (off by ${sum})`);
}

/** Lines in a canonical order (by account id): the order rows are written and locked in, which avoids deadlocks. */
export function canonicalLines(lines: readonly JournalLine[]): JournalLine[] {
  return [...lines].sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0));
}

/**
 * A digest of what the entry does (not of its id): a retry with the same id must
 * carry the same content, otherwise it is a conflict, not a no-op.
 */
export function entryFingerprint(entry: JournalEntry): string {
  const canonical = JSON.stringify({
    kind: entry.kind,
    phase: entry.phase,
    pendingEntryId: entry.pendingEntryId ?? null,
    lines: canonicalLines(entry.lines).map((l) => [l.accountId, l.currency, l.amount.toString()]),
  });
  return createHash('sha256').update(canonical).digest('hex');
}

/** Changes of an account's running totals (all non-negative increments, except releases which are negative). */
export interface TotalsDelta {
  accountId: string;
  currency: string;
  postedDebits: bigint;
  postedCredits: bigint;
  pendingDebits: bigint;
  pendingCredits: bigint;
}

/**
 * How an entry moves each account's running totals. `pendingLines` are the lines of
 * the PENDING entry a POST_PENDING/VOID_PENDING resolves (released in full).
 * Returned in canonical account order.
 */
export function totalsDeltas(entry: JournalEntry, pendingLines: readonly JournalLine[] = []): TotalsDelta[] {
  const byAccount = new Map<string, TotalsDelta>();
  const delta = (l: JournalLine): TotalsDelta => {
    let d = byAccount.get(l.accountId);
    if (!d)
      byAccount.set(
        l.accountId,
        (d = {
          accountId: l.accountId,
          currency: l.currency,
          postedDebits: 0n,
          postedCredits: 0n,
          pendingDebits: 0n,
          pendingCredits: 0n,
        }),
      );
    return d;
  };
  for (const l of entry.lines) {
    const d = delta(l);
    if (entry.phase === 'PENDING') {
      if (l.amount < 0n) d.pendingDebits += -l.amount;
      else d.pendingCredits += l.amount;
    } else {
      if (l.amount < 0n) d.postedDebits += -l.amount;
      else d.postedCredits += l.amount;
    }
  }
  if (entry.phase === 'POST_PENDING' || entry.phase === 'VOID_PENDING') {
    for (const l of pendingLines) {
      const d = delta(l);
      if (l.amount < 0n) d.pendingDebits -= -l.amount;
      else d.pendingCredits -= l.amount;
    }
  }
  return [...byAccount.values()].sort((a, b) =>
    a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0,
  );
}

/**
 * Checks a POST_PENDING against the entry it resolves: same accounts and
 * currencies, each line with the same sign and at most the held amount.
 */
export function assertPostWithinHold(post: JournalEntry, pendingLines: readonly JournalLine[]): void {
  const held = new Map(pendingLines.map((l) => [l.accountId, l]));
  for (const l of post.lines) {
    const h = held.get(l.accountId);
    if (
      !h ||
      h.currency !== l.currency ||
      h.amount < 0n !== l.amount < 0n ||
      (l.amount < 0n ? -l.amount : l.amount) > (h.amount < 0n ? -h.amount : h.amount)
    ) {
      throw new Error(
        `journal entry ${post.id}: line on ${l.accountId} exceeds or does not match the hold ${post.pendingEntryId}`,
      );
    }
  }
}

/**
 * The id of a system account: `system:<name>:<CUR>:<platformId>`, `<name>` the lower-cased
 * SystemAccountName or `sandbox-funding`. Built only by `systemAccountId` and
 * `sandboxFundingAccountId`, read only by `isSystemAccountId` and `refOfLedgerAccountId`.
 */
export type SystemAccountId = `system:${string}:${string}:${string}`;

const SYSTEM_ACCOUNT_ID = /^system:([a-z-]+):([A-Z0-9]+):(.+)$/;

function buildSystemAccountId(name: string, currency: string, platformId: string): SystemAccountId {
  return `system:${name}:${currency}:${platformId}`;
}

/** Id of a platform's system account standing for the sandbox's outside world in a currency. */
export function sandboxFundingAccountId(platformId: string, currency: string): SystemAccountId {
  return buildSystemAccountId('sandbox-funding', currency, platformId);
}

/** The entry crediting `amount` to an internal account from the platform's sandbox funding account. */
export function sandboxFundingEntry(o: {
  entryId: string;
  platformId: string;
  accountId: string;
  currency: string;
  amount: bigint;
}): JournalEntry {
  return {
    id: o.entryId,
    platformId: o.platformId,
    kind: 'SANDBOX_FUNDING',
    phase: 'POSTED',
    lines: [
      {
        accountId: sandboxFundingAccountId(o.platformId, o.currency),
        currency: o.currency,
        amount: -o.amount,
      },
      { accountId: o.accountId, currency: o.currency, amount: o.amount },
    ],
    description: 'Sandbox funding',
  };
}

/**
 * System accounts a caller may name (one per platform and currency, created on first use,
 * allowed to go negative): SETTLEMENT is the outside world reached through payment rails,
 * FEES the operator's fee revenue, FX the meeting point of the two legs of a conversion,
 * CLEARING the funds received or captured for a payment and not yet applied (between the
 * source being debited, or real-time funding arriving, and the conversion/payout; and
 * after a returned payout until it is refunded): a non-zero CLEARING balance is money
 * owed that is in transit.
 */
export type SystemAccountName = 'SETTLEMENT' | 'FEES' | 'FX' | 'CLEARING';
export const SYSTEM_ACCOUNT_NAMES: readonly SystemAccountName[] = ['SETTLEMENT', 'FEES', 'FX', 'CLEARING'];

/**
 * System accounts (ids `system:...`) keep no running totals: nothing is checked against
 * their balances (they may go negative), and updating one row per platform and currency
 * on every entry would serialize all of the platform's payments in that currency on it.
 * Their balances are derived from their journal lines when needed (reconciliation).
 */
export function isSystemAccountId(id: string): id is SystemAccountId {
  return SYSTEM_ACCOUNT_ID.test(id);
}

/** Id of a platform's named system account in a currency: `system:<name>:<CUR>:<platformId>`. */
export function systemAccountId(
  platformId: string,
  name: SystemAccountName,
  currency: string,
): SystemAccountId {
  return buildSystemAccountId(name.toLowerCase(), currency, platformId);
}

/** A ledger account as callers name it: an internal account, or a system account. */
export type LedgerAccountRef = { internalAccountId: string } | { system: SystemAccountName };

/** The caller-facing reference of a ledger account id (undefined for ids callers cannot name, e.g. sandbox funding). */
export function refOfLedgerAccountId(id: string): LedgerAccountRef | undefined {
  if (isId(id, 'InternalAccount')) return { internalAccountId: id };
  const name = SYSTEM_ACCOUNT_ID.exec(id)?.[1];
  const system = SYSTEM_ACCOUNT_NAMES.find((n) => n.toLowerCase() === name);
  return system ? { system } : undefined;
}

/** Business reasons given by callers: [A-Z0-9_]{1,64} (QUOTE_EXECUTION, TRANSFER_OUT, ...). */
export const KIND_PATTERN = /^[A-Z0-9_]{1,64}$/;

export type HoldStatus = 'PENDING' | 'POSTED' | 'VOIDED';

/** A hold as the ledger records it: one PENDING entry debiting `accountId` towards `counterAccountId`, and its resolution. */
export interface Hold {
  id: string;
  platformId: string;
  accountId: string;
  counterAccountId: string;
  currency: string;
  amount: bigint;
  kind: string;
  description?: string;
  createdAt: Date;
  status: HoldStatus;
  postedAmount?: bigint;
  resolutionId?: string;
  resolvedAt?: Date;
}

/** The PENDING entry of a hold: −amount on the account, +amount on the counter account. */
export function holdEntry(o: {
  holdId: string;
  platformId: string;
  accountId: string;
  counterAccountId: string;
  currency: string;
  amount: bigint;
  kind: string;
  description?: string;
}): JournalEntry {
  return {
    id: o.holdId,
    platformId: o.platformId,
    kind: o.kind,
    phase: 'PENDING',
    lines: [
      { accountId: o.accountId, currency: o.currency, amount: -o.amount },
      { accountId: o.counterAccountId, currency: o.currency, amount: o.amount },
    ],
    ...(o.description !== undefined ? { description: o.description } : {}),
  };
}

/** The POST_PENDING entry posting `amount` (≤ held) of a hold; the rest is released. */
export function postHoldEntry(hold: Hold, postId: string, amount: bigint): JournalEntry {
  if (amount <= 0n || amount > hold.amount)
    throw new Error(`post of hold ${hold.id}: amount ${amount} outside 1..${hold.amount}`);
  return {
    id: postId,
    platformId: hold.platformId,
    kind: hold.kind,
    phase: 'POST_PENDING',
    pendingEntryId: hold.id,
    lines: [
      { accountId: hold.accountId, currency: hold.currency, amount: -amount },
      { accountId: hold.counterAccountId, currency: hold.currency, amount },
    ],
  };
}

/** The VOID_PENDING entry releasing a hold. */
export function voidHoldEntry(hold: Hold, voidId: string): JournalEntry {
  return {
    id: voidId,
    platformId: hold.platformId,
    kind: hold.kind,
    phase: 'VOID_PENDING',
    pendingEntryId: hold.id,
    lines: [],
  };
}

/**
 * Reads a hold from its PENDING entry's two lines and, when resolved, the resolving
 * entry's phase and lines. Undefined when the entry is not a well-formed hold.
 */
export function holdFromEntries(
  entry: {
    id: string;
    platformId: string;
    kind: string;
    phase: EntryPhase;
    description?: string;
    createdAt: Date;
  },
  lines: readonly JournalLine[],
  resolution?: { id: string; phase: EntryPhase; createdAt: Date; lines: readonly JournalLine[] },
): Hold | undefined {
  if (entry.phase !== 'PENDING' || lines.length !== 2) return undefined;
  const debit = lines.find((l) => l.amount < 0n);
  const credit = lines.find((l) => l.amount > 0n);
  if (!debit || !credit) return undefined;
  const hold: Hold = {
    id: entry.id,
    platformId: entry.platformId,
    accountId: debit.accountId,
    counterAccountId: credit.accountId,
    currency: debit.currency,
    amount: -debit.amount,
    kind: entry.kind,
    ...(entry.description !== undefined ? { description: entry.description } : {}),
    createdAt: entry.createdAt,
    status: 'PENDING',
  };
  if (!resolution) return hold;
  const posted = resolution.lines.find((l) => l.accountId === credit.accountId)?.amount ?? 0n;
  return {
    ...hold,
    status: resolution.phase === 'POST_PENDING' ? 'POSTED' : 'VOIDED',
    ...(resolution.phase === 'POST_PENDING' ? { postedAmount: posted } : {}),
    resolutionId: resolution.id,
    resolvedAt: resolution.createdAt,
  };
}

/** Sums per currency of signed lines; the currencies whose sum is not zero. */
export function unbalancedCurrencies(lines: readonly Pick<JournalLine, 'currency' | 'amount'>[]): string[] {
  const sums = new Map<string, bigint>();
  for (const l of lines) sums.set(l.currency, (sums.get(l.currency) ?? 0n) + l.amount);
  return [...sums].filter(([, s]) => s !== 0n).map(([c]) => c);
}
