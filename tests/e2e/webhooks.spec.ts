/**
 * End to end: webhooks through the real processes (a service's outbox → NATS → webhook-dispatcher
 * → a loopback receiver): signatures verified with the official `standardwebhooks` package, secret
 * rotation with both signatures during the overlap, an endpoint answering 410 Gone disabled and shown
 * in GET /config until it is set again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { eventually } from '@sluice/testing';
import {
  apiClient,
  newCredential,
  startE2eStack,
  startWebhookReceiver,
  type Api,
  type E2eStack,
  type ReceivedWebhook,
  type WebhookAnswer,
} from './support.js';

describe('webhooks through the real processes', () => {
  let e2e: E2eStack;
  let api: Api;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const sandbox = newCredential();
  let usdAccount: string;
  /** Every signing secret the platform had during the file. */
  const secrets = new Set<string>();
  /** The receiver's answer to the next webhooks (200 by default). */
  let answer: (w: ReceivedWebhook) => WebhookAnswer = () => ({ status: 200 });

  const call = async (method: string, path: string, body?: unknown) => {
    const r = await api(method, path, { body });
    return r;
  };
  /** Funds the platform's USD account: one INTERNAL_ACCOUNT.BALANCE_UPDATED webhook, whose data.balance tells which. */
  const fund = async (amount: number) => {
    const r = await call('POST', `/sandbox/internal-accounts/${encodeURIComponent(usdAccount)}/fund`, {
      amount,
    });
    expect(r.status, r.text).toBe(200);
    return r.json.balance.amount as number;
  };
  const balanceWebhook = (balance: number) =>
    eventually(
      async () =>
        receiver.received.find(
          (w) =>
            w.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' &&
            w.data.id === usdAccount &&
            w.data.balance.amount === balance,
        ),
      30_000,
    );

  beforeAll(async () => {
    receiver = await startWebhookReceiver((w) => answer(w));
    e2e = await startE2eStack(
      'e2ewh',
      { sandbox },
      {
        appEnv: { identity: { WEBHOOK_SECRET_ROTATION_OVERLAP_SECONDS: '3600' } },
      },
    );
    api = apiClient(e2e.stack, sandbox);
    const cfg = await call('PATCH', '/config', {
      webhookEndpoint: receiver.url,
      supportedCurrencies: [{ currencyCode: 'USD' }],
    });
    expect(cfg.status, cfg.text).toBe(200);
    const accounts = await call('GET', '/platform/internal-accounts?currency=USD');
    expect(accounts.status, accounts.text).toBe(200);
    usdAccount = accounts.json.data[0].id;
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
    await receiver?.close();
  });

  it('signs every webhook (Standard Webhooks); after a rotation, with both secrets for the overlap', async () => {
    const before = (await call('GET', '/config')).json.webhookSigningSecret as string;
    secrets.add(before);
    const w1 = await balanceWebhook(await fund(10));
    expect(new Webhook(before).verify(w1.body, w1.headers)).toMatchObject({
      type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED',
    });
    const rotated = await call('POST', '/config/webhook-secret/rotate');
    expect(rotated.status, rotated.text).toBe(200);
    const after = rotated.json.webhookSigningSecret as string;
    secrets.add(after);
    expect(after).not.toBe(before);
    expect(rotated.json.previousWebhookSigningSecretExpiresAt).toBeDefined();
    const w2 = await balanceWebhook(await fund(11));
    expect(w2.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(after).verify(w2.body, w2.headers)).toBeTruthy();
    expect(new Webhook(before).verify(w2.body, w2.headers)).toBeTruthy();
  });

  it('410 Gone disables the endpoint: GET /config shows it, nothing more is sent; setting it again enables it', async () => {
    answer = () => ({ status: 410 });
    const before = receiver.received.length;
    // A funding makes two webhooks (INCOMING_PAYMENT.COMPLETED, INTERNAL_ACCOUNT.BALANCE_UPDATED):
    // the first answered 410 disables the endpoint, and the other is then not sent.
    await fund(12);
    await eventually(async () => (receiver.received.length > before ? true : undefined), 30_000);
    const cfg = await eventually(async () => {
      const c = await call('GET', '/config');
      return c.json.webhookEndpointDisabledAt ? c.json : undefined;
    }, 30_000);
    expect(cfg).toMatchObject({
      webhookEndpoint: receiver.url,
      webhookEndpointDisabledReason: 'the endpoint answered 410 Gone',
    });
    answer = () => ({ status: 200 });
    const count = receiver.received.length;
    const unsent = await fund(13);
    // The dispatcher has consumed the fund's event (its balance webhook would be queued by now) and sent nothing.
    await eventually(async () => {
      const { rows } = await e2e
        .db()
        .query(
          `SELECT 1 FROM webhooks.inbox i JOIN accounts.outbox o ON o.id = i.event_id WHERE o.type = 'INTERNAL_ACCOUNT.BALANCE_UPDATED' AND (o.envelope->'data'->'balance'->>'amount')::bigint = $1`,
          [unsent],
        );
      return rows.length ? true : undefined;
    }, 30_000);
    expect(receiver.received.slice(count).filter((w) => w.data?.balance?.amount === unsent)).toEqual([]);

    const again = await call('PATCH', '/config', { webhookEndpoint: receiver.url });
    expect(again.status, again.text).toBe(200);
    expect(again.json.webhookEndpointDisabledAt).toBeUndefined();
    // Once the dispatcher has heard of it (identity's event), new events are delivered again.
    const sent = await eventually(async () => {
      const b = await fund(1);
      return (
        (await eventually(
          async () => receiver.received.find((w) => w.data?.balance?.amount === b),
          5_000,
        ).catch(() => undefined)) ?? undefined
      );
    }, 60_000);
    expect(sent.type).toBe('INTERNAL_ACCOUNT.BALANCE_UPDATED');
  });

  it('the delivery log: list with filters, one delivery with its attempts, redeliver (same webhook-id), replay after an outage', async () => {
    const since = new Date().toISOString();
    answer = () => ({ status: 500, body: 'down for maintenance' });
    const lost = await fund(21);
    const lostHook = await balanceWebhook(lost);
    const webhookId = lostHook.headers['webhook-id']!;
    const list = await call(
      'GET',
      `/webhooks/deliveries?type=INTERNAL_ACCOUNT.BALANCE_UPDATED&resourceId=${encodeURIComponent(usdAccount)}&createdAfter=${encodeURIComponent(since)}&limit=1`,
    );
    expect(list.status, list.text).toBe(200);
    expect(list.json.data).toHaveLength(1);
    expect(list.json.data[0]).toMatchObject({
      webhookId,
      type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED',
      resourceId: usdAccount,
    });
    expect(list.json.data[0].attempts).toBeUndefined();
    const one = await eventually(async () => {
      const r = await call('GET', `/webhooks/deliveries/${encodeURIComponent(webhookId)}`);
      return r.json.attempts?.length ? r : undefined;
    }, 30_000);
    expect(one.json.attempts[0]).toMatchObject({
      attempt: 1,
      succeeded: false,
      responseStatus: 500,
      responseBody: 'down for maintenance',
      url: receiver.url,
    });
    expect(one.json.attempts[0].latencyMs).toBeGreaterThanOrEqual(0);
    const bad = await call('GET', '/webhooks/deliveries?status=LOST');
    expect(bad.status, bad.text).toBe(400);
    const unknown = await call(
      'GET',
      `/webhooks/deliveries/${encodeURIComponent('Webhook:00000000-0000-4000-8000-000000000000')}`,
    );
    expect(unknown.status, unknown.text).toBe(404);

    // The endpoint is back: the platform asks for it again (same webhook-id, same body, verified).
    answer = () => ({ status: 200 });
    const again = await call('POST', `/webhooks/deliveries/${encodeURIComponent(webhookId)}/redeliver`);
    expect(again.status, again.text).toBe(200);
    expect(again.json.webhookId).toBe(webhookId);
    const resent = await eventually(
      async () =>
        receiver.received.filter((w) => w.headers['webhook-id'] === webhookId && w !== lostHook).at(-1),
      30_000,
    );
    expect(resent.body).toBe(lostHook.body);
    const secret = (await call('GET', '/config')).json.webhookSigningSecret as string;
    expect(new Webhook(secret).verify(resent.body, resent.headers)).toBeTruthy();
    await eventually(
      async () =>
        (await call('GET', `/webhooks/deliveries/${encodeURIComponent(webhookId)}`)).json.status ===
        'DELIVERED',
      30_000,
    );

    // An outage: webhooks fail until the schedule gives up would take hours; the disabled endpoint
    // (410) fails them at once. After it is set again, replay sends what it missed.
    answer = () => ({ status: 410 });
    const missed = await fund(22);
    await balanceWebhook(missed);
    await eventually(
      async () => ((await call('GET', '/config')).json.webhookEndpointDisabledAt ? true : undefined),
      30_000,
    );
    const during = await fund(23);
    answer = () => ({ status: 200 });
    const on = await call('PATCH', '/config', { webhookEndpoint: receiver.url });
    expect(on.status, on.text).toBe(200);
    const seen = receiver.received.length;
    const replay = await call('POST', '/webhooks/replay', { since });
    expect(replay.status, replay.text).toBe(200);
    expect(replay.json.queued).toBeGreaterThanOrEqual(2);
    const amounts = () => receiver.received.slice(seen).map((w) => w.data?.balance?.amount);
    await eventually(
      async () => (amounts().includes(missed) && amounts().includes(during) ? true : undefined),
      60_000,
    );
    const badReplay = await call('POST', '/webhooks/replay', { since: 'yesterday' });
    expect(badReplay.status, badReplay.text).toBe(400);
  });

  it('every webhook received in this file is signed by a secret the platform had (Standard Webhooks)', () => {
    expect(receiver.received.length).toBeGreaterThan(5);
    const unverified = receiver.received.filter(
      (w) =>
        ![...secrets].some((secret) => {
          try {
            new Webhook(secret).verify(w.body, w.headers);
            return true;
          } catch {
            return false;
          }
        }),
    );
    expect(unverified.map((w) => `${w.type} ${w.headers['webhook-id']}`)).toEqual([]);
  });
});
