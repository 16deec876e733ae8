import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestDatabase,
  dropStreams,
  eventually,
  natsUrl,
  testPrefix,
  type TestDatabase,
} from '@sluice/testing';
import { idUuid, newId } from '@sluice/core';
import { EVENT_TABLES_MIGRATIONS, streamName } from '@sluice/events';
import { migrate, openStore, transactional, type EntityManager } from '@sluice/store';
import { migrations } from '../src/store/migrations.js';
import { DeliveryRepository } from '../src/store/delivery.repository.js';
import { startDispatcher, type Dispatcher } from './support/dispatcher.js';
import { FakeIdentity, Publisher, Receiver, balanceUpdated } from './support/fakes.js';

let db: TestDatabase;
let nats: string;
const prefix = testPrefix('whr');
const receiver = new Receiver();
const idp = new FakeIdentity();
let publisher: Publisher;
const replicas: Dispatcher[] = [];

beforeAll(async () => {
  db = await createTestDatabase('webhookreplicas');
  nats = await natsUrl();
  await receiver.start();
  await idp.start();
  for (const name of ['A', 'B']) {
    const svc = await startDispatcher(
      { databaseUrl: db.url, natsUrl: nats, prefix, identityPort: idp.port },
      {
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_POLL_INTERVAL_MS: '10',
        WEBHOOK_CONCURRENCY: '3',
        WEBHOOK_USER_AGENT: `Sluice-Webhooks/${name}`,
      },
    );
    replicas.push(svc);
  }
  publisher = await Publisher.connect(nats, prefix);
});

afterAll(async () => {
  await publisher?.close();
  for (const r of replicas) await r.stop();
  await idp.stop();
  await receiver.stop();
  await db?.drop();
  await dropStreams(nats, prefix);
});

/** A PENDING TEST delivery of `platformId` made at `at` (due then), for the tests that drive the repository. */
function insertTest(em: EntityManager, platformId: string, at: Date, id = newId('WebhookDelivery')): Promise<boolean> {
  const ev = newId('Event');
  return new DeliveryRepository().insertPending(em, {
    id,
    webhookId: `Webhook:${idUuid(ev)}`,
    platformId,
    eventId: ev,
    type: 'TEST',
    payload: '{}',
    answered: false,
    now: at,
  });
}

describe('several dispatcher replicas', () => {
  it('deliver every webhook exactly once, sharing the work', async () => {
    const platforms = Array.from({ length: 8 }, (_, i) => idp.platform(receiver.url(`/r${i}`)));
    for (let i = 0; i < 8; i++)
      receiver.behave(`/r${i}`, (_r, _n, res) => setTimeout(() => res.end('ok'), 15));
    const events = [];
    for (let round = 0; round < 6; round++) {
      for (const p of platforms) {
        const ev = publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', p.id, balanceUpdated(round));
        events.push(ev);
        await publisher.publish('accounts', ev);
      }
    }
    const orm = replicas[0]!.deps.orm;
    await eventually(async () => {
      const r = await orm.em
        .fork()
        .execute<{ n: string }[]>(`SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'DELIVERED'`);
      return Number(r[0]!.n) === events.length;
    }, 30_000);
    const ids = receiver.requests.map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(events.length);
    expect(new Set(ids)).toEqual(new Set(events.map((e) => `Webhook:${idUuid(e.id)}`)));
    const attempts = await orm.em
      .fork()
      .execute<{ n: string }[]>('SELECT count(*) AS n FROM webhook_delivery_attempts');
    expect(Number(attempts[0]!.n)).toBe(events.length);
    // Both replicas took part.
    const agents = new Set(receiver.requests.map((r) => r.headers['user-agent']));
    expect(agents).toEqual(new Set(['Sluice-Webhooks/A', 'Sluice-Webhooks/B']));
  });

  it('a platform without an endpoint costs no transaction on any replica, and one set on either is heard by both', async () => {
    const orm = replicas[0]!.deps.orm;
    const count = async (q: string, params: unknown[]) => (await orm.em.fork().execute(q, params)).length;
    const p = idp.platform(undefined);
    await publisher.publish(
      'identity',
      publisher.envelope('PLATFORM.CREATED', p.id, { name: 'p', environment: 'SANDBOX' }),
    );
    await eventually(
      async () => (await count('SELECT 1 FROM webhook_platforms WHERE platform_id = ?', [p.id])) === 1,
    );
    const event = (n: number) =>
      publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', p.id, balanceUpdated(n));
    // Both replicas learn (and cache) that the platform has no endpoint.
    for (const r of replicas) expect(await r.graph.relay.nothingToDo(event(0))).toBe(true);
    const skipped = Array.from({ length: 6 }, (_, i) => event(100 + i));
    for (const ev of skipped) await publisher.publish('accounts', ev);
    // Acked without an inbox row or a delivery: the consumers move past them.
    await eventually(async () => {
      const info = await replicas[0]!.deps.bus.jsm.consumers.info(
        streamName(prefix, 'accounts'),
        'webhook-dispatcher-accounts',
      );
      return info.num_pending === 0 && info.num_ack_pending === 0;
    });
    for (const ev of skipped) expect(await count('SELECT 1 FROM inbox WHERE event_id = ?', [ev.id])).toBe(0);
    expect(await count('SELECT 1 FROM webhook_deliveries WHERE platform_id = ?', [p.id])).toBe(0);

    // The platform sets an endpoint: one replica handles the identity event, the other hears it.
    idp.platform(receiver.url('/set-later'), p.secrets, p.id);
    await publisher.publish(
      'identity',
      publisher.envelope('PLATFORM_CONFIG.UPDATED', p.id, {
        supportedCurrencies: ['USD'],
        embeddedWalletCurrencies: [],
        umaDomain: null,
        webhookEndpoint: receiver.url('/set-later'),
        webhookSigningSecretRotated: false,
      }),
    );
    await eventually(async () => {
      for (const r of replicas) if (await r.graph.relay.nothingToDo(event(0))) return false;
      return true;
    });
    const delivered = Array.from({ length: 8 }, (_, i) => event(200 + i));
    for (const ev of delivered) await publisher.publish('accounts', ev);
    await eventually(async () => receiver.at('/set-later').length === delivered.length, 20_000);
    expect(new Set(receiver.at('/set-later').map((r) => r.headers['webhook-id']))).toEqual(
      new Set(delivered.map((e) => `Webhook:${idUuid(e.id)}`)),
    );
  });

  it('concurrent claims never lease one delivery (or one platform) to two workers', async () => {
    // A database of its own: a claim takes the platforms with the oldest due rows first, so rows that
    // other tests of this file left due (retries, other rounds) could take every claimer's share and
    // leave these rows unclaimed; and no real worker claims here.
    const own = await createTestDatabase('webhookclaims');
    const orm = await openStore({
      databaseUrl: own.url,
      schema: 'webhooks',
      entities: [],
      migrations: [...EVENT_TABLES_MIGRATIONS, ...migrations],
      poolMax: 8,
    });
    await migrate(orm, 'webhooks');
    try {
      await claimRace(orm);
    } finally {
      await orm.close(true);
      await own.drop();
    }
  });

  async function claimRace(orm: Awaited<ReturnType<typeof openStore>>): Promise<void> {
    const repo = new DeliveryRepository();
    const now = new Date();
    // Six claimers racing may, in principle, all lose a round (each skipping what another holds); a
    // round that claimed none of its rows is run again with fresh rows (at most three), and its rows'
    // states are kept for the message should every round come back empty.
    let platformIds: string[] = [];
    let claims: Awaited<ReturnType<DeliveryRepository['claimDue']>>[] = [];
    const emptyRounds: unknown[] = [];
    for (let round = 0; round < 3; round++) {
      platformIds = Array.from({ length: 30 }, () => newId('Platform'));
      await transactional(orm, async (em) => {
        for (const platformId of platformIds) {
          for (let i = 0; i < 4; i++) {
            await insertTest(em, platformId, new Date(now.getTime() - 3_600_000));
          }
        }
      });
      claims = await Promise.all(
        Array.from({ length: 6 }, (_, w) =>
          transactional(orm, (em) =>
            repo.claimDue(em, { owner: `test-${round}-${w}`, now, maxPlatforms: 50, perPlatform: 2, leaseMs: 60_000 }),
          ),
        ),
      );
      if (claims.flat().some((d) => platformIds.includes(d.platformId))) break;
      emptyRounds.push(
        await orm.em
          .fork()
          .execute(
            `SELECT status, lease_owner, count(*)::int AS n FROM webhook_deliveries WHERE platform_id = ANY(?::text[]) GROUP BY 1, 2`,
            [`{${platformIds.join(',')}}`],
          ),
      );
    }
    const mine = claims.flat().filter((d) => platformIds.includes(d.platformId));
    const deliveryIds = mine.map((d) => d.id);
    expect(new Set(deliveryIds).size).toBe(deliveryIds.length);
    const ownerOfPlatform = new Map<string, string>();
    for (const d of mine) {
      const prev = ownerOfPlatform.get(d.platformId);
      expect(prev === undefined || prev === d.leaseOwner).toBe(true);
      ownerOfPlatform.set(d.platformId, d.leaseOwner!);
    }
    // At most perPlatform per platform, oldest first.
    for (const pid of ownerOfPlatform.keys())
      expect(mine.filter((d) => d.platformId === pid).length).toBeLessThanOrEqual(2);
    expect(mine.length, `rounds that claimed nothing: ${JSON.stringify(emptyRounds)}`).toBeGreaterThan(0);
    // Nothing else can be claimed for those platforms while their leases run.
    const again = await transactional(orm, (em) =>
      repo.claimDue(em, { owner: 'late', now, maxPlatforms: 100, perPlatform: 10, leaseMs: 60_000 }),
    );
    expect(again.filter((d) => ownerOfPlatform.has(d.platformId))).toHaveLength(0);
  }

  it('purges finished deliveries past retention with their attempts, never pending ones', async () => {
    const orm = replicas[0]!.deps.orm;
    const repo = new DeliveryRepository();
    const platformId = newId('Platform');
    const now = new Date();
    const daysAgo = (d: number) => new Date(now.getTime() - d * 86_400_000);
    const ids = {
      old: newId('WebhookDelivery'),
      recent: newId('WebhookDelivery'),
      pending: newId('WebhookDelivery'),
    };
    await transactional(orm, async (em) => {
      for (const [key, id] of Object.entries(ids)) {
        await insertTest(em, platformId, daysAgo(key === 'recent' ? 1 : 40), id);
        // Due in the future so the running workers leave them alone.
        await em.execute('UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ?', [daysAgo(-1), id]);
      }
      await em.execute(
        `UPDATE webhook_deliveries SET status = 'DELIVERED', next_attempt_at = NULL, completed_at = created_at WHERE id IN (?, ?)`,
        [ids.old, ids.recent],
      );
      await repo.insertAttempt(em, {
        deliveryId: ids.old,
        attempt: 1,
        url: 'https://example.com/',
        attemptedAt: daysAgo(40),
        durationMs: 5,
        responseStatus: 200,
        responseBody: 'ok',
        error: null,
        succeeded: true,
      });
    });
    const deleted = await transactional(orm, (em) => repo.purgeCompleted(em, daysAgo(30), 1000));
    expect(deleted).toBe(1);
    const left = await orm.em
      .fork()
      .execute<{ id: string }[]>('SELECT id FROM webhook_deliveries WHERE platform_id = ? ORDER BY id', [
        platformId,
      ]);
    expect(left.map((r) => r.id).sort()).toEqual([ids.recent, ids.pending].sort());
    const attempts = await orm.em
      .fork()
      .execute('SELECT 1 FROM webhook_delivery_attempts WHERE delivery_id = ?', [ids.old]);
    expect(attempts).toHaveLength(0);
  });
});
