import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestDatabase,
  dropStreams,
  eventually,
  natsUrl,
  queriesDuring,
  testPrefix,
  type TestDatabase,
} from '@sluice/testing';
import { idUuid } from '@sluice/core';
import { startDispatcher, type Dispatcher } from './support/dispatcher.js';
import { FakeIdentity, Publisher, Receiver, balanceUpdated, sleep } from './support/fakes.js';

// A dispatcher whose safety poll (WEBHOOK_POLL_INTERVAL_MS) is longer than the file: whatever it
// delivers, it was woken for — by the queue's NOTIFY (a new delivery) or by the timer of the next
// due retry — and while idle it runs no query at all.

let db: TestDatabase;
let nats: string;
const prefix = testPrefix('whidle');
const receiver = new Receiver();
const idp = new FakeIdentity();
let publisher: Publisher;
let svc: Dispatcher;

beforeAll(async () => {
  db = await createTestDatabase('whidle');
  nats = await natsUrl();
  await receiver.start();
  await idp.start();
  svc = await startDispatcher(
    { databaseUrl: db.url, natsUrl: nats, prefix, identityPort: idp.port },
    {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '300ms',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_POLL_INTERVAL_MS: '60000',
    },
  );
  publisher = await Publisher.connect(nats, prefix);
});

afterAll(async () => {
  await publisher?.close();
  await svc?.stop();
  await idp.stop();
  await receiver.stop();
  await db?.drop();
  await dropStreams(nats, prefix);
});

describe('an idle dispatcher does not poll', () => {
  it('runs no query while idle, delivers a new event when notified and retries when the retry falls due', async () => {
    await sleep(500); // start-up (first claim, LISTEN) settles
    expect(
      await queriesDuring(svc.deps.orm, () => sleep(1500)),
      'queries of an idle dispatcher in 1.5 s',
    ).toBe(0);
    const p = idp.platform(receiver.url('/idle'));
    receiver.behave('/idle', (_r, n, res) => (n === 1 ? res.writeHead(500).end('again') : res.end('ok')));
    const ev = publisher.envelope('INTERNAL_ACCOUNT.BALANCE_UPDATED', p.id, balanceUpdated(5));
    await publisher.publish('accounts', ev);
    const webhookId = `Webhook:${idUuid(ev.id)}`;
    await eventually(async () => {
      const rows = await svc.deps.orm.em
        .fork()
        .execute<{ status: string }[]>('SELECT status FROM webhook_deliveries WHERE webhook_id = ?', [
          webhookId,
        ]);
      return rows[0]?.status === 'DELIVERED';
    }, 20_000);
    expect(receiver.at('/idle')).toHaveLength(2);
    await sleep(300);
    expect(await queriesDuring(svc.deps.orm, () => sleep(1500)), 'queries once idle again').toBe(0);
  });
});
