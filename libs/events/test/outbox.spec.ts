import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dropStreams, eventually, natsUrl, testPrefix, type TestDatabase } from '@sluice/testing';
import { migrate, openStore, transactional, type MikroORM } from '@sluice/store';
import { createLogger } from '@sluice/logging';
import { connectBus, ensureStreams, EventConsumer, EVENT_TABLES_MIGRATION, Outbox, OutboxRelay, streamName, type Bus, type EventEnvelope } from '../src/index.js';

const logger = createLogger('events-test', 'silent');

describe('outbox → relay → JetStream → consumer', () => {
  let db: TestDatabase;
  let orm: MikroORM;
  let bus: Bus;
  let url: string;
  const prefix = testPrefix('ev');

  beforeAll(async () => {
    db = await createTestDatabase('events');
    orm = await openStore({ databaseUrl: db.url, schema: 'evtest', entities: [], migrations: [EVENT_TABLES_MIGRATION] });
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
      for (let i = 0; i < 30; i++) await outbox.add(em, { type: 'THING.HAPPENED', platformId: 'Platform:x', data: { i, amount: 5n } });
    });
    // A rolled-back transaction leaves no event behind.
    await expect(
      transactional(orm, async (em) => {
        await outbox.add(em, { type: 'THING.HAPPENED', platformId: 'Platform:x', data: { i: -1 } });
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');

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

    // A relay that crashed after publishing re-publishes with the same id: JetStream drops it.
    await orm.em.fork().execute('UPDATE outbox SET published_at = NULL WHERE seq IN (SELECT seq FROM outbox ORDER BY seq LIMIT 5)');
    await new OutboxRelay(orm, bus.js, logger).publishBatch();
    expect((await bus.jsm.streams.info(stream)).state.messages).toBe(30);

    const seen: EventEnvelope[] = [];
    let failOnce = true;
    const consumer = new EventConsumer({
      bus,
      orm,
      logger,
      stream,
      durable: 'test-consumer',
      filterSubjects: [`${prefix}.accounts.>`],
      handle: async (_em, ev) => {
        if (failOnce && (ev.data as { i: number }).i === 3) {
          failOnce = false;
          throw new Error('transient');
        }
        seen.push(ev);
      },
    });
    await consumer.start();
    await eventually(async () => seen.length === 30, 20_000);
    await consumer.stop();
    const ids = new Set(seen.map((e) => e.id));
    expect(ids.size).toBe(30);
    expect(seen[0]!.type).toBe('THING.HAPPENED');
    expect(seen[0]!.data).toMatchObject({ amount: 5 });
    const inbox = await orm.em.fork().execute<{ n: string }[]>('SELECT count(*) AS n FROM inbox');
    expect(Number(inbox[0]!.n)).toBe(30);
  });
});
