import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { ManualClock, systemClock } from '@sluice/core';
import { createLogger, currentContext, withContext } from '@sluice/logging';
import { inheritedDeadline, withDeadline } from '@sluice/rpc';
import { openStore, transactional, type MikroORM } from '@sluice/store';
import { EVENT_TABLES_MIGRATIONS, listenerName } from '@sluice/events';
import { startService, type RunningService } from '@sluice/runtime';
import {
  TEST_MASTER_KEYS,
  createTestDatabase,
  dropStreams,
  eventually,
  natsUrl,
  queriesDuring,
  cuttableLink,
  testPrefix,
  type TestDatabase,
} from '@sluice/testing';
import { paymentsService, type PaymentsConfig, type PaymentsGraph } from '../src/index.js';
import { composePayments } from '../src/compose.js';
import { JobScheduler, jobsChannel, maxJobConcurrency } from '../src/store/job-scheduler.js';
import { migrations } from '../src/store/migrations.js';

// The durable scheduler against real Postgres: the payments service migrates the
// schema; extra scheduler instances with their own connection pools play replicas.

let db: TestDatabase;
let prefix: string;
let running: RunningService<PaymentsConfig, PaymentsGraph>;
let sql: pg.Pool;
const orms: MikroORM[] = [];
const logger = createLogger('scheduler-test', process.env.TEST_LOG_LEVEL ?? 'silent');

async function replicaOrm(): Promise<MikroORM> {
  const orm = await openStore({
    databaseUrl: db.url,
    schema: 'payments',
    entities: [],
    migrations: [...EVENT_TABLES_MIGRATIONS, ...migrations],
    poolMax: 5,
  });
  orms.push(orm);
  return orm;
}

beforeAll(async () => {
  db = await createTestDatabase('payjobs');
  prefix = testPrefix('payjobs');
  running = (await startService(paymentsService, {
    DATABASE_URL: db.url,
    NATS_URL: await natsUrl(),
    EVENT_SUBJECT_PREFIX: prefix,
    GRPC_PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...TEST_MASTER_KEYS,
  })) as never;
  sql = new pg.Pool({ connectionString: db.url, max: 4 });
  await sql.query(
    'CREATE TABLE payments.job_effects (job_id text NOT NULL, at timestamptz NOT NULL DEFAULT now())',
  );
});

afterAll(async () => {
  await running?.stop();
  for (const o of orms) await o.close();
  await sql?.end();
  await dropStreams(await natsUrl(), prefix);
  await db?.drop();
});

const effects = async (like: string) =>
  (
    await sql.query<{ job_id: string; n: string }>(
      `SELECT job_id, count(*) AS n FROM payments.job_effects WHERE job_id LIKE $1 GROUP BY job_id`,
      [like],
    )
  ).rows;

/**
 * Two started replicas with a safety poll of a minute (within a test only a notification or a
 * due-time timer wakes them): a worker that runs `kind`, and a producer that runs nothing, whose
 * commits reach the worker through Postgres only.
 */
async function listeningReplicas(kind: string) {
  const ran: string[] = [];
  const workerOrm = await replicaOrm();
  const worker = new JobScheduler(workerOrm, systemClock, { pollMs: 60_000, logger }).register(kind, async (job) => {
    ran.push(job.id);
  });
  const producerOrm = await replicaOrm();
  const producer = new JobScheduler(producerOrm, systemClock, { pollMs: 60_000, logger });
  worker.start();
  producer.start();
  return { ran, worker, workerOrm, producer, producerOrm };
}

describe('JobScheduler', () => {
  it('the running service migrated the job table; its worker leaves kinds it has no handler for alone', async () => {
    const cols = await sql.query(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = 'payments' AND table_name = 'scheduled_jobs'`,
    );
    expect(cols.rows.map((r) => r.column_name)).toEqual(
      expect.arrayContaining(['id', 'kind', 'payload', 'run_at', 'attempts', 'locked_until', 'done_at']),
    );
    await sql.query(
      `INSERT INTO payments.scheduled_jobs (id, kind, run_at) VALUES ('orphan:1', 'kind-from-a-newer-release', now() - interval '1 second')`,
    );
    // A job of a kind it runs, scheduled (and announced) after the orphan: once it is done, the
    // service's worker has claimed with the orphan due.
    await running.graph.scheduler.schedule({ kind: 'receiver-lookups.purge', id: 'orphan:probe' });
    await eventually(
      async () =>
        (await sql.query(`SELECT 1 FROM payments.scheduled_jobs WHERE id = 'orphan:probe' AND done_at IS NOT NULL`))
          .rowCount === 1,
    );
    const row = (
      await sql.query(
        `SELECT attempts, locked_by, done_at FROM payments.scheduled_jobs WHERE id = 'orphan:1'`,
      )
    ).rows[0];
    expect(row).toEqual({ attempts: 0, locked_by: null, done_at: null });
  });

  it('two replicas racing over 200 due jobs run each exactly once, writes and completion together', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    const seen: string[] = [];
    const make = async (name: string) =>
      new JobScheduler(await replicaOrm(), clock, { instanceId: name, batchSize: 7, logger }).register<{
        n: number;
      }>('race', async (job, em) => {
        seen.push(job.id);
        await em.execute('INSERT INTO job_effects (job_id) VALUES (?)', [job.id]);
        await new Promise((r) => setTimeout(r, Math.random() * 3));
      });
    const a = await make('a');
    const b = await make('b');
    for (let i = 0; i < 200; i++) await a.schedule({ kind: 'race', id: `race:${i}`, payload: { n: i } });
    const drain = async (s: JobScheduler) => {
      while ((await s.runDue()) > 0);
    };
    await Promise.all([drain(a), drain(b), drain(a), drain(b)]);
    const rows = await effects('race:%');
    expect(rows).toHaveLength(200);
    expect(rows.every((r) => r.n === '1')).toBe(true);
    expect(new Set(seen).size).toBe(200);
    expect(seen).toHaveLength(200);
    const done = await sql.query(
      `SELECT count(*)::int AS n FROM payments.scheduled_jobs WHERE id LIKE 'race:%' AND done_at IS NOT NULL AND attempts = 1`,
    );
    expect(done.rows[0].n).toBe(200);
  });

  it('runs a job only once it is due, with the delay multiplied by the time scale; scheduling the same id twice keeps one job', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    const ran: string[] = [];
    const s = new JobScheduler(await replicaOrm(), clock, { timeScale: 0.01, logger }).register(
      'timed',
      async (job) => {
        ran.push(job.id);
      },
    );
    await s.schedule({ kind: 'timed', id: 'timed:1', delayMs: 360_000 }); // 6 min × 0.01 = 3.6 s
    await s.schedule({ kind: 'timed', id: 'timed:1', delayMs: 0 });
    const row = await sql.query(`SELECT run_at FROM payments.scheduled_jobs WHERE id = 'timed:1'`);
    expect(new Date(row.rows[0].run_at).toISOString()).toBe('2026-03-01T00:00:03.600Z');
    clock.advance(3_599);
    expect(await s.runDue()).toBe(0);
    clock.advance(1);
    expect(await s.runDue()).toBe(1);
    expect(await s.runDue()).toBe(0);
    expect(ran).toEqual(['timed:1']);
  });

  it('a job claimed by a worker that died runs again once the lease expires, and never while it holds', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    const s = new JobScheduler(await replicaOrm(), clock, { leaseMs: 30_000, logger }).register(
      'lease',
      async (job, em) => {
        await em.execute('INSERT INTO job_effects (job_id) VALUES (?)', [job.id]);
      },
    );
    await s.schedule({ kind: 'lease', id: 'lease:1' });
    // A replica claimed it and crashed before completing: its claim committed, its work did not.
    await sql.query(
      `UPDATE payments.scheduled_jobs SET locked_until = $1, locked_by = 'dead-replica:x', attempts = 1 WHERE id = 'lease:1'`,
      [new Date(clock.now().getTime() + 30_000)],
    );
    clock.advance(29_999);
    expect(await s.runDue()).toBe(0);
    clock.advance(1);
    expect(await s.runDue()).toBe(1);
    expect(await effects('lease:%')).toEqual([{ job_id: 'lease:1', n: '1' }]);
    const row = (
      await sql.query(`SELECT attempts, done_at FROM payments.scheduled_jobs WHERE id = 'lease:1'`)
    ).rows[0];
    expect(row.attempts).toBe(2);
    expect(row.done_at).not.toBeNull();
  });

  it('a failing handler rolls its writes back and retries with backoff; after maxAttempts the job is dead', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    let calls = 0;
    const s = new JobScheduler(await replicaOrm(), clock, {
      retryBaseMs: 1_000,
      maxAttempts: 3,
      logger,
    }).register('flaky', async (job, em) => {
      calls++;
      await em.execute('INSERT INTO job_effects (job_id) VALUES (?)', [job.id]);
      throw new Error(`boom ${calls}`);
    });
    await s.schedule({ kind: 'flaky', id: 'flaky:1' });
    expect(await s.runDue()).toBe(0);
    expect(await s.runDue()).toBe(0); // backoff: not due yet
    clock.advance(1_000);
    await s.runDue();
    clock.advance(2_000);
    await s.runDue();
    clock.advance(3_600_000);
    await s.runDue();
    expect(calls).toBe(3);
    expect(await effects('flaky:%')).toEqual([]);
    const row = (
      await sql.query(
        `SELECT attempts, failed_at, last_error FROM payments.scheduled_jobs WHERE id = 'flaky:1'`,
      )
    ).rows[0];
    expect(row).toMatchObject({ attempts: 3, last_error: 'boom 3' });
    expect(row.failed_at).not.toBeNull();
  });

  it('a failure it could not record (the database went away) is recorded once the database is back: the job reruns after its retry pause, not its lease', async () => {
    // The replica reaches Postgres through a forwarder that can cut it off (as a Postgres restart does).
    const { url: viaLink, link } = await cuttableLink(db.url, 5432);
    const orm = await openStore({
      databaseUrl: viaLink,
      schema: 'payments',
      entities: [],
      migrations: [...EVENT_TABLES_MIGRATIONS, ...migrations],
      poolMax: 2,
    });
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    let calls = 0;
    const s = new JobScheduler(orm, clock, { retryBaseMs: 1_000, leaseMs: 600_000, logger }).registerLeased(
      'outage',
      async () => {
        calls++;
        // The job's call fails because the database went away meanwhile, and so does the write of its failure.
        if (calls === 1) link.interrupt();
        throw new Error(`call failed ${calls}`);
      },
    );
    try {
      await s.schedule({ kind: 'outage', id: 'outage:1' });
      const ran = s.runDue();
      await ran;
      const held = (
        await sql.query(`SELECT locked_until, last_error FROM payments.scheduled_jobs WHERE id = 'outage:1'`)
      ).rows[0];
      // still under its ten-minute lease, its failure unrecorded
      expect(held).toEqual({ locked_until: new Date(clock.now().getTime() + 600_000), last_error: null });
      link.restore();
      await eventually(async () => {
        const r = (
          await sql.query(`SELECT locked_until, last_error, run_at FROM payments.scheduled_jobs WHERE id = 'outage:1'`)
        ).rows[0];
        expect(r.locked_until).toBeNull();
        expect(r.last_error).toBe('call failed 1');
        expect(new Date(r.run_at).getTime()).toBe(clock.now().getTime() + 1_000);
        return true;
      }, 5_000);
      clock.advance(1_000);
      await s.runDue();
      expect(calls).toBe(2);
    } finally {
      link.restore();
      await s.stop();
      await orm.close();
      await link.close();
    }
  });

  it('survives a restart: a job scheduled by one instance is run by a new one started later, via the poll loop', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    const first = new JobScheduler(await replicaOrm(), clock, { logger });
    await first.schedule({
      kind: 'restart',
      id: 'restart:1',
      delayMs: 5_000,
      payload: { quoteId: 'Quote:x' },
    });
    await orms.pop()!.close(); // the first process is gone
    clock.advance(5_000);
    const payloads: unknown[] = [];
    const second = new JobScheduler(await replicaOrm(), clock, { pollMs: 20, logger }).register(
      'restart',
      async (job) => {
        payloads.push(job.payload);
      },
    );
    second.start();
    await eventually(async () => payloads.length === 1, 5_000);
    await second.stop();
    expect(payloads).toEqual([{ quoteId: 'Quote:x' }]);
  });

  it('runs at most `concurrency` jobs at once, so a pool of connections never runs dry of its own jobs', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    // poolMax 5 (replicaOrm): each job holds one connection and takes a second for a read, which with
    // all 20 of a batch at once would wait forever on each other.
    let inFlight = 0;
    let peak = 0;
    const orm = await replicaOrm();
    const s = new JobScheduler(orm, clock, { concurrency: 2, logger }).register('busy', async (job, em) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await orm.em.fork().execute('SELECT pg_sleep(0.02)');
      await em.execute('INSERT INTO job_effects (job_id) VALUES (?)', [job.id]);
      inFlight--;
    });
    for (let i = 0; i < 20; i++) await s.schedule({ kind: 'busy', id: `busy:${i}` });
    expect(await s.runDue()).toBe(20);
    expect(peak).toBe(2);
    expect(await effects('busy:%')).toHaveLength(20);
  });

  it('tells after every claim how far behind it is: for a full batch how long its youngest job had been due, else 0', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    const lags: number[] = [];
    const s = new JobScheduler(await replicaOrm(), clock, {
      batchSize: 3,
      logger,
      onLag: (ms) => lags.push(ms),
    }).register('lagging', async () => undefined);
    // Due at 0, 1, 2, 3 and 4 s; claimed at 10 s, three at a time in due order.
    for (let i = 0; i < 5; i++) await s.schedule({ kind: 'lagging', id: `lagging:${i}`, delayMs: i * 1_000 });
    clock.advance(10_000);
    expect(await s.runDue()).toBe(3); // full: the youngest of 0, 1, 2 s had been due 8 s
    expect(await s.runDue()).toBe(2); // not full: none left waiting
    expect(await s.runDue()).toBe(0);
    expect(lags).toEqual([8_000, 0, 0]);
  });

  it('JOB_CONCURRENCY is at most half of DATABASE_POOL_MAX: a larger one stops the start, naming both', () => {
    expect([maxJobConcurrency(10), maxJobConcurrency(15), maxJobConcurrency(3), maxJobConcurrency(1)]).toEqual([5, 7, 1, 1]);
    // The check is the composition root's first step, before anything is built from the dependencies.
    const compose = (JOB_CONCURRENCY: number, DATABASE_POOL_MAX: number) => () =>
      composePayments({ config: { JOB_CONCURRENCY, DATABASE_POOL_MAX } } as never);
    expect(compose(6, 10)).toThrow('JOB_CONCURRENCY=6 needs DATABASE_POOL_MAX of at least 12 (it is 10)');
    expect(compose(5, 10)).not.toThrow(/JOB_CONCURRENCY/);
  });

  it('complete() retires a job that is no longer needed, but never one a worker holds', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    const orm = await replicaOrm();
    const ran: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const s = new JobScheduler(orm, clock, { logger }).register('net', async (job) => {
      ran.push(job.id);
      if (job.id === 'net:held') await held;
    });
    await s.schedule({ kind: 'net', id: 'net:retired', delayMs: 1_000 });
    await transactional(orm, (em) => s.complete(em, 'net:retired'));
    clock.advance(1_000);
    expect(await s.runDue()).toBe(0);
    expect(ran).toEqual([]);
    // A job being run: complete() skips it (no wait) and the run finishes it.
    await s.schedule({ kind: 'net', id: 'net:held' });
    const running = s.runDue();
    await eventually(async () => ran.includes('net:held'));
    // Returns while the job's transaction still holds the row (waiting on it would hang: release comes after).
    await transactional(orm, (em) => s.complete(em, 'net:held'));
    release();
    expect(await running).toBe(1);
  });

  it('a leased job calls with no transaction open, then writes its outcome with the completion — unless its lease was lost', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    const orm = await replicaOrm();
    // Whether the job's row is free while the handler makes its calls (a transaction holding it would lock it).
    const rowFree = async (id: string) => {
      const c = await sql.connect();
      try {
        await c.query('BEGIN');
        await c.query('SELECT id FROM payments.scheduled_jobs WHERE id = $1 FOR UPDATE NOWAIT', [id]);
        return true;
      } catch {
        return false;
      } finally {
        await c.query('ROLLBACK');
        c.release();
      }
    };
    const free: boolean[] = [];
    const s = new JobScheduler(orm, clock, { logger }).registerLeased('call', async (job) => {
      free.push(await rowFree(job.id));
      // The same job retired by a request meanwhile: complete() leaves a held lease alone.
      await transactional(orm, (em) => s.complete(em, job.id));
      if (job.id === 'call:lost') {
        // Another worker took the job over (this worker outlived its lease): its outcome must not be written.
        await sql.query(`UPDATE payments.scheduled_jobs SET locked_by = 'other:x' WHERE id = $1`, [job.id]);
      }
      return async (em) => {
        await em.execute('INSERT INTO job_effects (job_id) VALUES (?)', [job.id]);
      };
    });
    await s.schedule({ kind: 'call', id: 'call:kept' });
    await s.schedule({ kind: 'call', id: 'call:lost' });
    expect(await s.runDue()).toBe(1);
    expect(free).toEqual([true, true]);
    expect(await effects('call:%')).toEqual([{ job_id: 'call:kept', n: '1' }]);
    const rows = (
      await sql.query(`SELECT id, done_at IS NOT NULL AS done FROM payments.scheduled_jobs WHERE id LIKE 'call:%' ORDER BY id`)
    ).rows;
    expect(rows).toEqual([
      { id: 'call:kept', done: true },
      { id: 'call:lost', done: false },
    ]);
  });

  it("a leased kind's load reads a batch in the claim's own transaction; a load that fails leaves every job of the batch to read for itself, claimed once", async () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    const orm = await replicaOrm();
    const xids: (string | null)[] = [];
    const batches: string[][] = [];
    const got: Record<string, unknown> = {};
    const s = new JobScheduler(orm, clock, { logger }).registerLeased<Record<string, never>, string>(
      'loaded',
      async (job, loaded) => {
        got[job.id] = loaded ? loaded.value : 'read for itself';
      },
      {
        load: async (em, jobs) => {
          batches.push(jobs.map((j) => j.id).sort());
          // The claim's UPDATE gave the transaction an id: a load in its own transaction would see none.
          const rows = await em.execute<{ id: string; xid: string | null; locked_by: string }[]>(
            `SELECT id, pg_current_xact_id_if_assigned()::text AS xid, locked_by FROM scheduled_jobs WHERE id IN (${jobs.map(() => '?').join(', ')})`,
            jobs.map((j) => j.id),
          );
          xids.push(...rows.map((r) => r.xid));
          if (jobs.some((j) => j.id === 'loaded:bad')) await em.execute('SELECT 1 / 0');
          // A job left out of the answer reads for itself.
          return new Map(rows.filter((r) => r.id !== 'loaded:c').map((r) => [r.id, `held by ${r.locked_by}`]));
        },
      },
    );
    await s.schedule({ kind: 'loaded', id: 'loaded:a' });
    await s.schedule({ kind: 'loaded', id: 'loaded:c' });
    await s.schedule({ kind: 'loaded', id: 'loaded:b', delayMs: 1 });
    expect(await s.runDue()).toBe(2);
    // One load for the batch's two jobs of the kind.
    expect(batches).toEqual([['loaded:a', 'loaded:c']]);
    expect(xids).toHaveLength(2);
    expect(xids[0]).not.toBeNull();
    // loaded:a's load saw its own claim (locked_by set by the same transaction)
    expect(Object.keys(got).sort()).toEqual(['loaded:a', 'loaded:c']);
    expect(got['loaded:a']).toMatch(/^held by payments-/);
    expect(got['loaded:c']).toBe('read for itself');

    await s.schedule({ kind: 'loaded', id: 'loaded:bad' });
    clock.advance(1);
    expect(await s.runDue()).toBe(2);
    expect(got['loaded:bad']).toBe('read for itself');
    expect(got['loaded:b']).toBe('read for itself');
    const rows = (
      await sql.query(
        `SELECT id, attempts, done_at IS NOT NULL AS done FROM payments.scheduled_jobs WHERE id LIKE 'loaded:%' ORDER BY id`,
      )
    ).rows;
    expect(rows).toEqual([
      { id: 'loaded:a', attempts: 1, done: true },
      { id: 'loaded:b', attempts: 1, done: true },
      { id: 'loaded:bad', attempts: 1, done: true },
      { id: 'loaded:c', attempts: 1, done: true },
    ]);
  });

  it('runs jobs outside the context of the request that scheduled them (no inherited deadline or request id)', async () => {
    const clock = new ManualClock('2026-03-01T00:00:00Z');
    const seen: { deadline?: number; requestId?: string }[] = [];
    const s = new JobScheduler(await replicaOrm(), clock, { pollMs: 60_000, logger }).register('ctx', async () => {
      seen.push({ deadline: inheritedDeadline(), requestId: currentContext().requestId });
    });
    s.start();
    await new Promise((r) => setTimeout(r, 50)); // the first (empty) pass at start
    // Scheduled while serving a call whose caller has 1 ms left: the woken pass must not inherit it.
    await withContext({ requestId: 'req-ctx' }, () =>
      withDeadline(Date.now() + 1, () => s.schedule({ kind: 'ctx', id: 'ctx:1' })),
    );
    await eventually(async () => seen.length === 1, 5_000);
    await s.stop();
    expect(seen).toEqual([{ deadline: undefined, requestId: undefined }]);
  });

  it('an idle worker runs no query; a job scheduled in a transaction another replica commits wakes it at once (LISTEN/NOTIFY)', async () => {
    const { ran, worker, workerOrm, producer, producerOrm } = await listeningReplicas('wake');
    try {
      await eventually(async () => worker.listening && producer.listening);
      await new Promise((r) => setTimeout(r, 100)); // the pass run on connecting
      const queries = await queriesDuring(workerOrm, () => new Promise((r) => setTimeout(r, 1000)));
      expect(queries, 'statements run by an idle worker in a second').toBe(0);
      await transactional(producerOrm, (em) => producer.schedule({ kind: 'wake', id: 'wake:now' }, em));
      await eventually(async () => ran.includes('wake:now'));
      // Due later, from the other replica beside a job due now: the pass its notification caused ran
      // the one and read when the other falls due (in the claim's statement), and set a timer for it.
      await transactional(producerOrm, async (em) => {
        await producer.schedule({ kind: 'wake', id: 'wake:soon' }, em);
        await producer.schedule({ kind: 'wake', id: 'wake:later', delayMs: 300 }, em);
      });
      await eventually(async () => ran.includes('wake:later'));
      // Due later, scheduled by the worker's own process: its commit sets the timer (no pass, no NOTIFY).
      await transactional(workerOrm, (em) => worker.schedule({ kind: 'wake', id: 'wake:local', delayMs: 300 }, em));
      await eventually(async () => ran.includes('wake:local'));
      // A rolled-back transaction schedules nothing (and announces nothing).
      await expect(
        transactional(producerOrm, async (em) => {
          await producer.schedule({ kind: 'wake', id: 'wake:rolled-back' }, em);
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect((await sql.query(`SELECT 1 FROM payments.scheduled_jobs WHERE id = 'wake:rolled-back'`)).rowCount).toBe(0);
      expect(ran.sort()).toEqual(['wake:later', 'wake:local', 'wake:now', 'wake:soon']);
    } finally {
      await worker.stop();
      await producer.stop();
    }
  });

  it('after its LISTEN connection is killed it reconnects, and a later job still wakes it', async () => {
    const { ran, worker, producer, producerOrm } = await listeningReplicas('rewake');
    const listeners = async () =>
      (
        await sql.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
          [listenerName([jobsChannel('payments')])],
        )
      ).rows.map((r) => r.pid);
    try {
      await eventually(async () => worker.listening && producer.listening);
      // Every LISTEN connection of the channel (these two and the running service's).
      const before = await listeners();
      expect(before.length).toBeGreaterThanOrEqual(2);
      await sql.query(`SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid`, [before]);
      await eventually(async () => {
        const now = await listeners();
        return now.length >= 2 && now.every((pid) => !before.includes(pid)) && worker.listening && producer.listening;
      });
      await transactional(producerOrm, (em) => producer.schedule({ kind: 'rewake', id: 'rewake:1' }, em));
      await eventually(async () => ran.includes('rewake:1'));
    } finally {
      await worker.stop();
      await producer.stop();
    }
  });
});
