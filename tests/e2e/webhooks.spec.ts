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
    const w1 = await balanceWebhook(await fund(10));
    expect(new Webhook(before).verify(w1.body, w1.headers)).toMatchObject({
      type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED',
    });
    const rotated = await call('POST', '/config/webhook-secret/rotate');
    expect(rotated.status, rotated.text).toBe(200);
    const after = rotated.json.webhookSigningSecret as string;
    expect(after).not.toBe(before);
    expect(rotated.json.previousWebhookSigningSecretExpiresAt).toBeDefined();
    const w2 = await balanceWebhook(await fund(11));
    expect(w2.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(after).verify(w2.body, w2.headers)).toBeTruthy();
    expect(new Webhook(before).verify(w2.body, w2.headers)).toBeTruthy();
  });

  it('410 Gone disables the endpoint: GET /config shows it, nothing more is sent; setting it again enables it', async () => {
    answer = () => ({ status: 410 });
    const gone = await fund(12);
    await balanceWebhook(gone);
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
});
