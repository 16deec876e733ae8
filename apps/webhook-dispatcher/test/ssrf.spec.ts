import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { idUuid } from '@sluice/core';
import { startDispatcher, type Dispatcher } from './support/dispatcher.js';
import { FakeIdentity, Publisher, Receiver, balanceUpdated } from './support/fakes.js';

// WEBHOOK_ALLOW_PRIVATE_TARGETS is left unset: the production default (false).
let db: TestDatabase;
let nats: string;
const prefix = testPrefix('whs');
const receiver = new Receiver();
const idp = new FakeIdentity();
let publisher: Publisher;
let svc: Dispatcher;
let client: PromiseClient<webhooks.WebhooksServiceClient>;

beforeAll(async () => {
  db = await createTestDatabase('webhookssrf');
  nats = await natsUrl();
  await receiver.start();
  await idp.start();
  svc = await startDispatcher(
    { databaseUrl: db.url, natsUrl: nats, prefix, identityPort: idp.port },
    { WEBHOOK_POLL_INTERVAL_MS: '50' },
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

describe('private targets refused by default', () => {
  it('records a refused attempt for an event webhook and keeps it for a retry, sending nothing', async () => {
    const p = idp.platform(receiver.url('/private'));
    const ev = publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', p.id, balanceUpdated(5));
    await publisher.publish('accounts', ev);
    const orm = svc.deps.orm;
    const rows = await eventually(async () => {
      const r = await orm.em
        .fork()
        .execute<
          { status: string; attempt_count: number; last_error: string; next_attempt_at: Date; id: string }[]
        >('SELECT * FROM webhook_deliveries WHERE webhook_id = ?', [`Webhook:${idUuid(ev.id)}`]);
      return r[0]?.attempt_count === 1 ? r : undefined;
    });
    const d = rows[0]!;
    expect(d.status).toBe('PENDING');
    expect(d.last_error).toBe(
      'target refused: 127.0.0.1 resolves to 127.0.0.1 (loopback address); webhooks are only sent to public addresses',
    );
    // Next attempt on the default schedule: about 5 s later.
    expect(new Date(d.next_attempt_at).getTime() - Date.now()).toBeGreaterThan(2000);
    const attempts = await orm.em
      .fork()
      .execute<{ succeeded: boolean; response_status: number | null; error: string }[]>(
        'SELECT * FROM webhook_delivery_attempts WHERE delivery_id = ?',
        [d.id],
      );
    expect(attempts).toEqual([
      expect.objectContaining({ succeeded: false, response_status: null, error: d.last_error }),
    ]);
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses a test webhook to a loopback or private name', async () => {
    for (const url of [
      receiver.url('/test'),
      `http://localhost:${receiver.port}/test`,
      'http://169.254.169.254/latest/meta-data/',
    ]) {
      const p = idp.platform(url);
      await expect(client.sendTestWebhook({ platformId: p.id })).rejects.toMatchObject({
        code: 'WEBHOOK_DELIVERY_ERROR',
        details: {
          url,
          reason: expect.stringMatching(/^target refused: .* \((loopback|link-local) address\)/),
        },
      });
    }
    expect(receiver.requests).toHaveLength(0);
  });
});
