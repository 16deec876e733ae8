import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { EVENTS } from '@sluice/api';
import { newId } from '@sluice/core';
import { connectBus, subjectFor, type Bus } from '@sluice/events';
import { cuttableLink, eventually, natsUrl, type Balancer } from '@sluice/testing';
import { basic, startIdentity, type IdentityHarness, type TestToken } from './support/identity.js';
import { testRoutes, type TestRouteState } from './support/test-routes.js';
import { API, startGateway, type Harness } from './support/harness.js';

/**
 * Authentication, the credential cache and its revocation over NATS, permissions — against the
 * real identity service: its tokens, its AuthenticateToken, its TOKEN.DELETED events.
 */
let idp: IdentityHarness;
let nc: NatsConnection;
let h: Harness;
/** A second replica on the same subject prefix, its NATS connection through a link a test can cut. */
let replica: Harness;
let replicaBus: Bus;
let replicaLink: Balancer;
let prefix: string;
const state: TestRouteState = { widgetCalls: 0, flakyCalls: 0 };

const UNAUTHORIZED = { status: 401, code: 'UNAUTHORIZED', message: 'Invalid or missing API credentials' };

/** A token identity issues on a new platform (all permissions unless given). */
const token = (opts: Parameters<IdentityHarness['token']>[0] = {}): Promise<TestToken> => idp.token(opts);

function get(url: string, authorization?: string, app = h.app) {
  return app.inject({ url: `${API}${url}`, headers: authorization === undefined ? {} : { authorization } });
}

beforeAll(async () => {
  idp = await startIdentity('gwauth');
  nc = await connect({ servers: await natsUrl() });
  // The gateway listens for identity's events under identity's subject prefix.
  prefix = idp.prefix;
  h = await startGateway(
    idp.address,
    { test: testRoutes(state) },
    { EVENT_SUBJECT_PREFIX: prefix },
    { nats: nc, clients: idp.gatewayClients() },
  );
  const { url, link } = await cuttableLink(await natsUrl(), 4222);
  replicaLink = link;
  replicaBus = await connectBus(url, 'gateway-replica'); // how a gateway process connects (reconnects for ever)
  replica = await startGateway(
    idp.address,
    { test: testRoutes(state) },
    { EVENT_SUBJECT_PREFIX: prefix },
    { nats: replicaBus.nc, clients: idp.gatewayClients() },
  );
});

afterAll(async () => {
  await replica?.close();
  await replicaBus?.close();
  await replicaLink?.close();
  await h?.close();
  await nc?.close();
  await idp?.stop();
});

describe('401 for every bad credential, identically', () => {
  it('missing, malformed, unknown, wrong secret', async () => {
    const t = await token();
    const cases: (string | undefined)[] = [
      undefined,
      '',
      'Bearer abc',
      'Basic',
      'Basic !!!notbase64',
      `Basic ${Buffer.from('no-colon').toString('base64')}`,
      `Basic ${Buffer.from(`${t.tokenId}:`).toString('base64')}`,
      basic('Token:not-a-uuid', 'x'),
      basic(newId('Customer'), t.secret),
      basic(newId('Token'), t.secret),
      basic(t.tokenId, 'wrong'),
      basic(t.tokenId, `${t.secret}x`),
    ];
    for (const authorization of cases) {
      const res = await get('/whoami', authorization);
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.json()).toEqual(UNAUTHORIZED);
      expect(res.headers['www-authenticate']).toMatch(/^Basic /);
    }
  });

  it('a valid credential authenticates and sets request.platform', async () => {
    const t = await token({ environment: 'PRODUCTION', permissions: ['VIEW'] });
    const res = await get('/whoami', basic(t.tokenId, t.secret));
    expect(res.statusCode).toBe(200);
    expect(res.json().platform).toEqual({
      id: t.platformId,
      environment: 'PRODUCTION',
      tokenId: t.tokenId,
      permissions: ['VIEW'],
    });
  });

  it('public routes need no credentials', async () => {
    expect((await h.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    expect((await h.app.inject({ url: `${API}/openapi.json` })).statusCode).toBe(200);
    expect((await h.app.inject({ url: `${API}/docs` })).statusCode).toBe(200);
  });
});

describe('credential cache', () => {
  it('saves the identity hop for repeated requests, also when they arrive together', async () => {
    const t = await token();
    const auth = basic(t.tokenId, t.secret);
    const before = idp.authCalls;
    const results = await Promise.all([1, 2, 3, 4].map(() => get('/whoami', auth)));
    expect(results.every((r) => r.statusCode === 200)).toBe(true);
    await get('/whoami', auth);
    expect(idp.authCalls - before).toBe(1);
  });

  it('never caches a failure: a wrong secret is checked every time', async () => {
    const t = await token();
    const before = idp.authCalls;
    await get('/whoami', basic(t.tokenId, 'nope'));
    await get('/whoami', basic(t.tokenId, 'nope'));
    expect(idp.authCalls - before).toBe(2);
  });

  it('a TOKEN.DELETED event drops the token at once on every replica', async () => {
    const t = await token();
    const auth = basic(t.tokenId, t.secret);
    const replicas = [h, replica];
    const sizes: number[] = [];
    for (const r of replicas) {
      expect((await get('/whoami', auth, r.app)).statusCode).toBe(200);
      const calls = idp.authCalls;
      expect((await get('/whoami', auth, r.app)).statusCode).toBe(200);
      expect(idp.authCalls, 'the second request was answered from the cache').toBe(calls);
      sizes.push(r.app.gateway.credentialCache.size);
    }
    await idp.deleteToken(t); // identity revokes it and its relay publishes TOKEN.DELETED
    for (const [i, r] of replicas.entries()) {
      // The event itself drops the entry: nothing reads the cache meanwhile, and an entry past its TTL
      // leaves only when it is read, so the entry cannot have gone by expiring. How soon the event
      // arrives is the NATS round trip on this machine, not a property to assert here.
      await eventually(async () => r.app.gateway.credentialCache.size === sizes[i]! - 1, 30_000, 10);
      const calls = idp.authCalls;
      const res = await get('/whoami', auth, r.app);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(UNAUTHORIZED);
      expect(idp.authCalls, 'identity was asked again: the cache no longer answers for the token').toBe(
        calls + 1,
      );
    }
  });

  it('the event only drops the deleted token', async () => {
    const keep = await token();
    const gone = await token();
    await get('/whoami', basic(keep.tokenId, keep.secret));
    await get('/whoami', basic(gone.tokenId, gone.secret));
    const size = h.app.gateway.credentialCache.size;
    await idp.deleteToken(gone);
    await eventually(async () => h.app.gateway.credentialCache.size === size - 1, 30_000, 20);
    const before = idp.authCalls;
    expect((await get('/whoami', basic(keep.tokenId, keep.secret))).statusCode).toBe(200);
    expect(idp.authCalls).toBe(before);
  });

  it('an event it cannot read empties the cache (it may have been a revocation), which keeps caching', async () => {
    const t = await token();
    const auth = basic(t.tokenId, t.secret);
    const subject = subjectFor(prefix, EVENTS.TOKEN_DELETED.owner, EVENTS.TOKEN_DELETED.type);
    const envelope = {
      id: newId('Event'),
      type: EVENTS.TOKEN_DELETED.type,
      occurredAt: new Date().toISOString(),
      platformId: t.platformId,
    };
    const unreadable: [string, string][] = [
      ['not JSON', 'not json'],
      ['breaks its contract', JSON.stringify({ ...envelope, data: { tokenId: 42 } })],
    ];
    for (const [what, payload] of unreadable) {
      await get('/whoami', auth);
      expect(h.app.gateway.credentialCache.size, what).toBeGreaterThan(0);
      nc.publish(subject, payload);
      await eventually(async () => h.app.gateway.credentialCache.size === 0, 30_000, 10);
      expect(h.revocations!.live, what).toBe(true);
      const calls = idp.authCalls;
      expect((await get('/whoami', auth)).statusCode).toBe(200);
      expect((await get('/whoami', auth)).statusCode).toBe(200);
      expect(idp.authCalls, `${what}: asked again once, then cached again`).toBe(calls + 1);
    }
  });

  it('while NATS is down the cache is off; a token deleted meanwhile is refused once it is back', async () => {
    const kept = await token();
    const gone = await token();
    const auth = (t: TestToken) => basic(t.tokenId, t.secret);
    const cache = replica.app.gateway.credentialCache;
    for (const t of [kept, gone]) expect((await get('/whoami', auth(t), replica.app)).statusCode).toBe(200);
    expect((await get('/whoami', auth(gone))).statusCode).toBe(200); // the other replica keeps it too
    const otherSize = h.app.gateway.credentialCache.size;
    expect(replica.revocations!.live).toBe(true);
    const timesLive = replica.revocations!.timesLive;

    replicaLink.interrupt();
    try {
      await eventually(async () => !replica.revocations!.live, 30_000, 10);
      expect(cache.size).toBe(0);
      // Every request asks identity, and nothing is kept.
      const calls = idp.authCalls;
      for (let i = 0; i < 2; i++) expect((await get('/whoami', auth(kept), replica.app)).statusCode).toBe(200);
      expect(idp.authCalls).toBe(calls + 2);
      expect(cache.size).toBe(0);
      // Deleted while this replica hears nothing: the other one heard the event.
      await idp.deleteToken(gone);
      await eventually(async () => h.app.gateway.credentialCache.size === otherSize - 1, 30_000, 10);
    } finally {
      replicaLink.restore();
    }
    await eventually(async () => replica.revocations!.live && replica.revocations!.timesLive > timesLive, 30_000, 10);
    expect((await get('/whoami', auth(gone), replica.app)).statusCode).toBe(401);
    const calls = idp.authCalls;
    for (let i = 0; i < 2; i++) expect((await get('/whoami', auth(kept), replica.app)).statusCode).toBe(200);
    expect(idp.authCalls, 'live again: asked once, then cached').toBe(calls + 1);
  });

  it('without the event, an entry still expires within AUTH_CACHE_TTL_MS', async () => {
    // 2 s: long enough that the second request below is answered from the cache even on a loaded
    // machine (with 300 ms, a slow token revocation let the entry expire before it: a flake).
    const short = await startGateway(idp.address, { test: testRoutes(state) }, { AUTH_CACHE_TTL_MS: '2000' });
    try {
      const t = await token();
      const auth = basic(t.tokenId, t.secret);
      expect((await get('/whoami', auth, short.app)).statusCode).toBe(200);
      // identity revokes it; this gateway hears no event (no NATS), its cache still answers...
      await idp.deleteToken(t);
      expect((await get('/whoami', auth, short.app)).statusCode).toBe(200);
      await new Promise((r) => setTimeout(r, 2050));
      expect((await get('/whoami', auth, short.app)).statusCode).toBe(401);
    } finally {
      await short.close();
    }
  });

  it('refuses a TTL above 5 s', async () => {
    await expect(startGateway(idp.address, {}, { AUTH_CACHE_TTL_MS: '6000' })).rejects.toThrow(
      /AUTH_CACHE_TTL_MS/,
    );
  });
});

describe('identity outage', () => {
  it('is 503, not 401 (credentials could not be checked)', async () => {
    const down = await startGateway('127.0.0.1:1', { test: testRoutes(state) }, { RPC_DEADLINE_MS: '300' });
    try {
      const res = await get('/whoami', basic(newId('Token'), 'sk'), down.app);
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
      const ready = await down.app.inject({ url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json().checks.identity).toBe('unavailable');
    } finally {
      await down.close();
    }
  });
});

describe('permissions and environments', () => {
  const widget = { name: 'w', kind: 'SMALL', amount: 1 };

  it('VIEW reads but cannot write', async () => {
    const t = await token({ permissions: ['VIEW'] });
    const auth = basic(t.tokenId, t.secret);
    expect((await get('/whoami', auth)).statusCode).toBe(200);
    const calls = state.widgetCalls;
    const res = await h.app.inject({
      method: 'POST',
      url: `${API}/widgets`,
      headers: { authorization: auth },
      payload: widget,
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    expect(state.widgetCalls).toBe(calls);
  });

  it('TRANSACT calls money-moving routes only; MANAGE the rest', async () => {
    const transact = await token({ permissions: ['TRANSACT'] });
    const manage = await token({ permissions: ['MANAGE'] });
    const post = (t: TestToken, url: string, payload: unknown) =>
      h.app.inject({
        method: 'POST',
        url: `${API}${url}`,
        headers: { authorization: basic(t.tokenId, t.secret) },
        payload: payload as never,
      });
    expect((await post(transact, '/transfers', {})).statusCode).toBe(201);
    expect((await post(transact, '/widgets', widget)).statusCode).toBe(403);
    expect((await post(manage, '/widgets', widget)).statusCode).toBe(201);
    expect((await post(manage, '/transfers', {})).statusCode).toBe(403);
  });

  it('sandbox-only routes answer 403 to production platforms', async () => {
    const prod = await token({ environment: 'PRODUCTION' });
    const sandbox = await token({ environment: 'SANDBOX' });
    const call = (t: TestToken) =>
      h.app.inject({
        method: 'POST',
        url: `${API}/sandbox/thing`,
        headers: { authorization: basic(t.tokenId, t.secret) },
        payload: {},
      });
    const res = await call(prod);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ status: 403, code: 'SANDBOX_ONLY' });
    expect((await call(sandbox)).statusCode).toBe(200);
  });
});
