import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '@sluice/config';
import { createLogger } from '@sluice/logging';
import { migrate, openStore, type MikroORM } from '@sluice/store';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import type { RouteModule } from '../src/http/types.js';
import { gatewayConfigSchema } from '../src/config.js';
import { platformLimits } from '../src/http/rate-limit.hook.js';
import { GATEWAY_SCHEMA, migrations } from '../src/store/migrations.js';
import { leaseSize, RateLimitStore } from '../src/store/rate-limit.repository.js';
import { basic, startIdentity, type IdentityHarness, type TestToken } from './support/identity.js';
import { testRoutes } from './support/test-routes.js';
import { API, startGateway, type Harness } from './support/harness.js';

/**
 * Rate limits against the real Postgres counters (gateway.rate_limit_counters) and the real identity
 * service, with two gateways on one database (two replicas): per API token, per source address on the
 * routes without credentials, failed authentications per address.
 */
const WINDOW = 3600;
const PER_TOKEN = 5;
const PER_ADDRESS = 3;
const AUTH_FAILURES = 3;

let db: TestDatabase;
let orm: MikroORM;
let idp: IdentityHarness;
let h1: Harness;
let h2: Harness;
/** A platform with a limit of its own (RATE_LIMIT_PLATFORMS). */
let special: TestToken;
const SPECIAL_PER_TOKEN = 8;

/** A route without credentials (like device-code status). */
const openRoutes: RouteModule = async (app) => {
  app.get('/open', { config: { auth: 'none' } }, async () => ({ ok: true }));
};

beforeAll(async () => {
  db = await createTestDatabase('gwratelimit');
  orm = await openStore({ databaseUrl: db.url, schema: GATEWAY_SCHEMA, entities: [], migrations, logger: createLogger('test', 'silent') });
  await migrate(orm, GATEWAY_SCHEMA);
  idp = await startIdentity('gwratelimit');
  special = await idp.token();
  const env = {
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW),
    RATE_LIMIT_PER_TOKEN: String(PER_TOKEN),
    RATE_LIMIT_PER_ADDRESS: String(PER_ADDRESS),
    RATE_LIMIT_AUTH_FAILURES: String(AUTH_FAILURES),
    RATE_LIMIT_PLATFORMS: `${special.platformId}=${SPECIAL_PER_TOKEN}/1`,
  };
  const routes = { test: testRoutes({ widgetCalls: 0, flakyCalls: 0 }), open: openRoutes };
  h1 = await startGateway(idp.address, routes, env, { orm, clients: idp.gatewayClients() });
  h2 = await startGateway(idp.address, routes, env, { orm });
  // The windows are fixed (aligned to the epoch): start well inside one, so no test sees its counts reset.
  const { resetSeconds } = await new RateLimitStore(orm, WINDOW).peek('test:clock');
  if (resetSeconds < 120) await sleep((resetSeconds + 1) * 1000);
}, 180_000);

afterAll(async () => {
  await h1?.close();
  await h2?.close();
  await idp?.stop();
  await orm?.close();
  await db?.drop();
});

function whoami(h: Harness, authorization: string, remoteAddress = '127.0.0.1') {
  return h.app.inject({ url: `${API}/whoami`, headers: { authorization }, remoteAddress });
}

const auth = (t: TestToken) => basic(t.tokenId, t.secret);

function expectRateLimited(res: Awaited<ReturnType<typeof whoami>>, limit: number): void {
  expect(res.statusCode).toBe(429);
  expect(res.json()).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW);
  expect(res.headers['ratelimit-limit']).toBe(String(limit));
  expect(res.headers['ratelimit-remaining']).toBe('0');
  expect(res.headers['ratelimit-reset']).toBe(String(retryAfter));
}

describe('per API token', () => {
  it('the N+1-th request of a token in a window is 429; another token is not affected', async () => {
    const a = await idp.token();
    const b = await idp.token();
    for (let i = 1; i <= PER_TOKEN; i++) {
      const res = await whoami(h1, auth(a));
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe(String(PER_TOKEN));
      expect(res.headers['ratelimit-remaining']).toBe(String(PER_TOKEN - i));
      expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
    }
    expectRateLimited(await whoami(h1, auth(a)), PER_TOKEN);
    // A POST over the limit claims no Idempotency-Key and runs nothing.
    const post = await h1.app.inject({
      method: 'POST',
      url: `${API}/widgets`,
      headers: { authorization: auth(a), 'idempotency-key': 'rl-1' },
      payload: { name: 'w', kind: 'SMALL', amount: 1 },
    });
    expect(post.statusCode).toBe(429);
    const claimed = await orm.em.getConnection().execute('SELECT 1 FROM idempotency_keys WHERE idempotency_key = ?', ['rl-1']);
    expect(claimed).toHaveLength(0);

    const other = await whoami(h1, auth(b));
    expect(other.statusCode).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe(String(PER_TOKEN - 1));
  });

  it('a platform of RATE_LIMIT_PLATFORMS has its own limit', async () => {
    for (let i = 1; i <= SPECIAL_PER_TOKEN; i++) {
      const res = await whoami(i % 2 ? h1 : h2, auth(special));
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe(String(SPECIAL_PER_TOKEN));
    }
    expectRateLimited(await whoami(h1, auth(special)), SPECIAL_PER_TOKEN);
  });

  it('two gateways on one database share the counts', async () => {
    const t = await idp.token();
    for (let i = 0; i < PER_TOKEN; i++) expect((await whoami(i % 2 ? h2 : h1, auth(t))).statusCode).toBe(200);
    expectRateLimited(await whoami(h2, auth(t)), PER_TOKEN);
    expectRateLimited(await whoami(h1, auth(t)), PER_TOKEN);
  });
});

describe('concurrent requests', () => {
  it('of one token on two gateways at once: exactly the limit passes', async () => {
    const t = await idp.token();
    const answers = await Promise.all(
      Array.from({ length: PER_TOKEN * 4 }, (_, i) => whoami(i % 2 ? h2 : h1, auth(t)).then((r) => r.statusCode)),
    );
    expect(answers.filter((s) => s === 200)).toHaveLength(PER_TOKEN);
    expect(answers.filter((s) => s === 429)).toHaveLength(PER_TOKEN * 3);
  });
});

describe('per source address on routes without credentials', () => {
  it('limits the route per address, across gateways; another address is not affected', async () => {
    const open = (h: Harness, remoteAddress: string) => h.app.inject({ url: `${API}/open`, remoteAddress });
    for (let i = 1; i <= PER_ADDRESS; i++) {
      const res = await open(i % 2 ? h1 : h2, '10.1.0.1');
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-remaining']).toBe(String(PER_ADDRESS - i));
    }
    expectRateLimited(await open(h1, '10.1.0.1'), PER_ADDRESS);
    expect((await open(h1, '10.1.0.2')).statusCode).toBe(200);
  });

  it('limits the OpenAPI document; health checks are never limited', async () => {
    const doc = () => h1.app.inject({ url: `${API}/openapi.json`, remoteAddress: '10.1.0.3' });
    for (let i = 0; i < PER_ADDRESS; i++) expect((await doc()).statusCode).toBe(200);
    expectRateLimited(await doc(), PER_ADDRESS);
    for (let i = 0; i <= PER_ADDRESS; i++) {
      const res = await h1.app.inject({ url: '/healthz', remoteAddress: '10.1.0.3' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
  });
});

describe('failed authentications per source address', () => {
  it('after the allowed failures an address gets 429 without identity being asked; another address is not affected', async () => {
    const t = await idp.token();
    const wrong = basic(t.tokenId, 'wrong-secret');
    for (let i = 0; i < AUTH_FAILURES; i++) {
      // Alternating replicas: the failures are counted in the database.
      const res = await whoami(i % 2 ? h2 : h1, wrong, '10.2.0.1');
      expect(res.statusCode).toBe(401);
    }
    const before = idp.authCalls;
    expectRateLimited(await whoami(h1, wrong, '10.2.0.1'), AUTH_FAILURES);
    // Even the right secret is not checked from that address (a guess must not be confirmed)...
    expectRateLimited(await whoami(h1, auth(t), '10.2.0.1'), AUTH_FAILURES);
    expect(idp.authCalls).toBe(before);
    // ... nor a missing credential.
    expectRateLimited(await h1.app.inject({ url: `${API}/whoami`, remoteAddress: '10.2.0.1' }), AUTH_FAILURES);
    // Another address still gets its 401, and the right secret works there.
    expect((await whoami(h1, wrong, '10.2.0.2')).statusCode).toBe(401);
    expect((await whoami(h1, auth(t), '10.2.0.2')).statusCode).toBe(200);
    // Once verified (in this replica's credential cache) the credential is no guess: it passes from the blocked address too.
    expect((await whoami(h1, auth(t), '10.2.0.1')).statusCode).toBe(200);
  });
});

describe('RATE_LIMIT_PLATFORMS', () => {
  const id = 'Platform:0195f0a4-0000-7000-8000-000000000001';
  it('reads per-platform limits, and a malformed value stops the start naming the variable', () => {
    const { RATE_LIMIT_PLATFORMS } = loadConfig(gatewayConfigSchema, { RATE_LIMIT_PLATFORMS: `${id}=6000/600,${id.slice(0, -1)}2=50` });
    expect(platformLimits(RATE_LIMIT_PLATFORMS)).toEqual(
      new Map([
        [id, { perToken: 6000, perAgent: 600 }],
        [`${id.slice(0, -1)}2`, { perToken: 50 }],
      ]),
    );
    for (const bad of [`${id}`, `${id}=`, `${id}=10,`, 'Customer:0195f0a4-0000-7000-8000-000000000001=5', `${id}=-1`])
      expect(() => loadConfig(gatewayConfigSchema, { RATE_LIMIT_PLATFORMS: bad }), bad).toThrow(/RATE_LIMIT_PLATFORMS/);
  });
});

describe('leases (a replica reserves a share of a limit and spends it in memory)', () => {
  const counter = async (key: string) =>
    Number(
      (await orm.em.getConnection().execute<{ count: number }[]>('SELECT count FROM rate_limit_counters WHERE key = ?', [key]))[0]
        ?.count ?? 0,
    );

  it('a busy key costs one statement per lease, and every request in the window is counted', async () => {
    expect([leaseSize(5), leaseSize(99), leaseSize(1000), leaseSize(100_000_000)]).toEqual([1, 1, 20, 100]);
    const store = new RateLimitStore(orm, WINDOW);
    const key = `lease:${Math.random()}`;
    const answers = [];
    for (let i = 0; i < 200; i++) answers.push(await store.take(key, 1000));
    expect(answers.every((a) => a.allowed)).toBe(true);
    // 200 requests, 10 leases of 20: the counter holds what was reserved.
    expect(await counter(key)).toBe(200);
    // Each answer counts the requests taken so far (one replica: exact).
    expect(answers.map((a) => a.count)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
  });

  it('replicas reserving concurrently never grant more than the limit; refused once exhausted, without a statement', async () => {
    const stores = [new RateLimitStore(orm, WINDOW), new RateLimitStore(orm, WINDOW), new RateLimitStore(orm, WINDOW)];
    const key = `lease:${Math.random()}`;
    const limit = 500; // leases of 10
    const answers = await Promise.all(
      Array.from({ length: 900 }, (_, i) => stores[i % 3]!.take(key, limit)),
    );
    const allowed = answers.filter((a) => a.allowed).length;
    expect(allowed).toBeLessThanOrEqual(limit);
    // What a replica reserved beyond its own demand is the most that can go unspent: under a lease each.
    expect(allowed).toBeGreaterThanOrEqual(limit - 3 * (leaseSize(limit) - 1));
    expect(await counter(key)).toBeGreaterThanOrEqual(limit);
    const refused = answers.find((a) => !a.allowed)!;
    expect(refused.count).toBeGreaterThan(limit);
    expect(refused.resetSeconds).toBeGreaterThanOrEqual(1);
    // A replica whose requests were all granted, its last lease spent exactly, has not yet seen the
    // window exhausted: its next take reserves once (granted nothing) and is refused.
    for (const store of stores) expect((await store.take(key, limit)).allowed).toBe(false);
    // Once a replica has seen it, an exhausted window is refused from memory: the counter does not move.
    const before = await counter(key);
    for (const store of stores) expect((await store.take(key, limit)).allowed).toBe(false);
    expect(await counter(key)).toBe(before);
  });

  it('a replica that spent its leases exactly learns of an exhausted window with one statement, granted nothing', async () => {
    const [a, b] = [new RateLimitStore(orm, WINDOW), new RateLimitStore(orm, WINDOW)];
    const key = `lease:${Math.random()}`;
    const limit = 500; // leases of 10
    // A takes 300 (30 leases, the last spent exactly), then B the other 200: the window is exhausted.
    for (let i = 0; i < 300; i++) expect((await a.take(key, limit)).allowed).toBe(true);
    for (let i = 0; i < 200; i++) expect((await b.take(key, limit)).allowed).toBe(true);
    expect((await b.take(key, limit)).allowed).toBe(false);
    const before = await counter(key);
    // A has not seen it: one reservation, granted nothing, and refused.
    expect((await a.take(key, limit)).allowed).toBe(false);
    expect(await counter(key)).toBe(before + leaseSize(limit));
    // From then on A refuses from memory.
    expect((await a.take(key, limit)).allowed).toBe(false);
    expect(await counter(key)).toBe(before + leaseSize(limit));
  });

  it('a lease ends with its window: the next window starts a new one', async () => {
    const store = new RateLimitStore(orm, 2);
    // Two takes in one 2 s window (a key whose pair straddled a window's end is tried again).
    let key = '';
    for (let attempt = 0; attempt < 3 && !key; attempt++) {
      const k = `lease:${Math.random()}`;
      expect((await store.take(k, 1)).allowed).toBe(true);
      const second = await store.take(k, 1);
      if (!second.allowed) key = k;
    }
    expect(key).not.toBe('');
    await sleep(2100);
    expect((await store.take(key, 1)).allowed).toBe(true);
  });

  it('a failed reservation is an error (the hook lets the request through), and the next one retries', async () => {
    const broken = new RateLimitStore({ em: { getConnection: () => ({ execute: () => Promise.reject(new Error('down')) }) } } as never, WINDOW);
    await expect(broken.take('x', 10)).rejects.toThrow('down');
    await expect(broken.take('x', 10)).rejects.toThrow('down');
  });
});

describe('counter cleanup', () => {
  it('purge deletes the counters of ended windows only', async () => {
    const conn = orm.em.getConnection();
    await conn.execute(
      `INSERT INTO rate_limit_counters (key, window_start, count) VALUES ('old', now() - interval '2 hours', 7)`,
    );
    const store = new RateLimitStore(orm, WINDOW);
    await store.hit('current');
    expect(await store.purge()).toBeGreaterThanOrEqual(1);
    const keys = (await conn.execute<{ key: string }[]>('SELECT key FROM rate_limit_counters')).map((r) => r.key);
    expect(keys).not.toContain('old');
    expect(keys).toContain('current');
  });
});
