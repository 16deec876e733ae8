import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, idUuid, newId } from '@sluice/core';
import { createLogger } from '@sluice/logging';
import { migrate, openStore, transactional, type MikroORM } from '@sluice/store';
import { EVENT_TABLES_MIGRATIONS } from '@sluice/events';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import { DeliveryWorker } from '../src/app/delivery.worker.js';
import type { DispatcherEvents, WebhookSender, WebhookTarget } from '../src/app/ports.js';
import type { AttemptResult } from '../src/domain/delivery.js';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from '../src/domain/retry-schedule.js';
import { DeliveryRepository } from '../src/store/delivery.repository.js';
import { migrations } from '../src/store/migrations.js';

// The retry schedule, Retry-After, sandbox scaling and endpoint disabling, against real Postgres and
// driven by a manual clock: each pass is one explicit claimOnce(), the sender answers as told (nothing
// goes over the network), and time moves only when the test moves it.

const logger = createLogger('webhook-dispatcher-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const repo = new DeliveryRepository();
const H = 3_600_000;
let db: TestDatabase;
let orm: MikroORM;
const clock = new ManualClock('2026-03-01T00:00:00Z');
const targets = new Map<string, WebhookTarget>();
/** The answer of each attempt, per platform (default 500). */
const answers = new Map<string, (n: number) => Partial<AttemptResult>>();
const attempts = new Map<string, Date[]>();
const disabled: { platformId: string; url: string; reason: string }[] = [];

const sender: WebhookSender = {
  async send(url) {
    const platformId = [...targets.entries()].find(([, t]) => t.endpoint === url)![0];
    const list = attempts.get(platformId) ?? [];
    list.push(clock.now());
    attempts.set(platformId, list);
    const a = answers.get(platformId)?.(list.length) ?? { status: 500 };
    const ok = a.status !== undefined && a.status >= 200 && a.status < 300;
    return { url, attemptedAt: clock.now(), durationMs: 1, ok, ...a };
  },
};
const events: DispatcherEvents = {
  answered: async () => {},
  endpointDisabled: async (_em, platformId, e) => {
    disabled.push({ platformId, url: e.url, reason: e.reason });
    return { eventId: newId('Event'), occurredAt: e.disabledAt.toISOString(), data: { ...e } };
  },
};

function worker(o: { disableAfterMs?: number; sandboxTimeScale?: number } = {}) {
  return new DeliveryWorker({
    orm,
    repo,
    targets: { get: async (id) => targets.get(id) ?? { secrets: [] } },
    sender,
    events,
    clock,
    logger,
    schedule: parseRetrySchedule(DEFAULT_RETRY_SCHEDULE),
    concurrency: 4,
    pollIntervalMs: 60_000,
    timeoutMs: 1000,
    random: () => 0.5, // no jitter: the schedule's exact delays
    disableAfterMs: o.disableAfterMs ?? 1000 * H,
    sandboxTimeScale: o.sandboxTimeScale ?? 1,
  });
}

/** A platform with an endpoint and `n` PENDING deliveries due now; returns the platform id and webhook ids. */
async function platformWith(n: number, environment: 'SANDBOX' | 'PRODUCTION' = 'PRODUCTION') {
  const platformId = newId('Platform');
  targets.set(platformId, {
    endpoint: `https://hooks.example.com/${platformId}`,
    secrets: ['whsec_x'],
    environment,
  });
  const webhookIds: string[] = [];
  await transactional(orm, async (em) => {
    for (let i = 0; i < n; i++) {
      const eventId = newId('Event');
      const webhookId = `Webhook:${idUuid(eventId)}`;
      webhookIds.push(webhookId);
      await repo.insertPending(em, {
        id: newId('WebhookDelivery'),
        webhookId,
        platformId,
        eventId,
        type: 'OUTGOING_PAYMENT.COMPLETED',
        payload: JSON.stringify({ id: webhookId, data: { i } }),
        answered: false,
        now: clock.now(),
      });
    }
  });
  return { platformId, webhookIds };
}

async function delivery(webhookId: string) {
  const rows = await orm.em
    .fork()
    .execute<
      { status: string; attempt_count: number; next_attempt_at: Date | null; last_error: string | null }[]
    >(
      `SELECT status, attempt_count, next_attempt_at, last_error FROM webhook_deliveries WHERE webhook_id = ?`,
      [webhookId],
    );
  return rows[0]!;
}

/** One pass: claims what is due and waits for its lanes. */
async function pass(w: DeliveryWorker): Promise<void> {
  await w.claimOnce();
  await w.idle();
}

beforeAll(async () => {
  db = await createTestDatabase('whretry');
  orm = await openStore({
    databaseUrl: db.url,
    schema: 'webhooks',
    entities: [],
    migrations: [...EVENT_TABLES_MIGRATIONS, ...migrations],
  });
  await migrate(orm, 'webhooks');
});

afterAll(async () => {
  await orm?.close(true);
  await db?.drop();
});

describe('retry schedule (manual clock)', () => {
  it('attempts immediately, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; then FAILED', async () => {
    const w = worker();
    const { platformId, webhookIds } = await platformWith(1);
    const start = clock.now().getTime();
    const expected = [0, 5_000, 300_000, 1_800_000, 2 * H, 5 * H, 10 * H, 10 * H];
    let at = start;
    for (const [i, delay] of expected.entries()) {
      at += delay;
      clock.set(at - 1);
      await pass(w);
      expect(attempts.get(platformId)?.length ?? 0, `attempt ${i + 1} not before it is due`).toBe(i);
      clock.set(at);
      await pass(w);
      expect(attempts.get(platformId)!.length, `attempt ${i + 1} when due`).toBe(i + 1);
    }
    const d = await delivery(webhookIds[0]!);
    expect(d).toMatchObject({ status: 'FAILED', attempt_count: 8, next_attempt_at: null });
    clock.advance(100 * H);
    await pass(w);
    expect(attempts.get(platformId)).toHaveLength(8);
  });

  it('honours Retry-After when it asks for longer than the schedule, not when it asks for less', async () => {
    const w = worker();
    const { platformId, webhookIds } = await platformWith(1);
    answers.set(platformId, (n) =>
      n === 1 ? { status: 503, retryAfter: '3600' } : { status: 429, retryAfter: '1' },
    );
    const t0 = clock.now().getTime();
    await pass(w);
    expect(new Date((await delivery(webhookIds[0]!)).next_attempt_at!).getTime() - t0).toBe(H);
    clock.set(t0 + H);
    await pass(w);
    // Second failure: the schedule says 5 min, Retry-After only 1 s.
    expect(new Date((await delivery(webhookIds[0]!)).next_attempt_at!).getTime() - (t0 + H)).toBe(300_000);
  });

  it('scales the delays of a sandbox platform by SANDBOX_TIME_SCALE', async () => {
    const w = worker({ sandboxTimeScale: 0.01 });
    const { webhookIds } = await platformWith(1, 'SANDBOX');
    const t0 = clock.now().getTime();
    await pass(w);
    expect(new Date((await delivery(webhookIds[0]!)).next_attempt_at!).getTime() - t0).toBe(50);
  });
});

describe('endpoint disabling (manual clock)', () => {
  it('410 Gone disables the endpoint at once: pending deliveries FAILED, WEBHOOK_ENDPOINT.DISABLED, logged; nothing more is sent', async () => {
    const w = worker();
    const { platformId, webhookIds } = await platformWith(3);
    answers.set(platformId, () => ({ status: 410 }));
    await pass(w);
    expect(attempts.get(platformId)).toHaveLength(1);
    expect(disabled.filter((x) => x.platformId === platformId)).toEqual([
      { platformId, url: targets.get(platformId)!.endpoint, reason: 'the endpoint answered 410 Gone' },
    ]);
    for (const id of webhookIds) expect((await delivery(id)).status).toBe('FAILED');
    expect((await delivery(webhookIds[1]!)).last_error).toMatch(/endpoint was disabled/);
    const logged = await orm.em
      .fork()
      .execute<{ status: string }[]>(
        `SELECT status FROM webhook_deliveries WHERE platform_id = ? AND type = 'WEBHOOK_ENDPOINT.DISABLED'`,
        [platformId],
      );
    expect(logged).toEqual([{ status: 'SKIPPED' }]);
    // A later event of the platform is not sent (the endpoint stays disabled until set anew).
    expect(await transactional(orm, (em) => repo.platformHasEndpoint(em, platformId))).toBe(false);
  });

  it('an endpoint failing every attempt for the whole span is disabled; one success in between resets it', async () => {
    const w = worker({ disableAfterMs: 3 * H });
    const { platformId, webhookIds } = await platformWith(1);
    const t0 = clock.now().getTime();
    // Attempts at 0, 5 s, 5 min 5 s, 35 min 5 s, 2 h 35 min 5 s (< 3 h: still enabled), then 7 h 35 min 5 s.
    for (const at of [0, 5_000, 305_000, 2_105_000, 9_305_000]) {
      clock.set(t0 + at);
      await pass(w);
    }
    expect(disabled.filter((x) => x.platformId === platformId)).toEqual([]);
    clock.set(t0 + 9_305_000 + 5 * H);
    await pass(w);
    expect(attempts.get(platformId)).toHaveLength(6);
    expect(disabled.filter((x) => x.platformId === platformId).map((x) => x.reason)).toEqual([
      expect.stringMatching(/^every attempt failed for 7 h/),
    ]);
    expect((await delivery(webhookIds[0]!)).status).toBe('FAILED');

    const healthy = await platformWith(1);
    answers.set(healthy.platformId, (n) => (n === 2 ? { status: 200 } : { status: 500 }));
    const t1 = clock.now().getTime();
    await pass(w); // fails at t1
    clock.set(t1 + 5_000);
    await pass(w); // succeeds: healthy again
    expect(
      await orm.em
        .fork()
        .execute(`SELECT failing_since FROM webhook_platforms WHERE platform_id = ?`, [healthy.platformId]),
    ).toEqual([{ failing_since: null }]);
  });
});
