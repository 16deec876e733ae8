import { PollLoop } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import { transactional, type MikroORM } from '@sluice/store';
import { LedgerRepository } from '../store/ledger.repository.js';
import type { LedgerService, ReconcileReport } from './ledger.service.js';

/** How many mismatching accounts and unbalanced entries one log line names (the rest are counted). */
const LOGGED_DETAILS = 20;

/** What one sweep found. */
export interface ReconcileSweep {
  platforms: number;
  /** The reports of the platforms whose ledger is inconsistent. */
  inconsistent: { platformId: string; report: ReconcileReport }[];
}

/**
 * Reconciles every platform's ledger on a schedule (`LEDGER_RECONCILE_INTERVAL_SECONDS`), so the
 * `SluiceLedgerReconcileFailed` alert (on `ledger_reconcile_checks_total{result="inconsistent"}`,
 * which `LedgerService.reconcile` counts) watches every ledger without a caller.
 *
 * Each replica wakes every interval; a sweep runs in one transaction that first takes a
 * transaction-scoped advisory lock (`pg_try_advisory_xact_lock`, never waited for) and then checks
 * `ledger_reconcile_runs` for a sweep started within the interval. So one replica at a time sweeps,
 * and replicas waking in turn do not sweep again before the interval has passed (database time).
 * A mismatch is logged at error level with its details (the accounts and entries at fault).
 */
export class LedgerReconcileWorker {
  private readonly loop: PollLoop;
  private readonly repo = new LedgerRepository();

  constructor(
    private readonly orm: MikroORM,
    private readonly ledger: LedgerService,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {
    this.loop = new PollLoop(
      async () => {
        await this.tick();
        return false;
      },
      {
        idleMs: intervalMs,
        onError: (err) => logger.error({ err }, 'ledger reconciliation failed; retried at the next interval'),
      },
    );
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /**
   * One wake-up: sweeps every platform's ledger if this replica takes the lock and no sweep started
   * within the interval (undefined otherwise). Slack of a tenth of the interval lets a replica whose
   * timer fires a little early still take its turn.
   */
  tick(): Promise<ReconcileSweep | undefined> {
    return transactional(this.orm, async (em) => {
      if (!(await this.repo.claimReconcileRun(em, this.intervalMs * 0.9))) return undefined;
      const platformIds = await this.repo.platformIds(em);
      const inconsistent: ReconcileSweep['inconsistent'] = [];
      for (const platformId of platformIds) {
        const report = await this.ledger.reconcile(platformId, em);
        if (report.consistent) continue;
        inconsistent.push({ platformId, report });
        this.logger.error(describe(platformId, report), 'ledger reconciliation: the ledger is inconsistent');
      }
      await this.repo.recordReconcileRun(
        em,
        platformIds.length,
        inconsistent.map((i) => i.platformId),
      );
      this.logger.info(
        { platforms: platformIds.length, inconsistent: inconsistent.length },
        'ledger reconciliation done',
      );
      return { platforms: platformIds.length, inconsistent };
    });
  }
}

/** The log fields of an inconsistent report (amounts as strings: JSON has no bigint). */
function describe(platformId: string, r: ReconcileReport): Record<string, unknown> {
  const totals = (t: Record<string, bigint>) =>
    Object.fromEntries(Object.entries(t).map(([k, v]) => [k, v.toString()]));
  return {
    platformId,
    mismatchCount: r.mismatches.length,
    mismatches: r.mismatches.slice(0, LOGGED_DETAILS).map((m) => ({
      accountId: m.accountId,
      stored: totals(m.stored),
      derived: totals(m.derived),
    })),
    unbalancedEntryCount: r.unbalancedEntryIds.length,
    unbalancedEntryIds: r.unbalancedEntryIds.slice(0, LOGGED_DETAILS),
    currencies: r.currencies
      .filter((c) => c.balances !== 0n || c.lines !== 0n || c.pendingDebits !== c.pendingCredits)
      .map((c) => ({
        currency: c.currency,
        balances: c.balances.toString(),
        lines: c.lines.toString(),
        pendingDebits: c.pendingDebits.toString(),
        pendingCredits: c.pendingCredits.toString(),
      })),
  };
}
