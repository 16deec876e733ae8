import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, idUuid, newId } from '@sluice/core';
import { createLogger } from '@sluice/logging';
import { migrate, openStore, transactional, type MikroORM } from '@sluice/store';
import { EVENT_TABLES_MIGRATIONS } from '@sluice/events';
import { createTestDatabase, cuttableLink, eventually, type TestDatabase } from '@sluice/testing';
import { DeliveryWorker } from '../src/app/delivery.worker.js';
import type { WebhookSender, WebhookTargetSource } from '../src/app/ports.js';
import { HttpWebhookSender } from '../src/clients/http-webhook.sender.js';
import type { AttemptResult } from '../src/domain/delivery.js';
import { DeliveryRepository } from '../src/store/delivery.repository.js';
import { migrations } from '../src/store/migrations.js';
import { Receiver, newSecret } from './support/fakes.js';

// Leases against real Postgres, driven by a manual clock: delivery workers on their own connection pools
// play dispatcher replicas, and each polling pass is one explicit `claimOnce()` (no poll loop runs).

const TIMEOUT_MS = 1_000;
const logger = createLogger('webhook-dispatcher-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const repo = new DeliveryRepository();
const receiver = new Receiver();
const endpoints = new Map<string, string>();
const targets: WebhookTargetSource = {
  get: async (platformId) => ({ endpoint: endpoints.get(platformId), secrets: [newSecret()] }),
};
let db: TestDatabase;
let ormA: MikroORM;
let ormB: MikroORM;
const held: HeldSender[] = [];
const workers: DeliveryWorker[] = [];

/** A sender whose attempts stay in flight until the test answers them (nothing goes over the network). */
class HeldSender {
  readonly calls: { webhookId: string; answer: (ok: boolean) => void; answered: boolean }[] = [];
  private listeners: (() => void)[] = [];
  private closed = false;

  constructor() {
    held.push(this);
  }

  send(url: string, _secrets: readonly string[], webhookId: string): Promise<AttemptResult> {
    return new Promise((resolve) => {
      const call = {
        webhookId,
        answered: false,
        answer: (ok: boolean) => {
          call.answered = true;
          resolve({
            url,
            attemptedAt: new Date(),
            durationMs: 1,
            ok,
            ...(ok ? { status: 200, body: 'ok' } : { error: 'socket hang up' }),
          });
        },
      };
      this.calls.push(call);
      for (const l of this.listeners.splice(0)) l();
      if (this.closed) call.answer(false);
    });
  }

  /** Answers every attempt in flight, and every later one at once, with a failure. */
  close(): void {
    this.closed = true;
    for (const c of this.calls) if (!c.answered) c.answer(false);
  }

  /** The n-th attempt (1-based) once it has started; fails if the worker's lanes end before it does. */
  async attempt(worker: DeliveryWorker, n: number): Promise<HeldSender['calls'][number]> {
    const lanesEnded = worker.idle().then(() => 'ended' as const);
    while (this.calls.length < n) {
      const next = new Promise<'called'>((r) => this.listeners.push(() => r('called')));
      if ((await Promise.race([next, lanesEnded])) === 'ended' && this.calls.length < n)
        throw new Error(`the worker stopped after ${this.calls.length} attempts, expected attempt ${n}`);
    }
    return this.calls[n - 1]!;
  }
}

function worker(
  orm: MikroORM,
  clock: ManualClock,
  sender: Pick<WebhookSender, 'send'>,
  owner: string,
  concurrency: number,
): DeliveryWorker {
  const w = new DeliveryWorker({
    orm,
    repo,
    targets,
    sender,
    events: {
      answered: async () => {},
      endpointDisabled: async () => ({ eventId: newId('Event'), occurredAt: new Date().toISOString(), data: {} }),
    },
    clock,
    logger,
    schedule: [5_000],
    concurrency,
    pollIntervalMs: 60_000,
    timeoutMs: TIMEOUT_MS,
    owner,
  });
  workers.push(w);
  return w;
}

/** `n` PENDING deliveries of one platform, due at `dueAt`, in creation order; returns their webhook ids. */
async function pending(platformId: string, n: number, dueAt: Date): Promise<string[]> {
  const ids: string[] = [];
  await transactional(ormB, async (em) => {
    for (let i = 0; i < n; i++) {
      const eventId = newId('Event');
      const webhookId = `Webhook:${idUuid(eventId)}`;
      await repo.insertPending(em, {
        id: newId('WebhookDelivery'),
        webhookId,
        platformId,
        eventId,
        type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED',
        payload: JSON.stringify({ id: webhookId, type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED', data: { n: i } }),
        answered: false,
        now: dueAt,
      });
      ids.push(webhookId);
    }
  });
  return ids;
}

async function rowsOf(platformId: string) {
  const rows = await ormB.em
    .fork()
    .execute<
      { status: string; attempt_count: number; lease_owner: string | null; lease_until: string | null }[]
    >(
      'SELECT status, attempt_count, lease_owner, lease_until FROM webhook_deliveries WHERE platform_id = ? ORDER BY seq',
      [platformId],
    );
  return rows.map((r) => ({ ...r, leaseUntil: r.lease_until === null ? null : Date.parse(r.lease_until) }));
}

const store = () =>
  openStore({
    databaseUrl: db.url,
    schema: 'webhooks',
    entities: [],
    migrations: [...EVENT_TABLES_MIGRATIONS, ...migrations],
    poolMax: 3,
  });

beforeAll(async () => {
  db = await createTestDatabase('webhooklease');
  ormA = await store();
  await migrate(ormA, 'webhooks');
  ormB = await store();
  await receiver.start();
});

// Each test starts from an empty table (a failed test must not leave due rows to the next one).
beforeEach(async () => {
  await ormB.em.fork().execute('DELETE FROM webhook_deliveries');
});

afterAll(async () => {
  // Answer whatever a failed test left in flight, so every worker can stop.
  for (const s of held) s.close();
  for (const w of workers) await w.stop();
  await ormA?.close();
  await ormB?.close();
  await receiver.stop();
  await db?.drop();
});

describe('delivery leases', () => {
  it("a dispatcher killed mid-claim holds its platform's webhooks for one attempt lease, then another instance delivers them all, in order, once", async () => {
    const t0 = Date.parse('2026-03-01T12:00:00.000Z');
    const clock = new ManualClock(t0);
    const platformId = newId('Platform');
    endpoints.set(platformId, receiver.url('/crashed'));
    const webhookIds = await pending(platformId, 10, new Date(t0 - 60_000));

    // Instance A claims the platform's 10 due webhooks and starts the first attempt; then it dies (its
    // attempt never returns, nothing of it runs again until the end of the test).
    const deadSender = new HeldSender();
    const dead = worker(ormA, clock, deadSender, 'dead', 1);
    expect(await dead.claimOnce()).toBe(10);
    const cut = await deadSender.attempt(dead, 1);
    expect(cut.webhookId).toBe(webhookIds[0]);
    const lease = dead.leaseMs;
    expect(lease).toBe(TIMEOUT_MS + 30_000);

    // Every lease it held runs out one attempt lease after its last attempt started (not n leases for
    // the n-th delivery of its claim).
    const leased = await rowsOf(platformId);
    expect(leased.map((r) => [r.status, r.lease_owner])).toEqual(webhookIds.map(() => ['PENDING', 'dead']));
    expect(leased.map((r) => r.leaseUntil! - t0)).toEqual(webhookIds.map(() => lease));

    // Instance B, polling. Up to the end of that lease the cut attempt may still be in flight: B takes
    // nothing of the platform (no concurrent second attempt of that webhook, nor one out of order).
    const liveSender = new HttpWebhookSender({
      timeoutMs: TIMEOUT_MS,
      allowPrivateTargets: true,
      maxResponseBytes: 4096,
      userAgent: 'Sluice-Webhooks/live',
    });
    const live = worker(ormB, clock, liveSender, 'live', 4);
    clock.set(t0 + lease);
    expect(await live.claimOnce()).toBe(0);
    // The first pass after it: B claims the whole platform and delivers every webhook, the cut one again.
    clock.set(t0 + lease + 1);
    expect(await live.claimOnce()).toBe(10);
    await live.idle();
    expect(receiver.at('/crashed').map((r) => r.headers['webhook-id'])).toEqual(webhookIds);
    expect((await rowsOf(platformId)).map((r) => [r.status, r.attempt_count, r.lease_owner])).toEqual(
      webhookIds.map(() => ['DELIVERED', 1, null]),
    );

    // Had A only stalled, its late answer changes nothing and it sends nothing more: its leases are gone.
    cut.answer(false);
    await Promise.race([dead.idle(), deadSender.attempt(dead, 2).catch(() => undefined)]);
    expect(deadSender.calls).toHaveLength(1);
    await dead.idle();
    expect((await rowsOf(platformId)).map((r) => r.status)).toEqual(webhookIds.map(() => 'DELIVERED'));
    expect(receiver.at('/crashed')).toHaveLength(10);
  });

  it('a live dispatcher keeps the rest of its claim leased attempt by attempt, however long the batch takes', async () => {
    const t0 = Date.parse('2026-03-02T12:00:00.000Z');
    const clock = new ManualClock(t0);
    const platformId = newId('Platform');
    endpoints.set(platformId, receiver.url('/slow-batch'));
    const webhookIds = await pending(platformId, 5, new Date(t0 - 1_000));
    const slowSender = new HeldSender();
    const slow = worker(ormA, clock, slowSender, 'slow', 1);
    const otherSender = new HeldSender();
    const other = worker(ormB, clock, otherSender, 'other', 4);
    expect(await slow.claimOnce()).toBe(5);
    for (let i = 0; i < webhookIds.length; i++) {
      const call = await slowSender.attempt(slow, i + 1);
      expect(call.webhookId).toBe(webhookIds[i]);
      // Each attempt takes its whole lease: still, the other instance gets none of the platform's
      // webhooks, neither the one in flight nor those queued behind it.
      clock.advance(slow.leaseMs);
      expect(await other.claimOnce()).toBe(0);
      const rows = await rowsOf(platformId);
      for (const r of rows.slice(i)) {
        expect(r.lease_owner).toBe('slow');
        expect(r.leaseUntil!).toBeGreaterThanOrEqual(clock.now().getTime());
      }
      call.answer(true);
    }
    await slow.idle();
    expect(otherSender.calls).toHaveLength(0);
    expect(slowSender.calls.map((c) => c.webhookId)).toEqual(webhookIds);
    expect((await rowsOf(platformId)).map((r) => [r.status, r.attempt_count, r.lease_owner])).toEqual(
      webhookIds.map(() => ['DELIVERED', 1, null]),
    );
  });
  it('a lane whose record failed (the database went away mid-attempt) gives its webhooks back once the database is back, not a lease later', async () => {
    const t0 = Date.parse('2026-03-01T12:00:00.000Z');
    const clock = new ManualClock(t0);
    const platformId = newId('Platform');
    endpoints.set(platformId, receiver.url('/outage'));
    const webhookIds = await pending(platformId, 3, new Date(t0 - 60_000));
    // This worker reaches Postgres through a forwarder that can cut it off (as a Postgres restart does).
    const { url: viaLink, link } = await cuttableLink(db.url, 5432);
    const orm = await openStore({
      databaseUrl: viaLink,
      schema: 'webhooks',
      entities: [],
      migrations: [...EVENT_TABLES_MIGRATIONS, ...migrations],
      poolMax: 2,
    });
    const sender = new HeldSender();
    const w = worker(orm, clock, sender, 'cut-off', 1);
    try {
      expect(await w.claimOnce()).toBe(3);
      const first = await sender.attempt(w, 1);
      expect(first.webhookId).toBe(webhookIds[0]);
      // The endpoint answers, but the database is gone before the attempt is recorded: the lane fails.
      link.interrupt();
      first.answer(true);
      await w.idle();
      expect((await rowsOf(platformId)).map((r) => [r.status, r.lease_owner])).toEqual(
        webhookIds.map(() => ['PENDING', 'cut-off']),
      );
      link.restore();
      // Given back within the retry pauses, due 5 s (targetRetryMs) later, not after the 31 s lease.
      await eventually(async () => (await rowsOf(platformId)).every((r) => r.lease_owner === null), 5_000);
      const rows = await ormB.em
        .fork()
        .execute<{ next_attempt_at: string; attempt_count: number }[]>(
          'SELECT next_attempt_at, attempt_count FROM webhook_deliveries WHERE platform_id = ? ORDER BY seq',
          [platformId],
        );
      expect(rows.map((r) => [Date.parse(r.next_attempt_at) - t0, r.attempt_count])).toEqual(
        webhookIds.map(() => [5_000, 0]),
      );
    } finally {
      link.restore();
      sender.close();
      await w.stop();
      await orm.close();
      await link.close();
    }
  });
});
