import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { common, identity } from '@sluice/contracts';
import { newId } from '@sluice/core';
import { eventually } from '@sluice/testing';
import { newPlatform, outbox, startIdentity, type Harness } from './support/harness.js';
import { fieldsOf, rejection } from './support/errors.js';

const { Permission } = identity;
const { Environment } = common;

let h: Harness;
beforeAll(async () => {
  h = await startIdentity('tokens');
});
afterAll(async () => {
  await h?.stop();
});

describe('EnsurePlatformCredential', () => {
  it('creates a platform once and is idempotent', async () => {
    const tokenId = newId('Token');
    const clientSecret = randomBytes(24).toString('base64url');
    const name = `boot-${randomBytes(3).toString('hex')}`;
    const first = await h.client.ensurePlatformCredential({
      environment: Environment.PRODUCTION,
      tokenId,
      clientSecret,
      platformName: name,
    });
    expect(first.created).toBe(true);
    expect(first.platform).toMatchObject({ name, environment: Environment.PRODUCTION });
    expect(first.platform!.id).toMatch(/^Platform:[0-9a-f-]{36}$/);
    const again = await h.client.ensurePlatformCredential({
      environment: Environment.PRODUCTION,
      tokenId,
      clientSecret,
      platformName: name,
    });
    expect(again).toMatchObject({ created: false, platform: { id: first.platform!.id } });
    const auth = await h.client.authenticateToken({ tokenId, clientSecret });
    expect(auth.platform).toMatchObject({ id: first.platform!.id, environment: Environment.PRODUCTION });
    expect(auth.permissions.sort()).toEqual([Permission.MANAGE, Permission.TRANSACT, Permission.VIEW].sort());
  });

  it('refuses the same token id with another secret or another environment', async () => {
    const p = await newPlatform(h.client);
    const other = await rejection(
      h.client.ensurePlatformCredential({
        environment: Environment.SANDBOX,
        tokenId: p.tokenId,
        clientSecret: 'x'.repeat(40),
        platformName: 'whatever',
      }),
    );
    expect(other).toMatchObject({ kind: 'FAILED_PRECONDITION', code: 'CREDENTIAL_CONFLICT' });
    const env = await rejection(
      h.client.ensurePlatformCredential({
        environment: Environment.PRODUCTION,
        tokenId: p.tokenId,
        clientSecret: p.clientSecret,
        platformName: 'whatever',
      }),
    );
    expect(env).toMatchObject({ kind: 'FAILED_PRECONDITION', code: 'CREDENTIAL_CONFLICT' });
  });

  it('adds a new credential to the existing platform of that name', async () => {
    const p = await newPlatform(h.client, Environment.SANDBOX, 'shared-name');
    const q = await newPlatform(h.client, Environment.SANDBOX, 'shared-name');
    expect(q.id).toBe(p.id);
  });

  it('validates its input', async () => {
    const e = await rejection(
      h.client.ensurePlatformCredential({
        environment: Environment.UNSPECIFIED,
        tokenId: 'Token:nope',
        clientSecret: 'short',
        platformName: '',
      }),
    );
    expect(fieldsOf(e).sort()).toEqual(['clientSecret', 'environment', 'platformName', 'tokenId']);
    const colon = await rejection(
      h.client.ensurePlatformCredential({
        environment: Environment.SANDBOX,
        tokenId: newId('Token'),
        clientSecret: 'abc:defghijklmnopqrstu',
        platformName: 'x',
      }),
    );
    expect(fieldsOf(colon)).toEqual(['clientSecret']);
  });
});

describe('AuthenticateToken', () => {
  it('fails alike for an unknown id, a wrong secret, a malformed id and a deleted token', async () => {
    const p = await newPlatform(h.client);
    const extra = await h.client.createToken({
      platformId: p.id,
      name: 'spare',
      permissions: [Permission.VIEW],
    });
    await h.client.deleteToken({ platformId: p.id, tokenId: extra.token!.id });
    const attempts = [
      { tokenId: newId('Token'), clientSecret: p.clientSecret },
      { tokenId: p.tokenId, clientSecret: `${p.clientSecret}x` },
      { tokenId: 'garbage', clientSecret: p.clientSecret },
      { tokenId: extra.token!.id, clientSecret: extra.clientSecret },
    ];
    const errors = await Promise.all(attempts.map((a) => rejection(h.client.authenticateToken(a))));
    for (const e of errors)
      expect(e).toMatchObject({ kind: 'UNAUTHENTICATED', code: 'UNAUTHORIZED', message: errors[0]!.message });
  });

  it('accepts a token id whatever the case of its uuid', async () => {
    const p = await newPlatform(h.client);
    const upper = `Token:${p.tokenId.slice('Token:'.length).toUpperCase()}`;
    const r = await h.client.authenticateToken({ tokenId: upper, clientSecret: p.clientSecret });
    expect(r.tokenId).toBe(p.tokenId);
  });
});

describe('tokens', () => {
  it('returns the secret once and stores only its SHA-256', async () => {
    const p = await newPlatform(h.client);
    const r = await h.client.createToken({
      platformId: p.id,
      name: 'CI token',
      permissions: [Permission.VIEW, Permission.TRANSACT],
    });
    expect(r.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r.token).toMatchObject({
      name: 'CI token',
      clientId: r.token!.id,
      permissions: [Permission.VIEW, Permission.TRANSACT],
      platformId: p.id,
    });
    const got = await h.client.getToken({ platformId: p.id, tokenId: r.token!.id });
    expect(JSON.stringify(got)).not.toContain(r.clientSecret);
    const list = await h.client.listTokens({ platformId: p.id, page: { limit: 0 } });
    expect(JSON.stringify(list)).not.toContain(r.clientSecret);

    const row = (await h.sql.query('SELECT * FROM api_tokens WHERE id = $1', [r.token!.id])).rows[0];
    expect(Buffer.from(row.secret_hash).equals(createHash('sha256').update(r.clientSecret).digest())).toBe(
      true,
    );
    expect(JSON.stringify(row)).not.toContain(r.clientSecret);

    const auth = await h.client.authenticateToken({ tokenId: r.token!.id, clientSecret: r.clientSecret });
    expect(auth).toMatchObject({
      tokenId: r.token!.id,
      platform: { id: p.id },
      permissions: [Permission.VIEW, Permission.TRANSACT],
    });
  });

  it('validates creation', async () => {
    const p = await newPlatform(h.client);
    expect(
      fieldsOf(await rejection(h.client.createToken({ platformId: p.id, name: '', permissions: [] }))),
    ).toEqual(['name', 'permissions']);
    expect(
      fieldsOf(
        await rejection(
          h.client.createToken({ platformId: p.id, name: 'x', permissions: [Permission.UNSPECIFIED] }),
        ),
      ),
    ).toEqual(['permissions[0]']);
    expect(
      fieldsOf(
        await rejection(
          h.client.createToken({
            platformId: p.id,
            name: 'x',
            permissions: [Permission.VIEW, Permission.VIEW],
          }),
        ),
      ),
    ).toEqual(['permissions[1]']);
    expect(
      fieldsOf(
        await rejection(
          h.client.createToken({ platformId: 'Platform:1', name: 'x', permissions: [Permission.VIEW] }),
        ),
      ),
    ).toEqual(['platformId']);
    expect((await h.client.listTokens({ platformId: p.id, page: { limit: 0 } })).page!.totalCount).toBe(1);
  });

  it('lists newest first with filters and keyset pages', async () => {
    const p = await newPlatform(h.client);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      h.clock.advance(1000);
      made.push(
        (
          await h.client.createToken({
            platformId: p.id,
            name: i % 2 ? 'odd' : 'even',
            permissions: [Permission.VIEW],
          })
        ).token!.id,
      );
    }
    const first = await h.client.listTokens({ platformId: p.id, page: { limit: 2 } });
    expect(first).toMatchObject({ page: { hasMore: true, totalCount: 6 } });
    expect(first.tokens.map((t) => t.id)).toEqual([made[4], made[3]]);
    const second = await h.client.listTokens({ platformId: p.id, page: { limit: 2, cursor: first.page!.nextCursor } });
    expect(second.tokens.map((t) => t.id)).toEqual([made[2], made[1]]);
    const last = await h.client.listTokens({ platformId: p.id, page: { limit: 2, cursor: second.page!.nextCursor } });
    expect(last.tokens.map((t) => t.id)).toEqual([made[0], p.tokenId]);
    expect(last.page!.hasMore).toBe(false);
    expect(last.page!.nextCursor).toBeUndefined();

    const odd = await h.client.listTokens({ platformId: p.id, name: 'odd', page: { limit: 10 } });
    expect(odd.tokens.map((t) => t.id)).toEqual([made[3], made[1]]);
    const created = (await h.client.getToken({ platformId: p.id, tokenId: made[2]! })).token!.createdAt!;
    const range = await h.client.listTokens({
      platformId: p.id,
      createdAfter: created,
      createdBefore: created,
      page: { limit: 10 },
    });
    expect(range.tokens.map((t) => t.id)).toEqual([made[2]]);

    const bad = await rejection(h.client.listTokens({ platformId: p.id, page: { limit: 5, cursor: 'not a cursor' } }));
    expect(fieldsOf(bad)).toEqual(['cursor']);
    expect(fieldsOf(await rejection(h.client.listTokens({ platformId: p.id, page: { limit: 101 } })))).toEqual([
      'limit',
    ]);
    const inverted = await rejection(
      h.client.listTokens({
        platformId: p.id,
        createdAfter: new Date('2026-02-01'),
        createdBefore: new Date('2026-01-01'),
        page: { limit: 5 },
      }),
    );
    expect(fieldsOf(inverted)).toEqual(['createdBefore']);
  });

  it('revokes on delete, emits TOKEN.DELETED and keeps the last token', async () => {
    const p = await newPlatform(h.client);
    const t = await h.client.createToken({
      platformId: p.id,
      name: 'temp',
      permissions: [Permission.MANAGE],
    });
    await h.client.deleteToken({ platformId: p.id, tokenId: t.token!.id });
    expect(await rejection(h.client.getToken({ platformId: p.id, tokenId: t.token!.id }))).toMatchObject({
      code: 'TOKEN_NOT_FOUND',
      kind: 'NOT_FOUND',
    });
    expect(await rejection(h.client.deleteToken({ platformId: p.id, tokenId: t.token!.id }))).toMatchObject({
      code: 'TOKEN_NOT_FOUND',
    });
    const row = (await h.sql.query('SELECT deleted_at FROM api_tokens WHERE id = $1', [t.token!.id])).rows[0];
    expect(row.deleted_at).toBeInstanceOf(Date);
    const events = await outbox(h.sql, p.id);
    expect(events.filter((e) => e.type === 'TOKEN.DELETED').map((e) => e.envelope.data)).toEqual([
      { tokenId: t.token!.id },
    ]);
    expect((await h.client.listTokens({ platformId: p.id, page: { limit: 0 } })).tokens.map((x) => x.id)).toEqual([
      p.tokenId,
    ]);

    expect(await rejection(h.client.deleteToken({ platformId: p.id, tokenId: p.tokenId }))).toMatchObject({
      kind: 'FAILED_PRECONDITION',
      code: 'CANNOT_DELETE_LAST_TOKEN',
    });
    await h.client.authenticateToken({ tokenId: p.tokenId, clientSecret: p.clientSecret });
  });

  it('hides other platforms’ tokens', async () => {
    const a = await newPlatform(h.client);
    const b = await newPlatform(h.client);
    const t = await h.client.createToken({ platformId: a.id, name: 'a', permissions: [Permission.VIEW] });
    expect(await rejection(h.client.getToken({ platformId: b.id, tokenId: t.token!.id }))).toMatchObject({
      code: 'TOKEN_NOT_FOUND',
    });
    expect(await rejection(h.client.deleteToken({ platformId: b.id, tokenId: t.token!.id }))).toMatchObject({
      code: 'TOKEN_NOT_FOUND',
    });
    expect((await h.client.listTokens({ platformId: b.id, page: { limit: 0 } })).tokens.map((x) => x.id)).toEqual([
      b.tokenId,
    ]);
    await h.client.authenticateToken({ tokenId: t.token!.id, clientSecret: t.clientSecret });
  });

  it('publishes its events to JetStream through the outbox relay', async () => {
    const p = await newPlatform(h.client);
    const t = await h.client.createToken({ platformId: p.id, name: 'relay', permissions: [Permission.VIEW] });
    await h.client.deleteToken({ platformId: p.id, tokenId: t.token!.id });
    await eventually(async () => {
      const r = await h.sql.query(
        `SELECT count(*)::int AS n FROM outbox WHERE platform_id = $1 AND published_at IS NULL`,
        [p.id],
      );
      return r.rows[0].n === 0;
    });
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: h.natsUrl });
    try {
      const jsm = await jetstreamManager(nc);
      const msg = await jsm.streams.getMessage(`${h.prefix.toUpperCase()}_IDENTITY`, {
        last_by_subj: `${h.prefix}.identity.token.deleted`,
      });
      expect(msg?.json<{ type: string; platformId: string; data: unknown }>()).toMatchObject({
        type: 'TOKEN.DELETED',
        platformId: p.id,
        data: { tokenId: t.token!.id },
      });
    } finally {
      await nc.close();
    }
  });
});
