/**
 * End to end: UMA invitations through the real processes (gateway -> identity -> outbox ->
 * webhook-dispatcher). A customer's invitation is created, read, claimed once (the signed
 * INVITATION.CLAIMED webhook carries what the claim answered), another one cancelled; bad input
 * for each operation is a 400 on the field at fault that changes nothing, a claimed or cancelled
 * invitation refuses claim and cancel with the reference's codes, and another platform's code (or
 * an unknown one) is 404 for every operation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { eventually } from '@sluice/testing';
import { ensurePlatformCredential } from '../../tools/lib/bootstrap.js';
import {
  apiClient,
  newCredential,
  startE2eStack,
  startWebhookReceiver,
  type Api,
  type E2eStack,
} from './support.js';

describe('invitations through the real processes', () => {
  let e2e: E2eStack;
  let api: Api;
  let other: Api;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let secret: string;
  const credA = newCredential();
  const credB = newCredential();
  const inviterUma = '$ada@pay.example.com';

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    e2e = await startE2eStack('invitations', { sandbox: credA });
    await ensurePlatformCredential(
      e2e.stack.grpc.identity!,
      { tokenId: credB.tokenId, clientSecret: credB.secret, environment: 'SANDBOX' },
      { platformName: 'Platform B' },
    );
    api = apiClient(e2e.stack, credA);
    other = apiClient(e2e.stack, credB);
    const cfg = await api('PATCH', '/config', { body: { webhookEndpoint: receiver.url } });
    expect(cfg.status, cfg.text).toBe(200);
    secret = (await api('GET', '/config')).json.webhookSigningSecret;
    const c = await api('POST', '/customers', {
      body: {
        customerType: 'INDIVIDUAL',
        fullName: 'Ada Lovelace',
        umaAddress: inviterUma,
        currencies: ['USD'],
      },
    });
    expect(c.status, c.text).toBe(201);
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
    await receiver?.close();
  });

  const expectField = (
    r: { status: number; json: { code?: string; details?: { errors?: { field: string }[] } } },
    field: string,
  ) => {
    expect(r.status, JSON.stringify(r.json)).toBe(400);
    expect(r.json.code).toBe('INVALID_INPUT');
    expect(r.json.details?.errors?.map((e) => e.field)).toContain(field);
  };

  it('creates, reads and claims once: the signed INVITATION.CLAIMED webhook is the claimed invitation', async () => {
    const made = await api('POST', '/invitations', {
      body: {
        inviterUma,
        firstName: 'Ada',
        amountToSend: 12550,
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    expect(made.status, made.text).toBe(201);
    expect(made.json).toMatchObject({
      inviterUma,
      status: 'PENDING',
      firstName: 'Ada',
      amountToSend: { amount: 12550, currency: { code: 'USD' } },
    });
    const code = made.json.code as string;
    expect(made.json.url).toMatch(new RegExp(`^https://.+/invitations/${code}$`));
    expect((await api('GET', `/invitations/${code}`)).json).toEqual(made.json);

    const claimed = await api('POST', `/invitations/${code}/claim`, {
      body: { inviteeUma: '$grace@other.example' },
    });
    expect(claimed.status, claimed.text).toBe(200);
    expect(claimed.json).toMatchObject({ code, status: 'CLAIMED', inviteeUma: '$grace@other.example' });
    expect(claimed.json.claimedAt).toEqual(expect.any(String));

    const hook = await eventually(
      async () => receiver.received.find((w) => w.type === 'INVITATION.CLAIMED' && w.data.code === code),
      30_000,
    );
    expect(new Webhook(secret).verify(hook.body, hook.headers)).toMatchObject({
      type: 'INVITATION.CLAIMED',
      data: claimed.json,
    });

    for (const [path, body] of [
      [`/invitations/${code}/claim`, { inviteeUma: '$eve@other.example' }],
      [`/invitations/${code}/cancel`, undefined],
    ] as const) {
      const again = await api('POST', path, body ? { body } : {});
      expect([again.status, again.json.code], path).toEqual([400, 'INVITATION_ALREADY_CLAIMED']);
    }
    expect((await api('GET', `/invitations/${code}`)).json).toEqual(claimed.json);
    expect(
      receiver.received.filter((w) => w.type === 'INVITATION.CLAIMED' && w.data.code === code),
    ).toHaveLength(1);
  });

  it('cancels a pending invitation, which then refuses claim and cancel', async () => {
    const code = (await api('POST', '/invitations', { body: { inviterUma } })).json.code as string;
    const cancelled = await api('POST', `/invitations/${code}/cancel`);
    expect([cancelled.status, cancelled.json.status], cancelled.text).toEqual([200, 'CANCELLED']);
    const claim = await api('POST', `/invitations/${code}/claim`, {
      body: { inviteeUma: '$grace@other.example' },
    });
    expect([claim.status, claim.json.code]).toEqual([400, 'INVITATION_CANCELLED']);
    const again = await api('POST', `/invitations/${code}/cancel`);
    expect([again.status, again.json.code]).toEqual([400, 'INVITATION_CANCELLED']);
  });

  it('bad input for each operation: 400 on the field at fault, nothing changed', async () => {
    const future = new Date(Date.now() + 86_400_000).toISOString();
    for (const [body, field] of [
      [{}, 'inviterUma'],
      [{ inviterUma: 'ada@pay.example.com' }, 'inviterUma'],
      [{ inviterUma: '$nobody@pay.example.com' }, 'inviterUma'],
      [{ inviterUma, amountToSend: 0 }, 'amountToSend'],
      [{ inviterUma, amountToSend: 1.5 }, 'amountToSend'],
      [{ inviterUma, expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ inviterUma, expiresAt: new Date(Date.now() - 1000).toISOString() }, 'expiresAt'],
      [{ inviterUma, firstName: '' }, 'firstName'],
      [{ inviterUma, expiresAt: future, surprise: true }, 'surprise'],
    ] as const)
      expectField(await api('POST', '/invitations', { body }), field);
    const malformed = await api('POST', '/invitations', { raw: '{"inviterUma": ' });
    expect(malformed.status).toBe(400);
    const count = async () =>
      (await e2e.db().query<{ n: number }>('SELECT count(*)::int AS n FROM identity.invitations')).rows[0]!.n;
    const before = await count();

    const code = (await api('POST', '/invitations', { body: { inviterUma } })).json.code as string;
    expect(await count()).toBe(before + 1);
    for (const [body, field] of [
      [{}, 'inviteeUma'],
      [{ inviteeUma: 'grace' }, 'inviteeUma'],
      [{ inviteeUma: inviterUma }, 'inviteeUma'],
      [{ inviteeUma: '$grace@other.example', extra: 1 }, 'extra'],
    ] as const)
      expectField(await api('POST', `/invitations/${code}/claim`, { body: body as object }), field);
    const tooLong = await api('GET', `/invitations/${'a'.repeat(65)}`);
    expect(tooLong.status).toBe(400);
    expect((await api('GET', `/invitations/${code}`)).json).toMatchObject({ status: 'PENDING' });
    expect(receiver.received.filter((w) => w.type === 'INVITATION.CLAIMED' && w.data.code === code)).toEqual(
      [],
    );
  });

  it('another platform’s code and an unknown code are 404 for every operation', async () => {
    const code = (await api('POST', '/invitations', { body: { inviterUma } })).json.code as string;
    const unknown = 'a'.repeat(26);
    for (const [client, c] of [
      [other, code],
      [api, unknown],
    ] as const) {
      for (const r of [
        await client('GET', `/invitations/${c}`),
        await client('POST', `/invitations/${c}/claim`, { body: { inviteeUma: '$mallory@other.example' } }),
        await client('POST', `/invitations/${c}/cancel`),
      ])
        expect([r.status, r.json.code]).toEqual([404, 'INVITATION_NOT_FOUND']);
    }
    // Another platform cannot invite from this platform's customer either.
    expectField(await other('POST', '/invitations', { body: { inviterUma } }), 'inviterUma');
    expect((await api('GET', `/invitations/${code}`)).json.status).toBe('PENDING');
  });
});
