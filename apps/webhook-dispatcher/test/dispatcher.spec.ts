import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import {
  createTestDatabase,
  dropStreams,
  eventually,
  natsUrl,
  testPrefix,
  type TestDatabase,
} from '@sluice/testing';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import { webhooks } from '@sluice/contracts';
import { DomainError, idUuid, newId } from '@sluice/core';
import { startDispatcher, type Dispatcher } from './support/dispatcher.js';
import { FakeIdentity, Publisher, Receiver, balanceUpdated, newSecret, sleep } from './support/fakes.js';

let db: TestDatabase;
let nats: string;
const prefix = testPrefix('whd');
const receiver = new Receiver();
const idp = new FakeIdentity();
let publisher: Publisher;
let svc: Dispatcher;
let client: PromiseClient<webhooks.WebhooksServiceClient>;

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return svc.deps.orm.em.fork().execute<T[]>(query, params);
}

async function deliveryOf(webhookId: string) {
  const [d] = await sql<{
    id: string;
    status: string;
    attempt_count: number;
    last_error: string | null;
    next_attempt_at: Date | null;
    payload: string;
  }>('SELECT * FROM webhook_deliveries WHERE webhook_id = ?', [webhookId]);
  return d;
}

async function attemptsOf(deliveryId: string) {
  return sql<{
    attempt: number;
    response_status: number | null;
    error: string | null;
    succeeded: boolean;
    attempted_at: Date;
    duration_ms: number;
  }>('SELECT * FROM webhook_delivery_attempts WHERE delivery_id = ? ORDER BY attempt', [deliveryId]);
}

beforeAll(async () => {
  db = await createTestDatabase('webhooks');
  nats = await natsUrl();
  await receiver.start();
  await idp.start();
  svc = await startDispatcher(
    { databaseUrl: db.url, natsUrl: nats, prefix, identityPort: idp.port },
    {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms',
      WEBHOOK_TIMEOUT_MS: '500',
      WEBHOOK_POLL_INTERVAL_MS: '50',
    },
  );
  publisher = await Publisher.connect(nats, prefix);
  client = createRpcClient(webhooks.WebhooksServiceClient, `127.0.0.1:${svc.port}`, {
    defaultDeadlineMs: 10_000,
  });
});

afterAll(async () => {
  client?.close();
  await publisher?.close();
  await svc?.stop();
  await idp.stop();
  await receiver.stop();
  await db?.drop();
  await dropStreams(nats, prefix);
});

describe('event → webhook', () => {
  it('delivers a public event once, as {id, type, timestamp, data}, signed with every valid secret, even when redelivered', async () => {
    const current = newSecret();
    const previous = newSecret();
    const p = idp.platform(receiver.url('/once'), [current, previous]);
    const data = balanceUpdated(12_345);
    const ev = publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', p.id, data);
    await publisher.publish('accounts', ev);
    // The same event again under another message id (a relay retry past the duplicate window).
    await publisher.publish('accounts', ev, `${ev.id}-again`);

    const webhookId = `Webhook:${idUuid(ev.id)}`;
    await eventually(async () => (await deliveryOf(webhookId))?.status === 'DELIVERED');
    await sleep(500); // give a duplicate the chance to show up
    const got = receiver.at('/once');
    expect(got).toHaveLength(1);
    const req = got[0]!;
    expect(JSON.parse(req.body)).toEqual({
      id: webhookId,
      type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED',
      timestamp: ev.occurredAt,
      data,
    });
    expect(req.headers['webhook-id']).toBe(webhookId);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toMatch(/^Sluice-Webhooks\//);
    expect(req.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(req.body, req.headers)).toEqual(JSON.parse(req.body));
    expect(new Webhook(previous).verify(req.body, req.headers)).toEqual(JSON.parse(req.body));
    expect(() => new Webhook(newSecret()).verify(req.body, req.headers)).toThrow();

    const d = (await deliveryOf(webhookId))!;
    expect(d.attempt_count).toBe(1);
    expect(d.payload).toBe(req.body);
    const attempts = await attemptsOf(d.id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ attempt: 1, response_status: 200, succeeded: true, error: null });
    expect((await sql('SELECT 1 FROM webhook_deliveries WHERE event_id = ?', [ev.id])).length).toBe(1);
  });

  it('ignores internal events', async () => {
    const p = idp.platform(receiver.url('/ignored'));
    const internal = publisher.envelope('CUSTOMER.CREATED', p.id, { customerId: newId('Customer') });
    const kyc = publisher.envelope('CUSTOMER.KYC_APPROVED', p.id, {
      id: newId('Customer'),
      kycStatus: 'APPROVED',
    });
    await publisher.publish('identity', internal);
    await publisher.publish('identity', kyc);
    await eventually(async () => (await deliveryOf(`Webhook:${idUuid(kyc.id)}`))?.status === 'DELIVERED');
    // Same stream, consumed in order: the internal event was acked before any transaction (no inbox
    // row) and produced nothing.
    expect(await sql('SELECT 1 FROM inbox WHERE event_id = ?', [internal.id])).toHaveLength(0);
    expect(await sql('SELECT 1 FROM webhook_deliveries WHERE event_id = ?', [internal.id])).toHaveLength(0);
    expect(receiver.at('/ignored').map((r) => JSON.parse(r.body).type)).toEqual(['CUSTOMER.KYC_APPROVED']);
  });

  it('retries after a 500 with the same body and succeeds, recording both attempts', async () => {
    const p = idp.platform(receiver.url('/retry'));
    receiver.behave('/retry', (_r, n, res) => (n === 1 ? res.writeHead(500).end('boom') : res.end('thanks')));
    const ev = publisher.envelope('OUTGOING_PAYMENT.COMPLETED', p.id, {
      id: newId('Transaction'),
      status: 'COMPLETED',
    });
    await publisher.publish('payments', ev);
    const webhookId = `Webhook:${idUuid(ev.id)}`;
    await eventually(async () => (await deliveryOf(webhookId))?.status === 'DELIVERED');
    const got = receiver.at('/retry');
    expect(got).toHaveLength(2);
    expect(got[1]!.body).toBe(got[0]!.body);
    expect(got[1]!.headers['webhook-id']).toBe(webhookId);
    expect(new Webhook(p.secrets[0]!).verify(got[1]!.body, got[1]!.headers)).toBeTruthy();
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(150); // 200 ms ± 20 %
    const d = (await deliveryOf(webhookId))!;
    expect(d.attempt_count).toBe(2);
    const attempts = await attemptsOf(d.id);
    expect(attempts.map((a) => [a.attempt, a.response_status, a.succeeded])).toEqual([
      [1, 500, false],
      [2, 200, true],
    ]);
    expect(attempts[0]!.error).toBe('endpoint answered HTTP 500');
  });

  it('counts a timeout as a failed attempt', async () => {
    const p = idp.platform(receiver.url('/slow'));
    receiver.behave('/slow', (_r, n, res) => {
      if (n === 1) setTimeout(() => res.end('late'), 1500);
      else res.end('ok');
    });
    const ev = publisher.envelope('INCOMING_PAYMENT.COMPLETED', p.id, { id: newId('Transaction') });
    await publisher.publish('payments', ev);
    const webhookId = `Webhook:${idUuid(ev.id)}`;
    await eventually(async () => (await deliveryOf(webhookId))?.status === 'DELIVERED');
    const attempts = await attemptsOf((await deliveryOf(webhookId))!.id);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({
      succeeded: false,
      response_status: null,
      error: 'timed out after 500 ms',
    });
    expect(attempts[0]!.duration_ms).toBeGreaterThanOrEqual(450);
    expect(attempts[1]).toMatchObject({ succeeded: true, response_status: 200 });
  });

  it('marks a delivery FAILED when the schedule is exhausted', async () => {
    const p = idp.platform(receiver.url('/down'));
    receiver.behave('/down', (_r, _n, res) => res.writeHead(503).end('down'));
    const ev = publisher.envelope('OUTGOING_PAYMENT.FAILED', p.id, { id: newId('Transaction') });
    await publisher.publish('payments', ev);
    const webhookId = `Webhook:${idUuid(ev.id)}`;
    await eventually(async () => (await deliveryOf(webhookId))?.status === 'FAILED');
    const d = (await deliveryOf(webhookId))!;
    expect(d.attempt_count).toBe(4); // first attempt + 3 retries
    expect(d.next_attempt_at).toBeNull();
    expect(d.last_error).toBe('endpoint answered HTTP 503');
    await sleep(500);
    expect(receiver.at('/down')).toHaveLength(4);
  });

  it('skips (and records) webhooks of a platform without an endpoint', async () => {
    const p = idp.platform(undefined);
    const ev = publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', p.id, balanceUpdated(1));
    await publisher.publish('accounts', ev);
    const webhookId = `Webhook:${idUuid(ev.id)}`;
    await eventually(async () => (await deliveryOf(webhookId))?.status === 'SKIPPED');
    const d = (await deliveryOf(webhookId))!;
    expect(d.last_error).toBe('no webhook endpoint configured');
    expect(d.attempt_count).toBe(0);
    expect(await attemptsOf(d.id)).toHaveLength(0);
  });

  it('waits for identity when it is unavailable, without spending attempts', async () => {
    const p = idp.platform(receiver.url('/idp-down'));
    idp.failures.set(p.id, 3); // more than the gRPC client's own retries on UNAVAILABLE
    const ev = publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', p.id, balanceUpdated(2));
    await publisher.publish('accounts', ev);
    const webhookId = `Webhook:${idUuid(ev.id)}`;
    // The gRPC client retries UNAVAILABLE itself; the worker then waits 5 s before asking again.
    await eventually(async () => (await deliveryOf(webhookId))?.status === 'DELIVERED', 20_000);
    expect((await deliveryOf(webhookId))!.attempt_count).toBe(1);
    expect(receiver.at('/idp-down')).toHaveLength(1);
    expect(idp.failures.get(p.id)).toBe(0);
  });

  it("delivers one platform's webhooks in event order, and a slow platform does not hold up others", async () => {
    const ordered = idp.platform(receiver.url('/ordered'));
    const slow = idp.platform(receiver.url('/hanging'));
    receiver.behave('/hanging', () => undefined); // never answers: every attempt times out (500 ms)
    const slowEvents = Array.from({ length: 3 }, (_, i) =>
      publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', slow.id, balanceUpdated(i)),
    );
    for (const ev of slowEvents) await publisher.publish('accounts', ev);
    const events = Array.from({ length: 6 }, (_, i) =>
      publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', ordered.id, balanceUpdated(i)),
    );
    for (const ev of events) await publisher.publish('accounts', ev);
    await eventually(async () => receiver.at('/ordered').length === 6);
    expect(receiver.at('/ordered').map((r) => JSON.parse(r.body).id)).toEqual(
      events.map((e) => `Webhook:${idUuid(e.id)}`),
    );
    // The hanging platform still has webhooks waiting for an attempt or a retry.
    const pending = await sql('SELECT 1 FROM webhook_deliveries WHERE platform_id = ? AND status = ?', [
      slow.id,
      'PENDING',
    ]);
    expect(pending.length).toBeGreaterThan(0);
  });
});

describe('request–response webhook (INCOMING_PAYMENT.PENDING)', () => {
  /** The answer the dispatcher wrote to its outbox for payments, once it exists. */
  const answerFor = (transactionId: string) =>
    eventually(async () => {
      const rows = await sql<{ envelope: { data: Record<string, unknown> } }>(
        `SELECT envelope FROM outbox WHERE type = 'INCOMING_PAYMENT.APPROVAL_ANSWERED' AND envelope->'data'->>'transactionId' = ?`,
        [transactionId],
      );
      return rows.length ? rows.map((r) => r.envelope.data) : undefined;
    });

  it('makes one attempt and relays the answer (status and body) to payments, whatever it is; no retry', async () => {
    const p = idp.platform(receiver.url('/approval'));
    receiver.behave('/approval', (_r, _n, res) =>
      res.writeHead(403, { 'content-type': 'application/json' }).end('{"reason":"RESTRICTED_JURISDICTION"}'),
    );
    const transactionId = newId('Transaction');
    const ev = publisher.envelope('INCOMING_PAYMENT.PENDING', p.id, { id: transactionId, status: 'PENDING' });
    await publisher.publish('payments', ev);
    const webhookId = `Webhook:${idUuid(ev.id)}`;
    const answers = await answerFor(transactionId);
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({
      transactionId,
      webhookId,
      outcome: 'RESPONDED',
      responseStatus: 403,
      responseBody: '{"reason":"RESTRICTED_JURISDICTION"}',
    });
    const d = (await deliveryOf(webhookId))!;
    expect(d).toMatchObject({ status: 'FAILED', attempt_count: 1, next_attempt_at: null });
    await sleep(500); // the schedule's 200 ms retry would have happened by now
    expect(receiver.at('/approval')).toHaveLength(1);
    expect(
      new Webhook(p.secrets[0]!).verify(
        receiver.at('/approval')[0]!.body,
        receiver.at('/approval')[0]!.headers,
      ),
    ).toBeTruthy();
  });

  it('relays TIMED_OUT when the endpoint does not answer within the timeout, NO_ENDPOINT when there is none', async () => {
    const slow = idp.platform(receiver.url('/approval-slow'));
    receiver.behave('/approval-slow', (_r, _n, res) => setTimeout(() => res.end('late'), 1500));
    const none = idp.platform(undefined);
    const t1 = newId('Transaction');
    const t2 = newId('Transaction');
    await publisher.publish('payments', publisher.envelope('INCOMING_PAYMENT.PENDING', slow.id, { id: t1 }));
    await publisher.publish('payments', publisher.envelope('INCOMING_PAYMENT.PENDING', none.id, { id: t2 }));
    expect((await answerFor(t1))[0]).toMatchObject({ outcome: 'TIMED_OUT', error: 'timed out after 500 ms' });
    expect((await answerFor(t2))[0]).toMatchObject({ outcome: 'NO_ENDPOINT' });
  });
});

describe('cost proportional to endpoints', () => {
  const count = async (q: string, params: unknown[]) => (await sql(q, params)).length;

  it('a platform identity says has no endpoint costs no delivery row; setting one makes its events deliverable', async () => {
    const p = idp.platform(undefined);
    const config = (webhookEndpoint: string | null) =>
      publisher.envelope('PLATFORM_CONFIG.UPDATED', p.id, {
        supportedCurrencies: ['USD'],
        embeddedWalletCurrencies: [],
        umaDomain: null,
        webhookEndpoint,
        webhookSigningSecretRotated: false,
      });
    const created = publisher.envelope('PLATFORM.CREATED', p.id, { name: 'p', environment: 'SANDBOX' });
    await publisher.publish('identity', created);
    await eventually(
      async () => (await count('SELECT 1 FROM webhook_platforms WHERE platform_id = ?', [p.id])) === 1,
    );
    const before = publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', p.id, balanceUpdated(1));
    await publisher.publish('accounts', before);
    // A platform with an endpoint behind it on the same stream: once its webhook is out, `before` was handled.
    const other = idp.platform(receiver.url('/behind'));
    const marker = publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', other.id, balanceUpdated(1));
    await publisher.publish('accounts', marker);
    await eventually(async () => (await deliveryOf(`Webhook:${idUuid(marker.id)}`))?.status === 'DELIVERED');
    // Acked without a transaction: no inbox row, no delivery.
    expect(await count('SELECT 1 FROM inbox WHERE event_id = ?', [before.id])).toBe(0);
    expect(await count('SELECT 1 FROM webhook_deliveries WHERE platform_id = ?', [p.id])).toBe(0);

    idp.platform(receiver.url('/now-on'), p.secrets, p.id);
    await publisher.publish('identity', config(receiver.url('/now-on')));
    await eventually(
      async () =>
        (
          await sql<{ has_endpoint: boolean }>(
            'SELECT has_endpoint FROM webhook_platforms WHERE platform_id = ?',
            [p.id],
          )
        )[0]?.has_endpoint === true,
    );
    const after = publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', p.id, balanceUpdated(2));
    await publisher.publish('accounts', after);
    await eventually(async () => (await deliveryOf(`Webhook:${idUuid(after.id)}`))?.status === 'DELIVERED');
    expect(receiver.at('/now-on')).toHaveLength(1);
  });

  it('a platform never heard of gets one SKIPPED delivery; what identity said then spares the next ones', async () => {
    const p = idp.platform(undefined);
    const first = publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', p.id, balanceUpdated(3));
    await publisher.publish('accounts', first);
    await eventually(async () => (await deliveryOf(`Webhook:${idUuid(first.id)}`))?.status === 'SKIPPED');
    const second = publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', p.id, balanceUpdated(4));
    await publisher.publish('accounts', second);
    const other = idp.platform(receiver.url('/behind-second'));
    const marker = publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', other.id, balanceUpdated(4));
    await publisher.publish('accounts', marker);
    await eventually(async () => (await deliveryOf(`Webhook:${idUuid(marker.id)}`))?.status === 'DELIVERED');
    expect(await count('SELECT 1 FROM inbox WHERE event_id = ?', [second.id])).toBe(0);
    expect(await count('SELECT 1 FROM webhook_deliveries WHERE platform_id = ?', [p.id])).toBe(1);
  });
});

describe('delivery log: list, redeliver, replay', () => {
  it('lists a platform’s deliveries newest first, filtered by type, status, resource and time, page by page', async () => {
    const p = idp.platform(receiver.url('/log'));
    receiver.behave('/log', (r, _n, res) =>
      JSON.parse(r.body).type === 'OUTGOING_PAYMENT.FAILED' ? res.writeHead(500).end() : res.end('ok'),
    );
    const tx = newId('Transaction');
    const evs = [
      publisher.envelope('OUTGOING_PAYMENT.COMPLETED', p.id, { id: tx, status: 'COMPLETED' }),
      publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', p.id, balanceUpdated(7)),
      publisher.envelope('OUTGOING_PAYMENT.COMPLETED', p.id, {
        id: newId('Transaction'),
        status: 'COMPLETED',
      }),
    ];
    for (const ev of evs)
      await publisher.publish(ev.type.startsWith('OUTGOING') ? 'payments' : 'accounts', ev);
    for (const ev of evs)
      await eventually(async () => (await deliveryOf(`Webhook:${idUuid(ev.id)}`))?.status === 'DELIVERED');
    const all = await client.listWebhookDeliveries({
      platformId: p.id,
      status: webhooks.DeliveryStatus.UNSPECIFIED,
      page: { limit: 2 },
    });
    expect(all.page).toMatchObject({ hasMore: true, totalCount: 3 });
    const next = await client.listWebhookDeliveries({
      platformId: p.id,
      status: webhooks.DeliveryStatus.UNSPECIFIED,
      page: { limit: 2, cursor: all.page!.nextCursor! },
    });
    const ids = [...all.deliveries, ...next.deliveries].map((d) => d.webhookId);
    expect(new Set(ids).size).toBe(3);
    expect(next.page).toMatchObject({ hasMore: false });
    const byType = await client.listWebhookDeliveries({
      platformId: p.id,
      type: 'OUTGOING_PAYMENT.COMPLETED',
      status: webhooks.DeliveryStatus.DELIVERED,
    });
    expect(byType.deliveries).toHaveLength(2);
    const byResource = await client.listWebhookDeliveries({
      platformId: p.id,
      resourceId: tx,
      status: webhooks.DeliveryStatus.UNSPECIFIED,
    });
    expect(byResource.deliveries.map((d) => [d.webhookId, d.resourceId, d.lastResponseStatus])).toEqual([
      [`Webhook:${idUuid(evs[0]!.id)}`, tx, 200],
    ]);
    const future = await client.listWebhookDeliveries({
      platformId: p.id,
      createdAfter: new Date(Date.now() + 60_000),
      status: webhooks.DeliveryStatus.UNSPECIFIED,
    });
    expect(future.deliveries).toEqual([]);
    const other = await client.listWebhookDeliveries({
      platformId: newId('Platform'),
      status: webhooks.DeliveryStatus.UNSPECIFIED,
    });
    expect(other.deliveries).toEqual([]);
    const bad = await client
      .listWebhookDeliveries({
        platformId: p.id,
        type: 'nope',
        status: webhooks.DeliveryStatus.UNSPECIFIED,
        page: { limit: 0, cursor: '!!' },
      })
      .catch((e: DomainError) => e);
    expect(bad).toBeInstanceOf(DomainError);
    expect((bad as DomainError).code).toBe('INVALID_INPUT');
    expect(
      ((bad as DomainError).details as { errors: { field: string }[] }).errors.map((e) => e.field),
    ).toEqual(['type', 'cursor']);
  });

  it('redelivers with the same webhook-id and body, from the start of the schedule; another platform’s is not found', async () => {
    const p = idp.platform(receiver.url('/again'));
    receiver.behave('/again', (_r, _n, res) => res.writeHead(503).end('down'));
    const ev = publisher.envelope('OUTGOING_PAYMENT.FAILED', p.id, { id: newId('Transaction') });
    await publisher.publish('payments', ev);
    const webhookId = `Webhook:${idUuid(ev.id)}`;
    await eventually(async () => (await deliveryOf(webhookId))?.status === 'FAILED');
    receiver.behave('/again', (_r, _n, res) => res.end('back'));
    const r = await client.redeliverWebhook({ platformId: p.id, deliveryId: webhookId });
    expect(r.delivery!.webhookId).toBe(webhookId);
    await eventually(async () => (await deliveryOf(webhookId))?.status === 'DELIVERED');
    const got = receiver.at('/again');
    expect(got).toHaveLength(5);
    expect(got[4]!.headers['webhook-id']).toBe(webhookId);
    expect(got[4]!.body).toBe(got[0]!.body);
    const d = await client.getWebhookDelivery({ platformId: p.id, deliveryId: webhookId });
    expect(d.delivery!.attempts.map((a) => [a.attempt, a.succeeded])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, false],
      [5, true],
    ]);
    const theirs = await client
      .redeliverWebhook({ platformId: newId('Platform'), deliveryId: webhookId })
      .catch((e: DomainError) => e);
    expect((theirs as DomainError).code).toBe('WEBHOOK_DELIVERY_NOT_FOUND');
  });

  it('replays what did not reach the platform since a time (FAILED), not what did unless asked', async () => {
    const p = idp.platform(receiver.url('/outage'));
    let down = true;
    receiver.behave('/outage', (_r, _n, res) => (down ? res.writeHead(502).end() : res.end('ok')));
    const since = new Date(Date.now() - 1000);
    const lost = publisher.envelope('OUTGOING_PAYMENT.COMPLETED', p.id, { id: newId('Transaction') });
    await publisher.publish('payments', lost);
    await eventually(async () => (await deliveryOf(`Webhook:${idUuid(lost.id)}`))?.status === 'FAILED');
    down = false;
    const fine = publisher.envelope('OUTGOING_PAYMENT.COMPLETED', p.id, { id: newId('Transaction') });
    await publisher.publish('payments', fine);
    await eventually(async () => (await deliveryOf(`Webhook:${idUuid(fine.id)}`))?.status === 'DELIVERED');
    const before = receiver.at('/outage').length;
    const r = await client.replayWebhooks({ platformId: p.id, since, includeDelivered: false });
    expect(r.queued).toBe(1);
    await eventually(async () => (await deliveryOf(`Webhook:${idUuid(lost.id)}`))?.status === 'DELIVERED');
    expect(
      receiver
        .at('/outage')
        .slice(before)
        .map((x) => x.headers['webhook-id']),
    ).toEqual([`Webhook:${idUuid(lost.id)}`]);
    const all = await client.replayWebhooks({ platformId: p.id, since, includeDelivered: true });
    expect(all.queued).toBe(2);
    const future = await client
      .replayWebhooks({ platformId: p.id, since: new Date(Date.now() + 60_000), includeDelivered: false })
      .catch((e: DomainError) => e);
    expect((future as DomainError).code).toBe('INVALID_INPUT');
  });
});

describe('SendTestWebhook', () => {
  it('sends a signed TEST webhook and returns the endpoint answer; the delivery is recorded', async () => {
    const p = idp.platform(receiver.url('/test-ok'));
    receiver.behave('/test-ok', (_r, _n, res) => res.writeHead(202).end('received!'));
    const res = await client.sendTestWebhook({ platformId: p.id });
    expect(res).toMatchObject({
      responseStatus: 202,
      url: receiver.url('/test-ok'),
      responseBody: 'received!',
    });
    const req = receiver.at('/test-ok')[0]!;
    const body = new Webhook(p.secrets[0]!).verify(req.body, req.headers) as Record<string, unknown>;
    expect(body).toMatchObject({ id: res.webhookId, type: 'TEST', data: {} });
    expect(Date.parse(body.timestamp as string)).toBeGreaterThan(Date.now() - 10_000);
    expect(res.webhookId).toMatch(/^Webhook:[0-9a-f-]{36}$/);

    const { delivery } = await client.getWebhookDelivery({ platformId: p.id, deliveryId: res.deliveryId });
    expect(delivery).toMatchObject({
      id: res.deliveryId,
      webhookId: res.webhookId,
      type: 'TEST',
      status: webhooks.DeliveryStatus.DELIVERED,
      attemptCount: 1,
    });
    expect(delivery!.attempts).toHaveLength(1);
    expect(delivery!.attempts[0]).toMatchObject({
      responseStatus: 202,
      responseBody: 'received!',
      succeeded: true,
    });
    // Found by the webhook id too; another platform does not see it.
    expect(
      (await client.getWebhookDelivery({ platformId: p.id, deliveryId: res.webhookId })).delivery!.id,
    ).toBe(res.deliveryId);
    const other = idp.platform(undefined);
    await expect(
      client.getWebhookDelivery({ platformId: other.id, deliveryId: res.deliveryId }),
    ).rejects.toMatchObject({
      code: 'WEBHOOK_DELIVERY_NOT_FOUND',
      kind: 'NOT_FOUND',
    });
  });

  it('returns a non-2xx answer as is, with a big body truncated', async () => {
    const p = idp.platform(receiver.url('/test-500'));
    receiver.behave('/test-500', (_r, _n, res) => res.writeHead(500).end('e'.repeat(100_000)));
    const res = await client.sendTestWebhook({ platformId: p.id });
    expect(res.responseStatus).toBe(500);
    expect(res.responseBody).toBe('e'.repeat(4096));
    expect(
      (await client.getWebhookDelivery({ platformId: p.id, deliveryId: res.deliveryId })).delivery!.status,
    ).toBe(webhooks.DeliveryStatus.FAILED);
  });

  it('fails with WEBHOOK_ENDPOINT_NOT_SET when there is no endpoint', async () => {
    const p = idp.platform(undefined);
    const err = await client.sendTestWebhook({ platformId: p.id }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ kind: 'FAILED_PRECONDITION', code: 'WEBHOOK_ENDPOINT_NOT_SET' });
  });

  it('fails with WEBHOOK_DELIVERY_ERROR when no answer comes, and records the attempt', async () => {
    const p = idp.platform(receiver.url('/test-hang'));
    receiver.behave('/test-hang', () => undefined);
    const err = (await client.sendTestWebhook({ platformId: p.id }).catch((e: unknown) => e)) as DomainError;
    expect(err).toMatchObject({ kind: 'FAILED_PRECONDITION', code: 'WEBHOOK_DELIVERY_ERROR' });
    expect(err.details).toMatchObject({ url: receiver.url('/test-hang'), reason: 'timed out after 500 ms' });
    const { delivery } = await client.getWebhookDelivery({
      platformId: p.id,
      deliveryId: err.details!.webhookId as string,
    });
    expect(delivery).toMatchObject({ status: webhooks.DeliveryStatus.FAILED, attemptCount: 1 });
    expect(delivery!.attempts[0]).toMatchObject({ succeeded: false, error: 'timed out after 500 ms' });
  });

  it('rejects a malformed platform id naming the field, and changes nothing', async () => {
    const before = await sql<{ n: string }>('SELECT count(*) AS n FROM webhook_deliveries');
    for (const platformId of ['', 'Customer:0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a5b', 'Platform:nope']) {
      await expect(client.sendTestWebhook({ platformId })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        details: { errors: [{ field: 'platform_id', message: expect.any(String) }] },
      });
    }
    await expect(
      client.getWebhookDelivery({ platformId: newId('Platform'), deliveryId: 'x' }),
    ).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { errors: [{ field: 'delivery_id', message: expect.any(String) }] },
    });
    const after = await sql<{ n: string }>('SELECT count(*) AS n FROM webhook_deliveries');
    expect(after[0]!.n).toBe(before[0]!.n);
  });
});
