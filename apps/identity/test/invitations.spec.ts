import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { common, identity } from '@sluice/contracts';
import { newPlatform, outbox, startIdentity, type Harness, type TestPlatform } from './support/harness.js';
import { fieldsOf, rejection } from './support/errors.js';

/** UMA invitations: identity owns them (they bind a customer's UMA address to an invitee's). */
const { CustomerType, InvitationStatus } = identity;

let h: Harness;
let p: TestPlatform;
let inviter: identity.Customer;
beforeAll(async () => {
  h = await startIdentity('invitations');
  p = await newPlatform(h.client);
  inviter = (
    await h.client.createCustomer({
      platformId: p.id,
      customerType: CustomerType.INDIVIDUAL,
      currencies: ['USD'],
      umaAddress: '$inviter@pay.example.com',
    })
  ).customer!;
});
afterAll(async () => {
  await h?.stop();
});

const create = (over: Partial<identity.CreateInvitationRequest> = {}) =>
  h.client.createInvitation({ platformId: p.id, inviterUma: inviter.umaAddress, ...over });

const claimedEvents = async (platformId: string) =>
  (await outbox(h.sql, platformId))
    .filter((e) => e.type === 'INVITATION.CLAIMED')
    .map((e) => e.envelope.data);

describe('invitations', () => {
  it('creates a PENDING invitation with a random code, its url on the platform’s UMA domain and the amount in the inviter’s currency', async () => {
    const expiresAt = new Date(h.clock.now().getTime() + 3_600_000);
    const { invitation } = await create({
      inviterUma: '$INVITER@pay.example.com',
      firstName: 'Alice',
      amountToSend: 12550n,
      expiresAt,
    });
    expect(invitation).toMatchObject({
      platformId: p.id,
      inviterCustomerId: inviter.id,
      inviterUma: '$inviter@pay.example.com',
      status: InvitationStatus.PENDING,
      firstName: 'Alice',
      amountToSend: 12550n,
      amountCurrency: 'USD',
      expiresAt,
      createdAt: h.clock.now(),
    });
    expect(invitation!.code).toMatch(/^[a-z2-7]{26}$/);
    expect(invitation!.url).toBe(`https://sandbox.sluice.test/invitations/${invitation!.code}`);
    const other = (await create()).invitation!;
    expect(other.code).not.toBe(invitation!.code);
    expect((await h.client.getInvitation({ platformId: p.id, code: invitation!.code })).invitation).toEqual(
      invitation,
    );
  });

  it('claims once: CLAIMED with the invitee and INVITATION.CLAIMED; a second claim or a cancel is refused', async () => {
    const { invitation } = await create({ firstName: 'Bob' });
    const code = invitation!.code;
    h.clock.advance(1000);
    const claimed = (
      await h.client.claimInvitation({ platformId: p.id, code, inviteeUma: '$Bob@other.example' })
    ).invitation!;
    expect(claimed).toMatchObject({
      status: InvitationStatus.CLAIMED,
      inviteeUma: '$bob@other.example',
      claimedAt: h.clock.now(),
    });
    expect((await claimedEvents(p.id)).filter((d) => d.code === code)).toEqual([
      {
        code,
        createdAt: invitation!.createdAt!.toISOString(),
        claimedAt: h.clock.now().toISOString(),
        url: invitation!.url,
        inviterUma: inviter.umaAddress,
        inviteeUma: '$bob@other.example',
        status: 'CLAIMED',
        firstName: 'Bob',
      },
    ]);
    for (const again of [
      () => h.client.claimInvitation({ platformId: p.id, code, inviteeUma: '$eve@other.example' }),
      () => h.client.cancelInvitation({ platformId: p.id, code }),
    ])
      expect(await rejection(again())).toMatchObject({
        kind: 'FAILED_PRECONDITION',
        code: 'INVITATION_ALREADY_CLAIMED',
      });
    expect((await h.client.getInvitation({ platformId: p.id, code })).invitation).toEqual(claimed);
    expect((await claimedEvents(p.id)).filter((d) => d.code === code)).toHaveLength(1);
  });

  it('lets exactly one of concurrent claims win', async () => {
    const code = (await create()).invitation!.code;
    const results = await Promise.allSettled(
      ['$a@x.example', '$b@x.example', '$c@x.example', '$d@x.example'].map((inviteeUma) =>
        h.client.claimInvitation({ platformId: p.id, code, inviteeUma }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((await claimedEvents(p.id)).filter((d) => d.code === code)).toHaveLength(1);
  });

  it('cancels a pending invitation, which can no longer be claimed', async () => {
    const code = (await create()).invitation!.code;
    const cancelled = (await h.client.cancelInvitation({ platformId: p.id, code })).invitation!;
    expect(cancelled.status).toBe(InvitationStatus.CANCELLED);
    for (const call of [
      () => h.client.claimInvitation({ platformId: p.id, code, inviteeUma: '$bob@other.example' }),
      () => h.client.cancelInvitation({ platformId: p.id, code }),
    ])
      expect(await rejection(call())).toMatchObject({ code: 'INVITATION_CANCELLED' });
  });

  it('shows EXPIRED past expiresAt, and then refuses claim and cancel on the code', async () => {
    const code = (await create({ expiresAt: new Date(h.clock.now().getTime() + 60_000) })).invitation!.code;
    h.clock.advance(60_000);
    expect((await h.client.getInvitation({ platformId: p.id, code })).invitation!.status).toBe(
      InvitationStatus.EXPIRED,
    );
    for (const call of [
      () => h.client.claimInvitation({ platformId: p.id, code, inviteeUma: '$bob@other.example' }),
      () => h.client.cancelInvitation({ platformId: p.id, code }),
    ])
      expect(fieldsOf(await rejection(call()))).toEqual(['invitationCode']);
    expect((await claimedEvents(p.id)).filter((d) => d.code === code)).toEqual([]);
  });

  it('rejects bad input naming each field, and creates nothing', async () => {
    const before = await h.sql.query('SELECT count(*)::int AS n FROM invitations');
    expect(
      fieldsOf(
        await rejection(
          create({ inviterUma: 'inviter@pay', firstName: ' ', amountToSend: 0n, expiresAt: h.clock.now() }),
        ),
      ).sort(),
    ).toEqual(['amountToSend', 'expiresAt', 'firstName', 'inviterUma']);
    expect(fieldsOf(await rejection(create({ inviterUma: '$nobody@pay.example.com' })))).toEqual([
      'inviterUma',
    ]);
    const after = await h.sql.query('SELECT count(*)::int AS n FROM invitations');
    expect(after.rows[0].n).toBe(before.rows[0].n);
    const code = (await create()).invitation!.code;
    for (const inviteeUma of ['bob', inviter.umaAddress])
      expect(
        fieldsOf(await rejection(h.client.claimInvitation({ platformId: p.id, code, inviteeUma }))),
      ).toEqual(['inviteeUma']);
    expect((await h.client.getInvitation({ platformId: p.id, code })).invitation!.status).toBe(
      InvitationStatus.PENDING,
    );
  });

  it('needs an umaDomain on a production platform', async () => {
    const prod = await newPlatform(h.client, common.Environment.PRODUCTION);
    const c = await h.client.createCustomer({
      platformId: prod.id,
      customerType: CustomerType.INDIVIDUAL,
      currencies: ['USD'],
      umaAddress: '$prod@bank.example',
    });
    expect(
      await rejection(h.client.createInvitation({ platformId: prod.id, inviterUma: c.customer!.umaAddress })),
    ).toMatchObject({ code: 'INVITATIONS_NOT_CONFIGURED' });
  });

  it('answers INVITATION_NOT_FOUND for another platform’s code, an unknown one and an impossible one', async () => {
    const code = (await create()).invitation!.code;
    const b = await newPlatform(h.client);
    for (const call of [
      () => h.client.getInvitation({ platformId: b.id, code }),
      () => h.client.claimInvitation({ platformId: b.id, code, inviteeUma: '$m@x.example' }),
      () => h.client.cancelInvitation({ platformId: b.id, code }),
      () => h.client.getInvitation({ platformId: p.id, code: 'a'.repeat(26) }),
      () => h.client.getInvitation({ platformId: p.id, code: 'not a code' }),
    ])
      expect(await rejection(call())).toMatchObject({ kind: 'NOT_FOUND', code: 'INVITATION_NOT_FOUND' });
    expect((await h.client.getInvitation({ platformId: p.id, code })).invitation!.status).toBe(
      InvitationStatus.PENDING,
    );
  });
});
