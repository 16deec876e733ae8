import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dropStreams, eventually, natsUrl, queriesDuring, testPrefix, type TestDatabase } from '@sluice/testing';
import { migrate, openStore, transactional, type MikroORM } from '@sluice/store';
import { createLogger } from '@sluice/logging';
import { Metrics, select, sumOf } from '@sluice/metrics';
import { Type } from '@sinclair/typebox';
import type { EventContract } from '@sluice/api';
import { connectBus, ensureStreams, EventConsumer, EVENT_TABLES_MIGRATIONS, notifyOnCommit, observeOutbox, on, Outbox, OutboxRelay, PgNotifications, streamName, subjectFor, type Bus, type EventEnvelope } from '../src/index.js';
import pg from 'pg';

/** A contract of the test's own (the kit does not care which catalogue a contract comes from). */
const THING_HAPPENED: EventContract = {
  type: 'THING.HAPPENED',
  owner: 'accounts',
  data: Type.Object({ i: Type.Integer(), amount: Type.Optional(Type.Any()) }),
  webhook: false,
  description: 'a test event',
};

const logger = createLogger('events-test', 'silent');

describe('outbox → relay → JetStream → consumer', () => {
  let db: TestDatabase;
  let orm: MikroORM;
  let bus: Bus;
  let url: string;
  const prefix = testPrefix('ev');

  beforeAll(async () => {
    db = await createTestDatabase('events');
    orm = await openStore({ databaseUrl: db.url, schema: 'evtest', entities: [], migrations: EVENT_TABLES_MIGRATIONS });
    await migrate(orm, 'evtest');
    url = await natsUrl();
    bus = await connectBus(url, 'events-test');
    await ensureStreams(bus.jsm, prefix, ['accounts']);
  });

  afterAll(async () => {
    await bus?.close();
    await orm?.close(true);
    await db?.drop();
    await dropStreams(url, prefix);
  });

  it('publishes only committed events, once each, and consumers handle each once', async () => {
    const outbox = new Outbox(prefix, 'accounts');
    await transactional(orm, async (em) => {
      for (let i = 0; i < 30; i++) await outbox.add(em, THING_HAPPENED, { platformId: 'Platform:x', data: { i, amount: 5n } });
    });
    // A rolled-back transaction leaves no event behind.
    await expect(
      transactional(orm, async (em) => {
        await outbox.add(em, THING_HAPPENED, { platformId: 'Platform:x', data: { i: -1 } });
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');

    // The outbox lag is the age of the oldest unpublished event, read when scraped.
    const metrics = new Metrics('events-test', { processMetrics: false });
    observeOutbox(orm, metrics, logger);
    await orm.em.fork().execute(`UPDATE outbox SET occurred_at = now() - interval '90 seconds' WHERE seq = (SELECT min(seq) FROM outbox)`);
    expect(sumOf(await metrics.samples(), 'outbox_oldest_unpublished_age_seconds')).toBeGreaterThanOrEqual(90);

    // Two relay replicas at once.
    const r1 = new OutboxRelay(orm, bus.js, logger, { batchSize: 7 });
    const r2 = new OutboxRelay(orm, bus.js, logger, { batchSize: 7 });
    await Promise.all([r1.publishBatch(), r2.publishBatch(), r1.publishBatch(), r2.publishBatch(), r1.publishBatch()]);
    r1.start();
    r2.start();
    const stream = streamName(prefix, 'accounts');
    await eventually(async () => (await bus.jsm.streams.info(stream)).state.messages === 30);
    await r1.stop();
    await r2.stop();
    const left = await orm.em.fork().execute<{ n: string }[]>('SELECT count(*) AS n FROM outbox WHERE published_at IS NULL');
    expect(Number(left[0]!.n)).toBe(0);
    expect(select(await metrics.samples(), 'outbox_oldest_unpublished_age_seconds').map((x) => x.value)).toEqual([0]);

    // A relay that crashed after publishing re-publishes with the same id: JetStream drops it.
    await orm.em.fork().execute('UPDATE outbox SET published_at = NULL WHERE seq IN (SELECT seq FROM outbox ORDER BY seq LIMIT 5)');
    await new OutboxRelay(orm, bus.js, logger).publishBatch();
    expect((await bus.jsm.streams.info(stream)).state.messages).toBe(30);

    const seen: EventEnvelope<unknown>[] = [];
    let failOnce = true;
    const consumer = new EventConsumer({
      bus,
      orm,
      logger,
      stream,
      durable: 'test-consumer',
      filterSubjects: [`${prefix}.accounts.>`],
      handlers: [
        on(THING_HAPPENED, async (_em, data, ev) => {
          if (failOnce && (data as { i: number }).i === 3) {
            failOnce = false;
            throw new Error('transient');
          }
          seen.push(ev);
        }),
      ],
    });
    await consumer.start({ metrics });
    await eventually(async () => seen.length === 30, 20_000);
    // Deliveries by outcome, the one redelivery, and the durable consumer's backlog from JetStream.
    const m = await eventually(async () => {
      const samples = await metrics.samples();
      return sumOf(samples, 'events_consumer_deliveries_total', { outcome: 'handled' }) === 30 && samples;
    });
    const labels = { consumer: 'test-consumer', event_type: 'THING.HAPPENED' };
    expect(sumOf(m, 'events_consumer_deliveries_total', { ...labels, outcome: 'failed' })).toBe(1);
    // At least the failed one came again (delivery is at least once: a slow ack may bring more).
    expect(sumOf(m, 'events_consumer_redeliveries_total', { consumer: 'test-consumer' })).toBeGreaterThanOrEqual(1);
    const timed = ['handled', 'failed', 'duplicate'].map((outcome) => sumOf(m, 'events_consumer_deliveries_total', { ...labels, outcome }));
    expect(sumOf(m, 'events_consumer_handling_seconds_count', { consumer: 'test-consumer' })).toBe(timed.reduce((a, b) => a + b));
    expect(select(m, 'events_consumer_pending_messages', { consumer: 'test-consumer', stream }).map((x) => x.value)).toEqual([0]);
    await consumer.stop();
    const ids = new Set(seen.map((e) => e.id));
    expect(ids.size).toBe(30);
    expect(seen[0]!.type).toBe('THING.HAPPENED');
    expect(seen[0]!.data).toMatchObject({ amount: 5 });
    const inbox = await orm.em.fork().execute<{ n: string }[]>('SELECT count(*) AS n FROM inbox');
    expect(Number(inbox[0]!.n)).toBe(30);
  });

  it('an idle relay does not poll: a commit notifies it (LISTEN/NOTIFY) and it publishes at once', async () => {
    const stream = streamName(prefix, 'accounts');
    const before = (await bus.jsm.streams.info(stream)).state.messages;
    // No safety poll within the test: only the notification can wake it.
    const relay = new OutboxRelay(orm, bus.js, logger, { safetyMs: 3_600_000 });
    relay.start();
    try {
      await eventually(async () => relay.listening);
      // Its start-up pass may still be running once it listens (CI, loaded, saw its statements in the
      // second below): measured from the first quiet 200 ms on. A relay that polled would never be quiet.
      await eventually(async () => (await queriesDuring(orm, async () => new Promise((r) => setTimeout(r, 200)))) === 0);
      const queries = await queriesDuring(orm, async () => new Promise((r) => setTimeout(r, 1000)));
      expect(queries, 'statements run by an idle relay in a second').toBe(0);
      await transactional(orm, (em) =>
        new Outbox(prefix, 'accounts').add(em, THING_HAPPENED, { platformId: 'Platform:x', data: { i: 77 } }),
      );
      await eventually(async () => (await bus.jsm.streams.info(stream)).state.messages === before + 1, 20_000);
    } finally {
      await relay.stop();
    }
  });

  it('a burst of commits, some landing while a pass runs, is all published without a safety poll; a partial batch runs no confirming pass', async () => {
    const stream = streamName(prefix, 'accounts');
    const before = (await bus.jsm.streams.info(stream)).state.messages;
    const relay = new OutboxRelay(orm, bus.js, logger, { safetyMs: 3_600_000, batchSize: 3 });
    relay.start();
    try {
      await eventually(async () => relay.listening);
      // 40 commits from 8 writers: passes run while others commit, and full batches (3) go on at once.
      await Promise.all(
        Array.from({ length: 8 }, async (_, w) => {
          for (let i = 0; i < 5; i++) {
            await transactional(orm, (em) =>
              new Outbox(prefix, 'accounts').add(em, THING_HAPPENED, { platformId: 'Platform:x', data: { i: w * 10 + i } }),
            );
            await new Promise((r) => setTimeout(r, Math.random() * 15));
          }
        }),
      );
      await eventually(async () => (await bus.jsm.streams.info(stream)).state.messages === before + 40, 20_000);
      // Once drained, one more commit costs one pass: the relay's statements for it are its SELECT and UPDATE.
      await new Promise((r) => setTimeout(r, 200));
      const queries = await queriesDuring(orm, async () => {
        await transactional(orm, (em) =>
          new Outbox(prefix, 'accounts').add(em, THING_HAPPENED, { platformId: 'Platform:x', data: { i: 99 } }),
        );
        await eventually(async () => (await bus.jsm.streams.info(stream)).state.messages === before + 41, 20_000);
        await new Promise((r) => setTimeout(r, 300));
      });
      const left = await orm.em.fork().execute<{ n: string }[]>('SELECT count(*) AS n FROM outbox WHERE published_at IS NULL');
      expect(Number(left[0]!.n)).toBe(0);
      // The writer's transaction (3 statements) and one pass (begin, select, update, commit): 7; a confirming
      // empty pass after it (begin, select, commit) made it 10.
      expect(queries, 'statements for one event').toBeLessThanOrEqual(9);
    } finally {
      await relay.stop();
    }
  });

  it('a commit wakes this process once and every other listener once: its own NOTIFY does not come back to it', async () => {
    const channel = `evtest_echo_${Date.now()}`;
    const woken = { here: 0, replica: 0 };
    // No worker here takes the work (onNotify does not answer true): the other processes are told.
    const here = new PgNotifications({ connectionString: db.url, channels: [channel], onNotify: () => void woken.here++, orm });
    const replica = new PgNotifications({ connectionString: db.url, channels: [channel], onNotify: () => void woken.replica++ });
    await Promise.all([here.start(), replica.start()]);
    const marker = new pg.Client({ connectionString: db.url });
    await marker.connect();
    try {
      await transactional(orm, async (em) => notifyOnCommit(em, channel));
      expect(woken.here, 'woken at once by its own commit').toBe(1);
      await eventually(async () => woken.replica === 1);
      // A NOTIFY from elsewhere, queued after this process's own: once it has arrived, the echo (had
      // it been delivered) would have arrived before it.
      await marker.query('SELECT pg_notify($1, $2)', [channel, '']);
      await eventually(async () => woken.replica === 2 && woken.here === 2);
      expect(woken).toEqual({ here: 2, replica: 2 });
    } finally {
      await marker.end();
      await Promise.all([here.stop(), replica.stop()]);
    }
  });

  it('a commit whose work a worker of this process takes sends no NOTIFY: the replicas are not woken for it', async () => {
    const channel = `evtest_taken_${Date.now()}`;
    const woken = { here: 0, replica: 0 };
    const here = new PgNotifications({
      connectionString: db.url,
      channels: [channel],
      onNotify: () => {
        woken.here++;
        return true; // taken here
      },
      orm,
    });
    const replica = new PgNotifications({ connectionString: db.url, channels: [channel], onNotify: () => void woken.replica++ });
    await Promise.all([here.start(), replica.start()]);
    const marker = new pg.Client({ connectionString: db.url });
    await marker.connect();
    try {
      await transactional(orm, async (em) => notifyOnCommit(em, channel));
      expect(woken.here, 'woken at once by its own commit').toBe(1);
      // A NOTIFY from elsewhere, sent after the commit: once the replica has it, a NOTIFY of the
      // commit (had one been sent) would have arrived before it.
      await marker.query('SELECT pg_notify($1, $2)', [channel, '']);
      await eventually(async () => woken.replica >= 1);
      // (Its NOTIFY would be sent on another connection than the marker's: give it a moment more.)
      await new Promise((r) => setTimeout(r, 300));
      expect(woken.replica, 'the replica heard only the other NOTIFY').toBe(1);
    } finally {
      await marker.end();
      await Promise.all([here.stop(), replica.stop()]);
    }
  });

  it('refuses, in the producer’s transaction, an event of another owner or data that breaks its contract', async () => {
    const outbox = new Outbox(prefix, 'payments');
    await expect(
      transactional(orm, (em) => outbox.add(em, THING_HAPPENED, { platformId: 'Platform:x', data: { i: 1 } })),
    ).rejects.toThrow('payments does not own THING.HAPPENED');
    const own = new Outbox(prefix, 'accounts');
    await expect(
      transactional(orm, (em) =>
        own.add(em, THING_HAPPENED, { platformId: 'Platform:x', data: { i: 'one' } as never }),
      ),
    ).rejects.toThrow('THING.HAPPENED data breaks its contract: /i');
  });

  it('dead-letters an event whose data breaks its contract (never hands it to the handler) and goes on', async () => {
    const stream = streamName(prefix, 'accounts');
    const subject = subjectFor(prefix, 'accounts', THING_HAPPENED.type);
    const envelope = (id: string, data: unknown) =>
      JSON.stringify({ id, type: THING_HAPPENED.type, occurredAt: new Date().toISOString(), platformId: 'Platform:x', data });
    await bus.js.publish(subject, envelope('Event:bad', { i: 'not a number' }), { msgID: 'Event:bad' });
    await bus.js.publish(subject, envelope('Event:good', { i: 1000 }), { msgID: 'Event:good' });
    const handled: unknown[] = [];
    const consumer = new EventConsumer({
      bus,
      orm,
      logger,
      stream,
      durable: 'test-dead-letter',
      filterSubjects: [subject],
      handlers: [on(THING_HAPPENED, async (_em, data) => void handled.push(data))],
    });
    await consumer.start();
    // Both are consumed: the good one handled, the bad one terminated (nothing pending, nothing redelivered).
    await eventually(async () => handled.some((d) => (d as { i: number }).i === 1000), 20_000);
    await eventually(async () => {
      const info = await bus.jsm.consumers.info(stream, 'test-dead-letter');
      return info.num_pending === 0 && info.num_ack_pending === 0;
    }, 20_000);
    await consumer.stop();
    expect(handled.filter((d) => typeof (d as { i: unknown }).i !== 'number')).toEqual([]);
    const inbox = await orm.em.fork().execute<{ event_id: string }[]>(
      `SELECT event_id FROM inbox WHERE consumer = 'test-dead-letter'`,
    );
    const ids = inbox.map((r) => r.event_id);
    expect(ids).toContain('Event:good');
    expect(ids).not.toContain('Event:bad');
  });

  it('prunes published rows older than the retention, in batches; never an unpublished row, nor a newer one', async () => {
    const sql = (text: string, params: unknown[] = []) => orm.em.fork().execute<Record<string, unknown>[]>(text, params);
    const ids = async () =>
      (await sql(`SELECT id FROM outbox WHERE platform_id = 'Platform:prune' ORDER BY id`)).map((r) => r.id as string);
    // 25 rows published two days ago, one published 23 hours ago, and one never published though
    // written 30 days ago (NATS was down all along): the retention is a day.
    await sql(
      `INSERT INTO outbox (id, subject, type, platform_id, envelope, occurred_at, published_at)
       SELECT 'Event:prune-old-' || lpad(g::text, 2, '0'), 's', 'T', 'Platform:prune', '{}', now() - interval '3 days', now() - interval '2 days'
       FROM generate_series(1, 25) g`,
    );
    await sql(
      `INSERT INTO outbox (id, subject, type, platform_id, envelope, occurred_at, published_at) VALUES
         ('Event:prune-recent', 's', 'T', 'Platform:prune', '{}', now() - interval '23 hours', now() - interval '23 hours')`,
    );
    const unpublished = (
      await transactional(orm, (em) =>
        new Outbox(prefix, 'accounts').add(em, THING_HAPPENED, { platformId: 'Platform:prune', data: { i: 30 } }),
      )
    ).id;
    await sql(`UPDATE outbox SET occurred_at = now() - interval '30 days' WHERE id = ?`, [unpublished]);
    const metrics = new Metrics('events-test', { processMetrics: false });
    const relay = new OutboxRelay(orm, bus.js, logger, { retentionSeconds: 86_400, pruneBatch: 10, metrics });
    // Its statement can find the rows by the published_at index (on a table this small the planner
    // would scan it anyway, so scans are turned off for the question).
    const plan = await transactional(orm, async (em) => {
      await em.execute('SET LOCAL enable_seqscan = off');
      return em.execute<Record<string, string>[]>(
        `EXPLAIN SELECT seq FROM outbox WHERE published_at < now() - 86400::integer * interval '1 second' LIMIT 10 FOR UPDATE SKIP LOCKED`,
      );
    });
    expect(plan.map((r) => Object.values(r)[0]).join('\n')).toMatch(/Index Scan using outbox_published/);

    expect(await relay.prune()).toBe(25); // three statements: 10, 10, 5
    expect(await ids()).toEqual(['Event:prune-recent', unpublished].sort());
    expect(sumOf(await metrics.samples(), 'outbox_pruned_events_total')).toBe(25);
    expect(await relay.prune(), 'nothing left past the retention').toBe(0);
    // The other tests' rows, published moments ago, are all still there.
    expect(Number((await sql(`SELECT count(*) AS n FROM outbox WHERE platform_id <> 'Platform:prune'`))[0]!.n)).toBeGreaterThanOrEqual(30);

    // Running, the relay publishes the old unpublished row and later prunes it by itself once it is
    // past the retention; the recent one stays.
    const running = new OutboxRelay(orm, bus.js, logger, { retentionSeconds: 86_400, pruneEveryMs: 100, metrics });
    running.start();
    try {
      await eventually(async () => (await sql(`SELECT published_at FROM outbox WHERE id = ?`, [unpublished]))[0]?.published_at != null);
      await sql(`UPDATE outbox SET published_at = now() - interval '25 hours' WHERE id = ?`, [unpublished]);
      await eventually(async () => (await ids()).join() === 'Event:prune-recent');
    } finally {
      await running.stop();
    }
    expect(sumOf(await metrics.samples(), 'outbox_pruned_events_total')).toBe(26);
    // Without a retention a relay deletes nothing.
    await sql(`UPDATE outbox SET published_at = now() - interval '400 days' WHERE id = 'Event:prune-recent'`);
    expect(await new OutboxRelay(orm, bus.js, logger).prune()).toBe(0);
    expect(await ids()).toEqual(['Event:prune-recent']);
  });
});

describe('the outbox table on a database created before traces', () => {
  it('gains its traceparent column from the events kit migration that follows, rows and all', async () => {
    const db = await createTestDatabase('evtrace');
    try {
      // A schema migrated when only the first events migration existed, with an event in its outbox.
      const before = await openStore({ databaseUrl: db.url, schema: 'evold', entities: [], migrations: EVENT_TABLES_MIGRATIONS.slice(0, 1) });
      expect(await migrate(before, 'evold')).toEqual(['0000_event_tables']);
      await before.em.fork().execute(
        `INSERT INTO outbox (id, subject, type, platform_id, envelope, occurred_at) VALUES ('Event:old', 's', 'T', 'Platform:x', '{}', now())`,
      );
      await before.close(true);
      const after = await openStore({ databaseUrl: db.url, schema: 'evold', entities: [], migrations: EVENT_TABLES_MIGRATIONS });
      try {
        expect(await migrate(after, 'evold')).toEqual(['0000_event_tables_trace', '0000_event_tables_published_index']);
        const rows = await after.em.fork().execute<{ id: string; traceparent: string | null }[]>(`SELECT id, traceparent FROM outbox`);
        expect(rows).toEqual([{ id: 'Event:old', traceparent: null }]);
        // Tracing off: a new event is written with no trace context.
        await transactional(after, (em) => new Outbox('p', 'accounts').add(em, THING_HAPPENED, { platformId: 'Platform:x', data: { i: 1 } }));
        const added = await after.em.fork().execute<{ traceparent: string | null }[]>(`SELECT traceparent FROM outbox WHERE id <> 'Event:old'`);
        expect(added).toEqual([{ traceparent: null }]);
      } finally {
        await after.close(true);
      }
    } finally {
      await db.drop();
    }
  });
});
