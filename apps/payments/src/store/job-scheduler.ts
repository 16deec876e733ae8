import { randomUUID } from 'node:crypto';
import { transactional, writeAtCommit, type EntityManager, type MikroORM } from '@sluice/store';
import { LeaseWrites, type Clock } from '@sluice/core';
import { NotifiedLoop } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import { DELAY_BUCKETS, type Metrics } from '@sluice/metrics';
import type { Worker } from '@sluice/runtime';
import { fromJson } from './sql.js';

/** A claimed job as its handler sees it. */
export interface Job<P = Record<string, unknown>> {
  /** Unique and stable: the idempotency key for anything the handler does outside this database. */
  id: string;
  kind: string;
  payload: P;
  runAt: Date;
  /** 1 on the first run, 2 on the first retry, … */
  attempt: number;
}

/**
 * Runs a job that only touches this database, inside the transaction that also marks the job
 * done: its writes commit exactly once, together with the completion. It must call no other
 * service (no remote call while a database transaction is open): see `LeasedJobHandler`.
 */
export type JobHandler<P = Record<string, unknown>> = (job: Job<P>, em: EntityManager) => Promise<void>;

/** The writes that conclude a leased job, run in the short transaction that marks it done. */
export type JobOutcome = (em: EntityManager) => Promise<void>;

/**
 * Runs a job that calls other services: under the job's lease and outside any database
 * transaction, it reads, makes its calls, and returns the outcome to write (if any), which
 * commits in one short transaction together with the job's completion — only while this worker
 * still holds the lease. A worker that dies (or outlives its lease) leaves the job to run again,
 * so every call must be idempotent: pass `job.id` or an id derived from the payment (domain/ids.ts).
 */
export type LeasedJobHandler<P = Record<string, unknown>, L = never> = (
  job: Job<P>,
  /** What the kind's `load` read in the claim's transaction; absent when it did not run (the handler reads for itself). */
  loaded?: Loaded<L>,
) => Promise<JobOutcome | void>;

/**
 * Reads what the claimed jobs of a leased kind need first, all of the batch's jobs of that kind at
 * once, in the transaction that claims them: the reads ride on the claim's commit instead of each
 * job taking a transaction of its own, and a batch is read in a few statements, not a few per job
 * (the claim holds back every job of its batch until the loads are done). Returns what it read by
 * job id; a job it leaves out reads for itself. Only reads: the claim's locks are held meanwhile,
 * and a failed load leaves every job of the batch to read for itself.
 */
export type JobLoader<P = Record<string, unknown>, L = unknown> = (em: EntityManager, jobs: Job<P>[]) => Promise<Map<string, L>>;

/** A load's result as the handler receives it (wrapped, so a load that found nothing is told from none). */
export interface Loaded<L> {
  value: L;
}

type Registered =
  | { mode: 'transaction'; run: JobHandler<never> }
  | { mode: 'lease'; run: LeasedJobHandler<never, unknown>; load?: JobLoader<never, unknown> };

/** How a JobScheduler runs (defaults in the constructor). */
export interface JobSchedulerOptions {
  /** Multiplies every delay given to `schedule` (SANDBOX_TIME_SCALE). */
  timeScale?: number;
  /** How long a claim is exclusive; a worker that died releases its jobs after this. */
  leaseMs?: number;
  /**
   * Safety poll while listening (default 10 s): a job scheduled now wakes the scheduler of every
   * replica on commit (LISTEN/NOTIFY), one due later by a timer set after each pass, so this only
   * bounds how late a lost notification is noticed.
   */
  pollMs?: number;
  /** Poll interval while not listening (no LISTEN connection yet, or lost; default 250 ms). */
  fallbackPollMs?: number;
  /** Listen for the notifications of new jobs (default true). */
  listen?: boolean;
  /** Jobs claimed per pass. */
  batchSize?: number;
  /**
   * Jobs run at once. A running job may hold a database connection for its
   * transaction (a `register` job for its whole run, a leased one for its reads
   * and its short completing transaction, none during its calls), so this must
   * stay well below the connection pool: see `maxJobConcurrency`.
   */
  concurrency?: number;
  /** After this many failed attempts a job is dead (failed_at set, never run again). */
  maxAttempts?: number;
  /** First retry delay; doubles per attempt, capped at 5 minutes (not scaled). */
  retryBaseMs?: number;
  /** Names this instance in locked_by (for operators). */
  instanceId?: string;
  logger?: Logger;
  /** Job metrics and the backlog read when scraped (see schedulerMetrics). */
  metrics?: Metrics;
  /**
   * Told after every claim how far behind the scheduler is, in ms: for a full batch, how long its
   * youngest job had been due (the due jobs left fell due after it and wait for the next pass); 0
   * for a batch that was not full (no due job left waiting). The admission of new payments follows
   * it (JobLagAdmission).
   */
  onLag?: (lagMs: number) => void;
}

/**
 * Scheduler metrics, by job `kind` (the handlers registered: bounded):
 * `scheduler_jobs_total` by `outcome` (`done`, `retry`: failed and rescheduled,
 * `dead`: out of attempts, `lost`: its lease was taken over), the
 * `scheduler_job_delay_seconds` histogram (how late a job started after it fell
 * due) and `scheduler_job_duration_seconds`; when scraped, `scheduler_due_jobs`
 * (due and not done) and `scheduler_oldest_due_job_age_seconds`.
 */
function schedulerMetrics(metrics: Metrics, orm: MikroORM, clock: Clock, logger: Logger | undefined) {
  const onError = (err: unknown) => logger?.warn({ err }, 'scheduler backlog not measured');
  const due = () =>
    orm.em.fork().execute<{ kind: string; due: string | number; oldest: Date | string }[]>(
      `SELECT kind, count(*) AS due, min(run_at) AS oldest FROM scheduled_jobs
       WHERE done_at IS NULL AND failed_at IS NULL AND run_at <= ? GROUP BY kind`,
      [clock.now()],
    );
  metrics.scrapedGauge(
    { name: 'scheduler_due_jobs', help: 'Scheduled jobs due and not yet done, by kind', labelNames: ['kind'] },
    async (g) => {
      for (const r of await due()) g.set({ kind: r.kind }, Number(r.due));
    },
    onError,
  );
  metrics.scrapedGauge(
    { name: 'scheduler_oldest_due_job_age_seconds', help: 'How long the oldest due job has waited to run (0 when none)' },
    async (g) => {
      const oldest = Math.min(...(await due()).map((r) => new Date(r.oldest).getTime()));
      g.set(Number.isFinite(oldest) ? Math.max(0, clock.now().getTime() - oldest) / 1000 : 0);
    },
    onError,
  );
  return {
    jobs: metrics.counter({ name: 'scheduler_jobs_total', help: 'Job runs by kind and outcome', labelNames: ['kind', 'outcome'] }),
    delay: metrics.histogram({
      name: 'scheduler_job_delay_seconds',
      help: 'How late a job started after it fell due',
      labelNames: ['kind'],
      buckets: DELAY_BUCKETS,
    }),
    duration: metrics.histogram({ name: 'scheduler_job_duration_seconds', help: 'Time to run one job', labelNames: ['kind'] }),
  };
}

/** A claimed row of `payments.scheduled_jobs` (the columns a run needs). */
interface JobRow {
  id: string;
  kind: string;
  payload: Record<string, unknown> | string;
  run_at: Date | string;
  attempts: number;
  locked_by: string;
}

/** The channel a scheduler's commits notify when they schedule jobs (one per schema). */
export function jobsChannel(schema: string): string {
  return `sluice_jobs_${schema}`;
}

/** How long the youngest of a full batch's claimed jobs had been due when claimed (ms). */
function lagOf(rows: JobRow[], now: number): number {
  let youngest = -Infinity;
  for (const r of rows) youngest = Math.max(youngest, new Date(r.run_at).getTime());
  return Math.max(0, now - youngest);
}

/** The one mapper of a claimed `payments.scheduled_jobs` row: the Job its handler sees. */
function jobOf(row: JobRow): Job {
  return {
    id: row.id,
    kind: row.kind,
    payload: fromJson(row.payload),
    runAt: new Date(row.run_at),
    attempt: row.attempts,
  };
}

/**
 * The most jobs a scheduler may run at once with a connection pool of `poolMax`: half of it (at
 * least 1), the other half for requests. Every job of payments but the hourly purge is leased: it
 * holds no connection during its calls (which take most of its time), and one at a time for its
 * reads and its completing transaction, whose outcome writes through that transaction's own `em`.
 * A `register` job holds one for its whole run. So the jobs hold at most half the pool, and a job
 * that took a second connection for a read could still get it.
 */
export function maxJobConcurrency(poolMax: number): number {
  return Math.max(1, Math.floor(poolMax / 2));
}

/**
 * The durable scheduler of the payments service: timed jobs in
 * `payments.scheduled_jobs`, claimed with `FOR UPDATE SKIP LOCKED` under a lease
 * so any number of replicas share the work without running a job twice; jobs
 * survive restarts (they are rows); each job's completion commits in the same
 * transaction as its handler's writes (`register`), or, for a job that calls other
 * services, as the outcome its handler returns after the calls (`registerLeased`).
 * Delays are multiplied by the sandbox time scale. Also the runtime Worker that
 * runs due jobs: it wakes when a transaction that scheduled a job commits (NotifiedLoop:
 * LISTEN/NOTIFY, every replica) and when the next job falls due (read in the claim's own
 * statement), with a slow safety poll for lost notifications; an idle scheduler runs no query.
 */
export class JobScheduler implements Worker {
  private readonly handlers = new Map<string, Registered>();
  /** True once a registered kind has a `load`: claims then run in a transaction with the loads. */
  private loaders = false;
  private readonly timeScale: number;
  private readonly leaseMs: number;
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly maxAttempts: number;
  private readonly retryBaseMs: number;
  private readonly instanceId: string;
  /**
   * Runs the passes. Its loop runs in the context the worker was started in: passes woken by
   * `schedule` calls made while serving requests do not inherit a request's context (its
   * deadline, which would cut the jobs' own calls short, or its request id in their logs).
   */
  private readonly loop: NotifiedLoop;
  /** The earliest retry a failed job of the current pass was given (the loop wakes for it). */
  private retryAt: number | undefined;
  private readonly metrics: ReturnType<typeof schedulerMetrics> | undefined;
  private readonly onLag: ((lagMs: number) => void) | undefined;
  /**
   * A failure whose record could not be written (the database went away) is written again until
   * the job's lease ends, so the job runs again after its retry pause instead of after the lease.
   */
  private readonly failureWrites = new LeaseWrites();

  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    opts: JobSchedulerOptions = {},
  ) {
    this.timeScale = opts.timeScale ?? 1;
    this.leaseMs = opts.leaseMs ?? 60_000;
    this.batchSize = opts.batchSize ?? 20;
    this.concurrency = Math.max(1, Math.min(opts.concurrency ?? 4, this.batchSize));
    this.maxAttempts = opts.maxAttempts ?? 10;
    this.retryBaseMs = opts.retryBaseMs ?? 1_000;
    this.instanceId = opts.instanceId ?? `payments-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.logger = opts.logger;
    this.metrics = opts.metrics && schedulerMetrics(opts.metrics, orm, clock, opts.logger);
    this.onLag = opts.onLag;
    if (!(this.timeScale > 0)) throw new Error('timeScale must be > 0');
    this.loop = new NotifiedLoop(() => this.pass(), {
      orm,
      channel: jobsChannel(orm.config.get('schema') ?? 'public'),
      logger: opts.logger,
      listen: opts.listen,
      safetyMs: opts.pollMs ?? 10_000,
      fallbackMs: opts.fallbackPollMs ?? 250,
      // A scheduler without handlers runs no job: its process's commits tell the others.
      takesWork: () => this.handlers.size > 0,
      onError: (err) => this.logger?.error({ err }, 'job poll failed'),
    });
  }

  private readonly logger: Logger | undefined;

  /** Registers the handler of a job kind that only touches this database (one handler per kind). */
  register<P>(kind: string, handler: JobHandler<P>): this {
    return this.add(kind, { mode: 'transaction', run: handler });
  }

  /**
   * Registers the handler of a job kind that calls other services (one handler per kind): it runs
   * under the lease, outside any transaction, and returns the outcome to write with the completion.
   */
  registerLeased<P, L = never>(kind: string, handler: LeasedJobHandler<P, L>, opts: { load?: JobLoader<P, L> } = {}): this {
    return this.add(kind, {
      mode: 'lease',
      run: handler as LeasedJobHandler<never, unknown>,
      ...(opts.load ? { load: opts.load as JobLoader<never, unknown> } : {}),
    });
  }

  private add(kind: string, registered: Registered): this {
    if (this.handlers.has(kind)) throw new Error(`job kind ${kind} already has a handler`);
    this.handlers.set(kind, registered);
    if (registered.mode === 'lease' && registered.load) this.loaders = true;
    return this;
  }

  /**
   * Schedules a job to run `delayMs` × timeScale from now. Pass `em` to write it
   * in the caller's transaction (it then exists iff that transaction commits).
   * With an explicit `id` scheduling is idempotent: an existing job with that id
   * is kept as it is. `realTime` exempts housekeeping from the sandbox time
   * scale. Returns the job id.
   */
  async schedule(
    job: {
      kind: string;
      payload?: Record<string, unknown>;
      delayMs?: number;
      id?: string;
      realTime?: boolean;
      /** An exact due time (from `dueAt`) instead of `delayMs`. */
      at?: Date;
    },
    em?: EntityManager,
  ): Promise<string> {
    const id = job.id ?? `job:${randomUUID()}`;
    const runAt = job.at ?? this.dueAt(job.delayMs ?? 0, job.realTime);
    const sql = `INSERT INTO scheduled_jobs (id, kind, payload, run_at, created_at) VALUES (?, ?, ?::jsonb, ?, ?) ON CONFLICT (id) DO NOTHING`;
    const params = [id, job.kind, JSON.stringify(job.payload ?? {}), runAt, this.clock.now()];
    const writer = em ?? this.orm.em.fork();
    // Nothing in the caller's transaction reads the job back: it is written in its COMMIT's round trip.
    await writeAtCommit(writer, sql, params);
    // Wakes the schedulers once the caller's transaction commits (at once without one); a job due
    // later only sets this scheduler's timer for it.
    this.loop.announce(writer, this.wallDue(runAt));
    return id;
  }

  /** A job's due time on this process's wall clock (the scheduler's clock may be a test's manual one). */
  private wallDue(runAt: Date): number {
    return Date.now() + (runAt.getTime() - this.clock.now().getTime());
  }

  /**
   * When a job scheduled now with `delayMs` falls due: the delay × the time scale
   * (unless `realTime`). For deadlines stored beside a job, so both agree.
   */
  dueAt(delayMs: number, realTime = false): Date {
    const delay = Math.max(0, Math.round(delayMs * (realTime ? 1 : this.timeScale)));
    return new Date(this.clock.now().getTime() + delay);
  }

  /** Claims due jobs and runs them; returns how many completed. Used by the worker's passes and by tests. */
  async runDue(): Promise<number> {
    return (await this.claimAndRun()).done;
  }

  /**
   * One pass of the worker: claims and runs due jobs, then (unless the batch was full: look again
   * at once) sleeps until the next job or retry falls due, a notification, or the safety poll.
   */
  private async pass(): Promise<boolean> {
    this.retryAt = undefined;
    const { claimed, nextAt } = await this.claimAndRun();
    if (claimed >= this.batchSize) return true;
    const next = Math.min(nextAt ?? Infinity, this.retryAt ?? Infinity);
    this.loop.wakeIn(Number.isFinite(next) ? next - this.clock.now().getTime() : undefined);
    return false;
  }

  /**
   * Claims due jobs and runs them. The claim's statement also reads when the next unclaimed job
   * of these kinds can be claimed (its due time, or the end of a lease), so an idle worker
   * knows how long to sleep without a second query.
   */
  private async claimAndRun(): Promise<{ claimed: number; done: number; nextAt: number | undefined }> {
    // Only kinds this instance can run: during a rolling deploy an older replica
    // leaves jobs of kinds it does not know to the newer ones.
    const kinds = [...this.handlers.keys()];
    if (kinds.length === 0) return { claimed: 0, done: 0, nextAt: undefined };
    const now = this.clock.now();
    const token = `${this.instanceId}:${randomUUID()}`;
    const kindsJson = JSON.stringify(kinds);
    const claim = (em: EntityManager) => em.execute<(Partial<JobRow> & { next_at: Date | string | null })[]>(
      `WITH due AS (
         SELECT id FROM scheduled_jobs
         WHERE done_at IS NULL AND failed_at IS NULL AND run_at <= ? AND kind IN (SELECT jsonb_array_elements_text(?::jsonb))
           AND (locked_until IS NULL OR locked_until <= ?)
         ORDER BY run_at, id LIMIT ? FOR UPDATE SKIP LOCKED),
       claimed AS (
         UPDATE scheduled_jobs j SET locked_until = ?, locked_by = ?, attempts = j.attempts + 1
         FROM due WHERE j.id = due.id
         RETURNING j.id, j.kind, j.payload, j.run_at, j.attempts, j.locked_by),
       later AS (
         SELECT min(GREATEST(run_at, COALESCE(locked_until, run_at))) AS next_at FROM scheduled_jobs
         WHERE done_at IS NULL AND failed_at IS NULL AND kind IN (SELECT jsonb_array_elements_text(?::jsonb))
           AND id NOT IN (SELECT id FROM due))
       SELECT claimed.*, later.next_at FROM later LEFT JOIN claimed ON true`,
      [now, kindsJson, now, this.batchSize, new Date(now.getTime() + this.leaseMs), token, kindsJson],
    );
    const claimed = (result: Awaited<ReturnType<typeof claim>>) =>
      result.filter((r): r is JobRow & { next_at: Date | string | null } => r.id != null);
    // With kinds that load, the claim and their loads share one transaction (one commit).
    const { result, loaded } = this.loaders
      ? await transactional(this.orm, async (em) => {
          const result = await claim(em);
          return { result, loaded: await this.loadClaimed(em, claimed(result)) };
        })
      : { result: await claim(this.orm.em.fork()), loaded: undefined };
    const rows = claimed(result);
    this.onLag?.(rows.length < this.batchSize ? 0 : lagOf(rows, now.getTime()));
    const leaseEnd = Date.now() + this.leaseMs;
    const nextAt = result[0]?.next_at ? new Date(result[0].next_at).getTime() : undefined;
    // At most `concurrency` at once: the claimed rest waits its turn under its lease.
    let done = 0;
    let next = 0;
    const lane = async () => {
      while (next < rows.length) {
        const row = rows[next++]!;
        if (await this.runOne(row, leaseEnd, loaded?.get(row.id))) done++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, rows.length) }, lane));
    return { claimed: rows.length, done, nextAt };
  }


  /**
   * Runs the loads of the claimed jobs whose kind has one, in the claim's transaction: one load per
   * kind, given all of the batch's jobs of that kind. A load that fails is rolled back to before the
   * loads (the claim stays) and every job of the batch reads for itself when it runs: a load saves a
   * transaction, it never decides whether a job runs.
   */
  private async loadClaimed(em: EntityManager, rows: JobRow[]): Promise<Map<string, Loaded<unknown>>> {
    const loaded = new Map<string, Loaded<unknown>>();
    const byKind = new Map<JobLoader<never, unknown>, Job[]>();
    for (const row of rows) {
      const h = this.handlers.get(row.kind);
      if (h?.mode !== 'lease' || !h.load) continue;
      const jobs = byKind.get(h.load) ?? [];
      jobs.push(jobOf(row));
      byKind.set(h.load, jobs);
    }
    if (byKind.size === 0) return loaded;
    await em.execute('SAVEPOINT job_loads');
    try {
      for (const [load, jobs] of byKind) {
        const values = await load(em, jobs as never[]);
        for (const job of jobs) if (values.has(job.id)) loaded.set(job.id, { value: values.get(job.id) });
      }
    } catch (err) {
      this.logger?.warn({ err }, 'job loads failed in the claim; the jobs read for themselves');
      await em.execute('ROLLBACK TO SAVEPOINT job_loads');
      loaded.clear();
    }
    return loaded;
  }

  /**
   * Marks a job done without running it because its purpose was met (a payment's
   * safety-net submission once the payment has moved on), in the caller's
   * transaction. A job a worker holds right now (its lease runs, or its row is
   * locked: `SKIP LOCKED`, no waiting on it) is left alone; its handler finds
   * nothing to do.
   */
  async complete(em: EntityManager, id: string): Promise<void> {
    const now = this.clock.now();
    // In the COMMIT's round trip of the caller's transaction (writeAtCommit): nothing reads it before.
    await writeAtCommit(
      em,
      `UPDATE scheduled_jobs SET done_at = ?, locked_until = NULL
       WHERE id IN (SELECT id FROM scheduled_jobs WHERE id = ? AND done_at IS NULL AND failed_at IS NULL
                      AND (locked_until IS NULL OR locked_until <= ?)
                    FOR UPDATE SKIP LOCKED)`,
      [now, id, now],
    );
  }

  private async runOne(row: JobRow, leaseEnd: number, loaded?: Loaded<unknown>): Promise<boolean> {
    const kind = { kind: row.kind };
    this.metrics?.delay.observe(kind, Math.max(0, this.clock.now().getTime() - new Date(row.run_at).getTime()) / 1000);
    const stopTimer = this.metrics?.duration.startTimer(kind);
    const done = await this.attempt(row, leaseEnd, loaded);
    stopTimer?.();
    this.metrics?.jobs.inc({ ...kind, outcome: done });
    return done === 'done';
  }

  /** Runs a claimed job: `done`, `lost` (its lease was taken over), or failed (`retry`, `dead`). */
  private async attempt(row: JobRow, leaseEnd: number, loaded?: Loaded<unknown>): Promise<'done' | 'lost' | 'retry' | 'dead'> {
    const registered = this.handlers.get(row.kind);
    try {
      if (!registered) throw new Error(`no handler for job kind ${row.kind}`);
      const job = jobOf(row);
      if (registered.mode === 'transaction') {
        // The handler's writes commit with the completion or not at all.
        return await transactional(this.orm, async (em) => {
          if (!(await this.completeClaimed(em, row))) return 'lost' as const;
          await registered.run(job as never, em);
          return 'done' as const;
        });
      }
      // Read, call, then write: the calls run under the lease with no transaction open; the
      // outcome commits with the completion.
      const outcome = await registered.run(job as never, loaded);
      return await transactional(this.orm, async (em) => {
        if (!(await this.completeClaimed(em, row))) return 'lost' as const;
        if (outcome) await outcome(em);
        return 'done' as const;
      });
    } catch (err) {
      const dead = row.attempts >= this.maxAttempts;
      const retryAt = new Date(
        this.clock.now().getTime() + Math.min(300_000, this.retryBaseMs * 2 ** (row.attempts - 1)),
      );
      if (!dead) this.retryAt = Math.min(this.retryAt ?? Infinity, retryAt.getTime());
      this.logger?.[dead ? 'error' : 'warn'](
        { job: row.id, kind: row.kind, attempt: row.attempts, err },
        dead ? 'job dead' : 'job failed, will retry',
      );
      const record = () =>
        this.orm.em.fork().execute(
          `UPDATE scheduled_jobs SET locked_until = NULL, locked_by = NULL, last_error = ?, run_at = ?, failed_at = ?
           WHERE id = ? AND locked_by = ? AND done_at IS NULL`,
          [
            String((err as Error)?.message ?? err).slice(0, 1000),
            retryAt,
            dead ? this.clock.now() : null,
            row.id,
            row.locked_by,
          ],
        );
      await record().catch((e: unknown) => {
        this.logger?.error({ job: row.id, err: e }, 'could not record job failure; retrying until its lease ends');
        void this.failureWrites.retry(record, leaseEnd).then((landed) => {
          if (!landed) this.logger?.error({ job: row.id }, 'job failure not recorded; it runs again after its lease');
          else this.loop.nudge(); // a pass now sees the job's retry time and wakes for it
        });
      });
      return dead ? 'dead' : 'retry';
    }
  }

  /**
   * Marks a claimed job done, in `em` (locking its row), only if this pass still holds it:
   * false when the lease was lost (another worker claimed it since, or it was retired).
   */
  private async completeClaimed(em: EntityManager, row: JobRow): Promise<boolean> {
    const mine = await em.execute<{ id: string }[]>(
      `UPDATE scheduled_jobs SET done_at = ?, locked_until = NULL, last_error = NULL
       WHERE id = ? AND locked_by = ? AND done_at IS NULL AND failed_at IS NULL RETURNING id`,
      [this.clock.now(), row.id, row.locked_by],
    );
    return mine.length > 0;
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.failureWrites.drain();
  }

  /** True while it receives the notifications of new jobs (and so does not poll). */
  get listening(): boolean {
    return this.loop.listening;
  }
}
