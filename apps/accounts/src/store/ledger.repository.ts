import { toBigInt, type EntityManager } from '@sluice/store';
import type { InternalAccountRecord } from '../domain/internal-account.js';
import { accountColumns, internalAccountFromRow, type InternalAccountRow } from './internal-account.repository.js';
import {
  canonicalLines,
  type EntryPhase,
  type JournalEntry,
  type JournalLine,
  type TotalsDelta,
} from '../domain/ledger.js';

/**
 * The journal and the ledger accounts' running totals. Everything here runs
 * inside the caller's transaction; idempotency of entries rests on the primary
 * key (platform_id, id), not on a read before the write.
 */

export interface StoredEntry {
  id: string;
  platformId: string;
  kind: string;
  phase: EntryPhase;
  pendingEntryId?: string;
  fingerprint: string;
  /** Id of the entry that posted or voided this PENDING entry, if any. */
  resolvedBy?: string;
}

/** An account whose running totals differ from the sums of its journal lines. */
export interface TotalsMismatch {
  accountId: string;
  stored: { postedDebits: bigint; postedCredits: bigint; pendingDebits: bigint; pendingCredits: bigint };
  derived: { postedDebits: bigint; postedCredits: bigint; pendingDebits: bigint; pendingCredits: bigint };
}

/**
 * Per ledger account, the totals its journal lines imply: posted = POSTED and
 * POST_PENDING lines; pending = lines of PENDING entries not resolved yet. Takes the
 * platform filter twice (null for all platforms).
 */
const DERIVED_TOTALS = `
  SELECT l.account_id,
    sum(CASE WHEN e.phase IN ('POSTED', 'POST_PENDING') AND l.amount < 0 THEN -l.amount ELSE 0 END) AS posted_debits,
    sum(CASE WHEN e.phase IN ('POSTED', 'POST_PENDING') AND l.amount > 0 THEN l.amount ELSE 0 END) AS posted_credits,
    sum(CASE WHEN e.phase = 'PENDING' AND r.id IS NULL AND l.amount < 0 THEN -l.amount ELSE 0 END) AS pending_debits,
    sum(CASE WHEN e.phase = 'PENDING' AND r.id IS NULL AND l.amount > 0 THEN l.amount ELSE 0 END) AS pending_credits
  FROM journal_lines l
  JOIN journal_entries e ON e.platform_id = l.platform_id AND e.id = l.entry_id
  LEFT JOIN journal_entries r ON r.platform_id = e.platform_id AND r.pending_entry_id = e.id
  WHERE (?::text IS NULL OR l.platform_id = ?)
  GROUP BY l.account_id`;

/**
 * The one update of an account's running totals (its row lock; the CHECK constraints refuse an
 * overdraft or a balance above the limit), for `writeEntry` and `applyTotals`: its statement up to
 * its WHERE, which callers extend, and its parameters.
 */
function totalsUpdate(d: TotalsDelta, platformId: string, now: Date): { sql: string; params: unknown[] } {
  return {
    sql: `UPDATE ledger_accounts
        SET posted_debits = posted_debits + ?::numeric, posted_credits = posted_credits + ?::numeric,
            pending_debits = pending_debits + ?::numeric, pending_credits = pending_credits + ?::numeric,
            updated_at = GREATEST(updated_at, ?::timestamptz)
        WHERE id = ? AND platform_id = ? AND currency = ?`,
    params: [
      d.postedDebits.toString(),
      d.postedCredits.toString(),
      d.pendingDebits.toString(),
      d.pendingCredits.toString(),
      now,
      d.accountId,
      platformId,
      d.currency,
    ],
  };
}

export class LedgerRepository {
  /**
   * Records an entry in one statement, all of it or (the header conflicting) nothing of it but the
   * system accounts:
   *
   * - the system accounts its lines name (`systemAccounts`), created on first use (they may go
   *   negative). Concurrent first uses insert the same row: the loser waits for the winner and then
   *   does nothing;
   * - the header. Not inserted when it conflicts with a committed entry (the insert waits for a
   *   concurrent one to commit or roll back) on either unique key: the same id for the platform (a
   *   retry, or a concurrent duplicate), or, for a POST_PENDING/VOID_PENDING, another resolution of
   *   the same hold (`journal_entries_resolve_once`). The caller tells the two apart;
   * - its lines, in canonical (account id) order;
   * - given `totals` (an entry that moves one internal account; the caller applies several with
   *   `applyTotals`, in canonical order), that account's running totals, under its row lock, where the
   *   CHECK constraints refuse an overdraft or a balance above the limit (the caller maps those
   *   errors); `touch` also marks the internal account changed (its posted balance moved). The
   *   account is returned as it is after.
   *
   * `gate` makes the statement a whole call of its own, outside a transaction (PlaceHold's common
   * case): it writes only when the internal account `accountId` of the platform holds `currency` and,
   * given `payee` (a read of one row, see ExternalAccountRepository.liveSql), that row exists; the row
   * comes back as JSON (`payee`). When it wrote nothing the caller takes its transactional path, which
   * tells the failed check.
   *
   * `ON CONFLICT DO NOTHING` has no conflict target on purpose (both inserts): with a target, only
   * that index arbitrates, and a concurrent insert of the same row that slips past its check is
   * then refused by the table's other unique index (`ledger_accounts_id_platform_currency`,
   * `journal_entries_resolve_once`) with a unique violation (23505) instead of being skipped.
   * Without a target every unique index arbitrates.
   */
  async writeEntry(
    em: EntityManager,
    entry: JournalEntry,
    fingerprint: string,
    now: Date,
    o: {
      systemAccounts: readonly { id: string; currency: string }[];
      totals?: TotalsDelta;
      touch?: boolean;
      gate?: { accountId: string; currency: string; payee?: { sql: string; params: readonly unknown[] } };
    },
  ): Promise<{ inserted: boolean; account?: InternalAccountRecord; payee?: object }> {
    const params: unknown[] = [];
    const ctes: string[] = [];
    // The inserts are INSERT ... SELECT ... WHERE: the WHERE also keeps ON CONFLICT from reading as a join's ON.
    let when = 'true';
    const g = o.gate;
    if (g) {
      if (g.payee) {
        params.push(...g.payee.params);
        ctes.push(`payee AS (${g.payee.sql})`);
      }
      params.push(entry.platformId, g.accountId, g.currency);
      ctes.push(`gate AS (
        SELECT 1 FROM internal_accounts WHERE platform_id = ? AND id = ? AND currency = ?${g.payee ? ' AND EXISTS (SELECT 1 FROM payee)' : ''})`);
      when = 'EXISTS (SELECT 1 FROM gate)';
    }
    if (o.systemAccounts.length) {
      const tuples = o.systemAccounts.map((a) => {
        params.push(a.id, entry.platformId, a.currency, now, now);
        return `(?, ?, ?, 'SYSTEM', true, ?::timestamptz, ?::timestamptz)`;
      });
      ctes.push(`system_accounts AS (
        INSERT INTO ledger_accounts (id, platform_id, currency, kind, allow_negative, created_at, updated_at)
        SELECT * FROM (VALUES ${tuples.join(', ')}) AS a WHERE ${when} ON CONFLICT DO NOTHING)`);
    }
    params.push(
      entry.platformId,
      entry.id,
      entry.kind,
      entry.phase,
      entry.pendingEntryId ?? null,
      fingerprint,
      entry.description ?? null,
      now,
    );
    ctes.push(`entry AS (
      INSERT INTO journal_entries (platform_id, id, kind, phase, pending_entry_id, fingerprint, description, created_at)
      SELECT ?, ?, ?, ?, ?, ?, ?, ?::timestamptz WHERE ${when} ON CONFLICT DO NOTHING RETURNING id)`);
    const lines = canonicalLines(entry.lines);
    if (lines.length) {
      params.push(entry.platformId);
      const tuples = lines.map((l, i) => {
        params.push(i + 1, l.accountId, l.currency, l.amount.toString());
        return '(?::int, ?, ?, ?::bigint)';
      });
      ctes.push(`lines AS (
        INSERT INTO journal_lines (platform_id, entry_id, line_no, account_id, currency, amount)
        SELECT ?, entry.id, l.line_no, l.account_id, l.currency, l.amount
        FROM entry, (VALUES ${tuples.join(', ')}) AS l (line_no, account_id, currency, amount))`);
    }
    let select = `SELECT EXISTS (SELECT 1 FROM entry) AS inserted${g?.payee ? ', (SELECT to_jsonb(p) FROM payee p) AS payee' : ''}`;
    const d = o.totals;
    if (d) {
      const update = totalsUpdate(d, entry.platformId, now);
      params.push(...update.params);
      ctes.push(`totals AS (
        ${update.sql} AND EXISTS (SELECT 1 FROM entry)
        RETURNING id, posted_credits - posted_debits AS posted_balance, pending_debits, pending_credits)`);
      if (o.touch) {
        params.push(now, d.accountId);
        ctes.push(`account AS (
          UPDATE internal_accounts SET updated_at = GREATEST(updated_at, ?::timestamptz)
          WHERE id = ? AND EXISTS (SELECT 1 FROM entry) RETURNING ${accountColumns()})`);
      } else {
        params.push(d.accountId);
        ctes.push(`account AS (SELECT ${accountColumns()} FROM internal_accounts WHERE id = ?)`);
      }
      select += `, (SELECT count(*) FROM totals)::int AS totalled, ${accountColumns('a')},
        t.posted_balance, t.pending_debits, t.pending_credits
        FROM (SELECT 1) AS one LEFT JOIN (account a JOIN totals t ON t.id = a.id) ON true`;
    }
    const [row] = await em.execute<
      (InternalAccountRow & { inserted: boolean; totalled?: number; payee?: object | null })[]
    >(`WITH ${ctes.join(',\n')}\n${select}`, params);
    const payee = row?.payee ? { payee: row.payee } : {};
    if (!row?.inserted) return { inserted: false, ...payee };
    if (!d) return { inserted: true, ...payee };
    if (row.totalled !== 1 || !row.id)
      throw new Error(
        `ledger account ${d.accountId} (${d.currency}) of ${entry.platformId} or its internal account is missing`,
      );
    return { inserted: true, account: internalAccountFromRow(row), ...payee };
  }

  async getEntry(em: EntityManager, platformId: string, id: string): Promise<StoredEntry | undefined> {
    const rows = await em.execute<
      {
        id: string;
        platform_id: string;
        kind: string;
        phase: EntryPhase;
        pending_entry_id: string | null;
        fingerprint: string;
        resolved_by: string | null;
      }[]
    >(
      `SELECT e.id, e.platform_id, e.kind, e.phase, e.pending_entry_id, e.fingerprint,
              (SELECT r.id FROM journal_entries r WHERE r.platform_id = e.platform_id AND r.pending_entry_id = e.id) AS resolved_by
       FROM journal_entries e WHERE e.platform_id = ? AND e.id = ?`,
      [platformId, id],
    );
    const r = rows[0];
    if (!r) return undefined;
    return {
      id: r.id,
      platformId: r.platform_id,
      kind: r.kind,
      phase: r.phase,
      ...(r.pending_entry_id ? { pendingEntryId: r.pending_entry_id } : {}),
      fingerprint: r.fingerprint,
      ...(r.resolved_by ? { resolvedBy: r.resolved_by } : {}),
    };
  }

  async linesOf(em: EntityManager, platformId: string, entryId: string): Promise<JournalLine[]> {
    const rows = await em.execute<{ account_id: string; currency: string; amount: string }[]>(
      `SELECT account_id, currency, amount FROM journal_lines WHERE platform_id = ? AND entry_id = ? ORDER BY line_no`,
      [platformId, entryId],
    );
    return rows.map((r) => ({ accountId: r.account_id, currency: r.currency, amount: toBigInt(r.amount) }));
  }

  /**
   * Applies running-total changes, one account at a time in canonical order (so
   * concurrent entries lock rows in the same order). The CHECK constraints refuse
   * an overdraft or a balance above the limit; the caller maps those errors.
   */
  async applyTotals(
    em: EntityManager,
    platformId: string,
    deltas: readonly TotalsDelta[],
    now: Date,
  ): Promise<void> {
    for (const d of deltas) {
      const update = totalsUpdate(d, platformId, now);
      const rows = await em.execute<{ id: string }[]>(`${update.sql} RETURNING id`, update.params);
      if (rows.length !== 1)
        throw new Error(`ledger account ${d.accountId} (${d.currency}) of ${platformId} is missing`);
    }
  }

  /**
   * Internal accounts whose running totals differ from what their journal lines say
   * (posted: POSTED and POST_PENDING lines; pending: lines of PENDING entries not
   * resolved yet). Empty when the ledger is consistent.
   */
  async reconcile(em: EntityManager, platformId?: string): Promise<TotalsMismatch[]> {
    const rows = await em.execute<Record<string, string>[]>(
      `WITH derived AS (${DERIVED_TOTALS})
       SELECT a.id, a.posted_debits, a.posted_credits, a.pending_debits, a.pending_credits,
              coalesce(d.posted_debits, 0) AS d_posted_debits, coalesce(d.posted_credits, 0) AS d_posted_credits,
              coalesce(d.pending_debits, 0) AS d_pending_debits, coalesce(d.pending_credits, 0) AS d_pending_credits
       FROM ledger_accounts a LEFT JOIN derived d ON d.account_id = a.id
       WHERE (?::text IS NULL OR a.platform_id = ?) AND a.kind = 'INTERNAL'
         AND (a.posted_debits, a.posted_credits, a.pending_debits, a.pending_credits)
             IS DISTINCT FROM (coalesce(d.posted_debits, 0), coalesce(d.posted_credits, 0), coalesce(d.pending_debits, 0), coalesce(d.pending_credits, 0))`,
      [platformId ?? null, platformId ?? null, platformId ?? null, platformId ?? null],
    );
    return rows.map((r) => ({
      accountId: r.id!,
      stored: {
        postedDebits: toBigInt(r.posted_debits),
        postedCredits: toBigInt(r.posted_credits),
        pendingDebits: toBigInt(r.pending_debits),
        pendingCredits: toBigInt(r.pending_credits),
      },
      derived: {
        postedDebits: toBigInt(r.d_posted_debits),
        postedCredits: toBigInt(r.d_posted_credits),
        pendingDebits: toBigInt(r.d_pending_debits),
        pendingCredits: toBigInt(r.d_pending_credits),
      },
    }));
  }

  /** The platforms that have ledger accounts (every ledger the scheduled reconciliation checks), in order. */
  async platformIds(em: EntityManager): Promise<string[]> {
    const rows = await em.execute<{ platform_id: string }[]>(
      `SELECT DISTINCT platform_id FROM ledger_accounts ORDER BY platform_id`,
    );
    return rows.map((r) => r.platform_id);
  }

  /**
   * Takes the scheduled reconciliation's transaction-scoped advisory lock if no other transaction
   * holds it, and tells whether a sweep is due: none has started within the last `intervalMs`
   * (database time, so replicas' clocks do not matter). False when another replica holds the lock.
   */
  async claimReconcileRun(em: EntityManager, intervalMs: number): Promise<boolean> {
    const [lock] = await em.execute<{ locked: boolean }[]>(
      `SELECT pg_try_advisory_xact_lock(hashtext('accounts:ledger-reconcile')) AS locked`,
    );
    if (!lock?.locked) return false;
    const [last] = await em.execute<{ due: boolean }[]>(
      `SELECT coalesce(max(started_at) <= now() - make_interval(secs => ?), true) AS due FROM ledger_reconcile_runs`,
      [intervalMs / 1000],
    );
    return last!.due;
  }

  /** Records a finished sweep (started at the transaction's start). */
  async recordReconcileRun(em: EntityManager, platforms: number, inconsistentPlatformIds: string[]): Promise<void> {
    await em.execute(
      `INSERT INTO ledger_reconcile_runs (started_at, finished_at, platforms, inconsistent_platform_ids)
       VALUES (now(), clock_timestamp(), ?, ?::jsonb)`,
      [platforms, JSON.stringify(inconsistentPlatformIds)],
    );
  }

  /**
   * Per currency (of one platform, or all): the sum of all posted balances (credits −
   * debits; internal accounts' running totals, system accounts' derived from their
   * lines) and of all journal lines — both 0 in a sound ledger — and the open holds'
   * pending debits and credits (equal in a sound ledger).
   */
  async currencyTotals(
    em: EntityManager,
    platformId?: string,
  ): Promise<
    {
      currency: string;
      balances: bigint;
      lines: bigint;
      pendingDebits: bigint;
      pendingCredits: bigint;
      accounts: number;
    }[]
  > {
    const rows = await em.execute<
      { currency: string; balances: string; lines: string; pd: string; pc: string; n: number }[]
    >(
      `WITH derived AS (${DERIVED_TOTALS}),
       a AS (
         SELECT la.currency,
                sum(CASE WHEN la.kind = 'INTERNAL' THEN la.posted_credits - la.posted_debits
                         ELSE coalesce(d.posted_credits, 0) - coalesce(d.posted_debits, 0) END) AS balances,
                sum(CASE WHEN la.kind = 'INTERNAL' THEN la.pending_debits ELSE coalesce(d.pending_debits, 0) END) AS pd,
                sum(CASE WHEN la.kind = 'INTERNAL' THEN la.pending_credits ELSE coalesce(d.pending_credits, 0) END) AS pc,
                count(*)::int AS n
         FROM ledger_accounts la LEFT JOIN derived d ON d.account_id = la.id
         WHERE (?::text IS NULL OR la.platform_id = ?) GROUP BY la.currency),
       l AS (
         SELECT currency, sum(amount) AS lines FROM journal_lines
         WHERE (?::text IS NULL OR platform_id = ?) GROUP BY currency)
       SELECT a.currency, a.balances, coalesce(l.lines, 0) AS lines, a.pd, a.pc, a.n
       FROM a LEFT JOIN l ON l.currency = a.currency ORDER BY a.currency`,
      [
        platformId ?? null,
        platformId ?? null,
        platformId ?? null,
        platformId ?? null,
        platformId ?? null,
        platformId ?? null,
      ],
    );
    return rows.map((r) => ({
      currency: r.currency,
      balances: toBigInt(r.balances),
      lines: toBigInt(r.lines),
      pendingDebits: toBigInt(r.pd),
      pendingCredits: toBigInt(r.pc),
      accounts: r.n,
    }));
  }

  /** Ids of entries whose lines do not sum to zero in some currency (always empty: the commit-time trigger refuses them). */
  async unbalancedEntries(em: EntityManager, platformId?: string): Promise<string[]> {
    const rows = await em.execute<{ entry_id: string }[]>(
      `SELECT DISTINCT entry_id FROM (
         SELECT platform_id, entry_id, currency FROM journal_lines WHERE (?::text IS NULL OR platform_id = ?)
         GROUP BY platform_id, entry_id, currency HAVING sum(amount) <> 0) u ORDER BY entry_id`,
      [platformId ?? null, platformId ?? null],
    );
    return rows.map((r) => r.entry_id);
  }

  /**
   * A hold's PENDING entry with its lines and, when resolved, the resolving entry
   * (POST_PENDING or VOID_PENDING) with its lines. Undefined when no entry has that id.
   */
  async getHoldEntries(
    em: EntityManager,
    platformId: string,
    holdId: string,
  ): Promise<HoldEntries | undefined> {
    // One statement: a row per line of the entry and of its resolution (a void has none).
    const rows = await em.execute<
      {
        id: string;
        kind: string;
        phase: EntryPhase;
        description: string | null;
        created_at: Date | string;
        r_id: string | null;
        r_phase: EntryPhase | null;
        r_created_at: Date | string | null;
        line_of: string | null;
        account_id: string | null;
        currency: string | null;
        amount: string | null;
      }[]
    >(
      `SELECT e.id, e.kind, e.phase, e.description, e.created_at, r.id AS r_id, r.phase AS r_phase, r.created_at AS r_created_at,
              l.entry_id AS line_of, l.account_id, l.currency, l.amount
       FROM journal_entries e
       LEFT JOIN journal_entries r ON r.platform_id = e.platform_id AND r.pending_entry_id = e.id
       LEFT JOIN journal_lines l ON l.platform_id = e.platform_id AND l.entry_id IN (e.id, r.id)
       WHERE e.platform_id = ? AND e.id = ?
       ORDER BY l.entry_id = e.id DESC, l.line_no`,
      [platformId, holdId],
    );
    const r = rows[0];
    if (!r) return undefined;
    const linesOf = (entryId: string): JournalLine[] =>
      rows
        .filter((l) => l.line_of === entryId)
        .map((l) => ({ accountId: l.account_id!, currency: l.currency!, amount: toBigInt(l.amount) }));
    return {
      entry: {
        id: r.id,
        platformId,
        kind: r.kind,
        phase: r.phase,
        ...(r.description !== null ? { description: r.description } : {}),
        createdAt: new Date(r.created_at),
      },
      lines: linesOf(r.id),
      ...(r.r_id
        ? {
            resolution: {
              id: r.r_id,
              phase: r.r_phase!,
              createdAt: new Date(r.r_created_at!),
              lines: linesOf(r.r_id),
            },
          }
        : {}),
    };
  }
}

/** What `getHoldEntries` returns; `holdFromEntries` (domain) turns it into a Hold. */
export interface HoldEntries {
  entry: {
    id: string;
    platformId: string;
    kind: string;
    phase: EntryPhase;
    description?: string;
    createdAt: Date;
  };
  lines: JournalLine[];
  resolution?: { id: string; phase: EntryPhase; createdAt: Date; lines: JournalLine[] };
}
