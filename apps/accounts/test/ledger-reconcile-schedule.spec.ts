import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { sumOf } from '@sluice/metrics';
import { eventually } from '@sluice/testing';
import { LedgerReconcileWorker } from '../src/app/ledger-reconcile.worker.js';
import { startHarness, type Harness } from './support/harness.js';
import { fundedAccount } from './support/ledger.js';

/**
 * The scheduled ReconcileLedger (LedgerReconcileWorker) against the real Postgres: it sweeps every
 * platform's ledger, reports and counts a corrupted balance row, and replicas do not both sweep.
 * The service's own worker runs with a one-hour interval here: it sweeps once at start (proving the
 * wiring), then the workers made below (the same class over the service's database and metrics) are
 * driven tick by tick.
 */
const HOUR_MS = 3_600_000;
let h: Harness;

beforeAll(async () => {
  h = await startHarness('accreconcile', { env: { LEDGER_RECONCILE_INTERVAL_SECONDS: '3600' } });
  // The service's own start-up sweep happens first, or it could race the tests' workers.
  await eventually(async () => {
    const r = await h.sql.query(`SELECT count(*)::int AS n FROM accounts.ledger_reconcile_runs`);
    return r.rows[0].n === 1;
  });
});
afterAll(async () => {
  await h?.stop();
});

/** No sweep recorded: the next claim is due. */
beforeEach(async () => {
  await h.sql.query(`DELETE FROM accounts.ledger_reconcile_runs`);
});

/** A worker over the running service's database, ledger and metrics, logging into `lines`. */
function worker(lines: Record<string, unknown>[] = []): LedgerReconcileWorker {
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  return new LedgerReconcileWorker(h.running.deps.orm, h.running.graph.ledger, logger, HOUR_MS);
}

async function checks(result: 'consistent' | 'inconsistent'): Promise<number> {
  return sumOf(await h.running.deps.metrics.samples(), 'ledger_reconcile_checks_total', { result });
}

describe('scheduled ledger reconciliation', () => {
  it('the service runs it: LEDGER_RECONCILE_INTERVAL_SECONDS starts the worker, which sweeps at start', () => {
    expect(h.running.deps.config.LEDGER_RECONCILE_INTERVAL_SECONDS).toBe(3600);
    expect(h.running.graph.reconcileWorker).toBeInstanceOf(LedgerReconcileWorker);
    expect(h.running.graph.workers).toContain(h.running.graph.reconcileWorker);
  });

  it('reports a corrupted balance row: counted as inconsistent, logged with the account at fault, recorded', async () => {
    const sound = await fundedAccount(h, 7n);
    const bad = await fundedAccount(h, 5n);
    await h.sql.query(
      `UPDATE accounts.ledger_accounts SET posted_credits = posted_credits + 1 WHERE id = $1`,
      [bad.accountId],
    );
    try {
      const lines: Record<string, unknown>[] = [];
      const before = { ok: await checks('consistent'), bad: await checks('inconsistent') };
      const sweep = await worker(lines).tick();
      expect(sweep).toBeDefined();
      expect(sweep!.inconsistent.map((i) => i.platformId)).toEqual([bad.platformId]);
      expect(sweep!.inconsistent[0]!.report.mismatches.map((m) => m.accountId)).toEqual([bad.accountId]);
      const platforms = (await h.sql.query(`SELECT DISTINCT platform_id FROM accounts.ledger_accounts`)).rows;
      expect(platforms.map((r) => r.platform_id)).toEqual(expect.arrayContaining([sound.platformId, bad.platformId]));
      expect(sweep!.platforms).toBe(platforms.length);
      // Every platform counted once: the corrupted one as inconsistent, the rest as consistent.
      expect(await checks('inconsistent')).toBe(before.bad + 1);
      expect(await checks('consistent')).toBe(before.ok + platforms.length - 1);
      const errors = lines.filter((l) => l.level === 50);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({
        platformId: bad.platformId,
        mismatchCount: 1,
        mismatches: [
          {
            accountId: bad.accountId,
            stored: { postedCredits: '6', postedDebits: '0' },
            derived: { postedCredits: '5', postedDebits: '0' },
          },
        ],
        unbalancedEntryCount: 0,
        // The currency's posted balances no longer sum to zero.
        currencies: [{ currency: 'USD', balances: '1', lines: '0' }],
      });
      const runs = await h.sql.query(
        `SELECT platforms, inconsistent_platform_ids FROM accounts.ledger_reconcile_runs`,
      );
      expect(runs.rows).toEqual([{ platforms: platforms.length, inconsistent_platform_ids: [bad.platformId] }]);
    } finally {
      await h.sql.query(
        `UPDATE accounts.ledger_accounts SET posted_credits = posted_credits - 1 WHERE id = $1`,
        [bad.accountId],
      );
    }
  });

  it('two replicas do not both sweep: one holds the lock, and none sweeps again within the interval', async () => {
    await fundedAccount(h, 3n);
    const a = worker();
    const b = worker();
    const swept = async () => (await h.sql.query(`SELECT count(*)::int AS n FROM accounts.ledger_reconcile_runs`)).rows[0].n;
    const counted = async () => (await checks('consistent')) + (await checks('inconsistent'));

    // Another replica's sweep in progress (it holds the advisory lock): this one skips, without waiting.
    const other = await h.sql.connect();
    try {
      await other.query(`BEGIN`);
      await other.query(`SELECT pg_advisory_xact_lock(hashtext('accounts:ledger-reconcile'))`);
      const before = await counted();
      expect(await a.tick()).toBeUndefined();
      expect(await counted()).toBe(before);
      expect(await swept()).toBe(0);
    } finally {
      await other.query(`ROLLBACK`);
      other.release();
    }

    // Both wake at once: exactly one sweeps.
    const before = await counted();
    const results = await Promise.all([a.tick(), b.tick()]);
    expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    const platforms = results.find((r) => r !== undefined)!.platforms;
    expect(await swept()).toBe(1);
    expect(await counted()).toBe(before + platforms);

    // Waking again within the interval, in turn: nothing runs.
    expect(await b.tick()).toBeUndefined();
    expect(await a.tick()).toBeUndefined();
    expect(await swept()).toBe(1);

    // Once the interval has passed since the last sweep started, the next wake-up sweeps again.
    await h.sql.query(`UPDATE accounts.ledger_reconcile_runs SET started_at = started_at - interval '2 hours'`);
    expect(await b.tick()).toBeDefined();
    expect(await swept()).toBe(2);
  });
});
