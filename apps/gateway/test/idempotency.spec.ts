import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sluice/core';
import { createLogger } from '@sluice/logging';
import { migrate, openStore, type MikroORM } from '@sluice/store';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import { GATEWAY_SCHEMA, migrations } from '../src/store/migrations.js';
import { PostgresIdempotencyStore, type StoredResponse } from '../src/store/idempotency.repository.js';
import tokensRoutes from '../src/routes/tokens.routes.js';
import { basic, startIdentity, type IdentityHarness } from './support/identity.js';
import { testRoutes, type TestRouteState } from './support/test-routes.js';
import { API, startGateway, type Harness } from './support/harness.js';

/**
 * Idempotency-Key against the real Postgres store (schema `gateway`), with the real identity
 * service: its API tokens authenticate, and its POST /tokens is the real route whose replays are
 * checked against what identity stored. Test-only routes give the handler control a real route
 * cannot (a request held in flight, a first 5xx, a handler call count).
 */
let db: TestDatabase;
let orm: MikroORM;
let idp: IdentityHarness;
let h: Harness;
const state: TestRouteState = { widgetCalls: 0, flakyCalls: 0 };
let authA: { authorization: string };
let authB: { authorization: string };
let platformA: string;
let platformB: string;

async function openOrm(url: string): Promise<MikroORM> {
  const o = await openStore({
    databaseUrl: url,
    schema: GATEWAY_SCHEMA,
    entities: [],
    migrations,
    logger: createLogger('test', 'silent'),
  });
  await migrate(o, GATEWAY_SCHEMA);
  return o;
}

beforeAll(async () => {
  db = await createTestDatabase('gateway');
  orm = await openOrm(db.url);
  idp = await startIdentity('gwidem');
  const a = await idp.token();
  const b = await idp.token();
  platformA = a.platformId;
  platformB = b.platformId;
  authA = { authorization: basic(a.tokenId, a.secret) };
  authB = { authorization: basic(b.tokenId, b.secret) };
  h = await startGateway(idp.address, { test: testRoutes(state), tokens: tokensRoutes }, {}, { orm });
});

afterAll(async () => {
  await h?.close();
  await idp?.stop();
  await orm?.close();
  await db?.drop();
});

const widget = { name: 'w', kind: 'SMALL', amount: 5 };

function post(url: string, payload: unknown, key: string | undefined, auth = authA) {
  return h.app.inject({
    method: 'POST',
    url: `${API}${url}`,
    headers: { ...auth, ...(key !== undefined ? { 'idempotency-key': key } : {}) },
    payload: payload as never,
  });
}

async function row(key: string) {
  const rows = await orm.em
    .getConnection()
    .execute<{ state: string; response_status: number | null }[]>(
      'SELECT state, response_status FROM idempotency_keys WHERE idempotency_key = ?',
      [key],
    );
  return rows[0];
}

describe('Idempotency-Key', () => {
  it('replays the first response (status and body) without running the handler again', async () => {
    const key = `k-${newId('Request')}`;
    const first = await post('/widgets', widget, key);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const calls = state.widgetCalls;
    const again = await post('/widgets', { amount: 5, kind: 'SMALL', name: 'w' }, key); // same body, other key order
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(state.widgetCalls).toBe(calls);
    expect(await row(key)).toEqual({ state: 'COMPLETED', response_status: 201 });
  });

  it('without a key, every POST runs', async () => {
    const calls = state.widgetCalls;
    await post('/widgets', widget, undefined);
    await post('/widgets', widget, undefined);
    expect(state.widgetCalls).toBe(calls + 2);
  });

  it('the same key with a different body: 422 IDEMPOTENCY_KEY_REUSED, nothing runs', async () => {
    const key = `k-${newId('Request')}`;
    await post('/widgets', widget, key);
    const calls = state.widgetCalls;
    const res = await post('/widgets', { ...widget, amount: 6 }, key);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(state.widgetCalls).toBe(calls);
  });

  it('the same key on a different path: 422', async () => {
    const key = `k-${newId('Request')}`;
    await post('/widgets', widget, key);
    const res = await post('/exchange', { from: cur('USD'), to: cur('EUR'), rate: 1 }, key);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
  });

  it('a concurrent request with a key in flight: 409 IDEMPOTENCY_KEY_IN_PROGRESS, then the replay', async () => {
    const key = `k-${newId('Request')}`;
    const started = new Promise<void>((resolve) => (state.slowStarted = resolve));
    const first = post('/slow', {}, key);
    await started;
    const second = await post('/slow', {}, key);
    expect(second.statusCode).toBe(409);
    expect(second.json()).toMatchObject({ status: 409, code: 'IDEMPOTENCY_KEY_IN_PROGRESS' });
    expect(second.headers['retry-after']).toBe('1');
    state.releaseSlow!();
    const done = await first;
    expect(done.statusCode).toBe(201);
    const third = await post('/slow', {}, key);
    expect(third.statusCode).toBe(201);
    expect(third.body).toBe(done.body);
    expect(third.headers['idempotent-replayed']).toBe('true');
  });

  it('keys are scoped to the platform', async () => {
    const key = `k-${newId('Request')}`;
    const a = await post('/widgets', widget, key, authA);
    const calls = state.widgetCalls;
    const b = await post('/widgets', { ...widget, amount: 99 }, key, authB);
    expect(a.statusCode).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.json().amount).toBe(99);
    expect(state.widgetCalls).toBe(calls + 1);
  });

  it('a 5xx releases the key: the retry runs and succeeds', async () => {
    const key = `k-${newId('Request')}`;
    state.flakyCalls = 0;
    const first = await post('/flaky', {}, key);
    expect(first.statusCode).toBe(503);
    expect(await row(key)).toBeUndefined();
    const retry = await post('/flaky', {}, key);
    expect(retry.statusCode).toBe(201);
    expect(retry.json()).toEqual({ call: 2 });
    const replay = await post('/flaky', {}, key);
    expect(replay.json()).toEqual({ call: 2 });
    expect(state.flakyCalls).toBe(2);
  });

  it('a 4xx from the handler is stored and replayed', async () => {
    const key = `k-${newId('Request')}`;
    const first = await post('/conflict', {}, key);
    expect(first.statusCode).toBe(409);
    const again = await post('/conflict', {}, key);
    expect(again.statusCode).toBe(409);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('a 400 from the handler releases the key like a schema refusal: nothing is stored, the key is free', async () => {
    const key = `k-${newId('Request')}`;
    const refused = await post('/refused', {}, key);
    expect(refused.statusCode, refused.body).toBe(400);
    expect(await row(key)).toBeUndefined();
    // Stored, the key would answer another endpoint 422 IDEMPOTENCY_KEY_REUSED; free, that endpoint runs.
    expect((await post('/conflict', {}, key)).statusCode).toBe(409);
  });

  it('an invalid request claims nothing: the key stays free', async () => {
    const key = `k-${newId('Request')}`;
    const bad = await post('/widgets', { ...widget, amount: 'five' }, key);
    expect(bad.statusCode).toBe(400);
    expect(await row(key)).toBeUndefined();
    const good = await post('/widgets', widget, key);
    expect(good.statusCode).toBe(201);
  });

  it('validates the key: 1..255 visible ASCII characters', async () => {
    for (const key of ['x'.repeat(256), 'has space', 'é']) {
      const res = await post('/widgets', widget, key);
      expect(res.statusCode).toBe(400);
      expect(res.json().details.errors[0].field).toBe('Idempotency-Key');
    }
    expect((await post('/widgets', widget, 'x'.repeat(255))).statusCode).toBe(201);
  });

  it('survives a restart: another gateway on the same database replays', async () => {
    const key = `k-${newId('Request')}`;
    const first = await post('/widgets', widget, key);
    const other = await startGateway(idp.address, { test: testRoutes(state) }, {}, { orm });
    try {
      const res = await other.app.inject({
        method: 'POST',
        url: `${API}/widgets`,
        headers: { ...authA, 'idempotency-key': key },
        payload: widget,
      });
      expect(res.body).toBe(first.body);
      expect(res.headers['idempotent-replayed']).toBe('true');
    } finally {
      await other.close();
    }
  });

  it('an abandoned in-flight claim (crashed process) is taken over after its lease by the same request only', async () => {
    const key = `k-${newId('Request')}`;
    const conn = orm.em.getConnection();
    const { fingerprint } = await import('../src/domain/idempotency.js');
    const fp = fingerprint('POST', `${API}/widgets`, widget);
    await conn.execute(
      `INSERT INTO idempotency_keys (platform_id, idempotency_key, request_method, request_path, request_hash, state, owner_request_id, locked_until, expires_at)
       VALUES (?, ?, 'POST', ?, ?, 'IN_PROGRESS', 'dead', now() - interval '1 second', now() + interval '1 day')`,
      [platformA, key, fp.path, fp.bodyHash],
    );
    expect((await post('/widgets', { ...widget, amount: 1 }, key)).statusCode).toBe(422);
    const res = await post('/widgets', widget, key);
    expect(res.statusCode).toBe(201);
    expect(await row(key)).toEqual({ state: 'COMPLETED', response_status: 201 });
  });

  it('expired keys are free again and purged', async () => {
    const key = `k-${newId('Request')}`;
    await post('/widgets', widget, key);
    const conn = orm.em.getConnection();
    await conn.execute(
      `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE idempotency_key = ?`,
      [key],
    );
    const purged = await h.app.gateway.idempotencyStore.purgeExpired();
    expect(purged).toBeGreaterThanOrEqual(1);
    expect(await row(key)).toBeUndefined();
    const fresh = await post('/widgets', { ...widget, amount: 7 }, key);
    expect(fresh.statusCode).toBe(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
  });

  it('stores responses for at least IDEMPOTENCY_TTL_HOURS', async () => {
    const key = `k-${newId('Request')}`;
    await post('/widgets', widget, key);
    const [r] = await orm.em
      .getConnection()
      .execute<{ hours: string }[]>(
        `SELECT extract(epoch FROM expires_at - completed_at) / 3600 AS hours FROM idempotency_keys WHERE idempotency_key = ?`,
        [key],
      );
    expect(Number(r!.hours)).toBeGreaterThanOrEqual(24);
  });

  it('readiness includes the database', async () => {
    const res = await h.app.inject({ url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', checks: { identity: 'ok', database: 'ok' } });
  });
});

describe('Idempotency-Key on a real route (POST /tokens, identity behind it)', () => {
  /** The platform's live tokens, as identity lists them. */
  const tokensOf = async (platformId: string) =>
    (await idp.client.listTokens({ platformId, page: { limit: 100 } })).tokens.map((t) => t.id).sort();
  const body = { name: 'ci', permissions: ['VIEW'] };

  it('a replay answers the stored 201 (the same secret) and identity holds one token', async () => {
    const key = `k-${newId('Request')}`;
    const before = await tokensOf(platformA);
    const first = await post('/tokens', body, key);
    expect(first.statusCode, first.body).toBe(201);
    const again = await post('/tokens', { permissions: ['VIEW'], name: 'ci' }, key);
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await tokensOf(platformA)).toEqual([...before, first.json().id].sort());
  });

  it('the same key with another body: 422, and identity creates nothing', async () => {
    const key = `k-${newId('Request')}`;
    await post('/tokens', body, key);
    const before = await tokensOf(platformA);
    const res = await post('/tokens', { ...body, name: 'other' }, key);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await tokensOf(platformA)).toEqual(before);
  });

  it('another platform’s request under the same key is its own: a token of that platform', async () => {
    const key = `k-${newId('Request')}`;
    const a = await post('/tokens', body, key, authA);
    const beforeB = await tokensOf(platformB);
    const b = await post('/tokens', body, key, authB);
    expect(b.statusCode).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.json().id).not.toBe(a.json().id);
    expect(await tokensOf(platformB)).toEqual([...beforeB, b.json().id].sort());
  });
});

/**
 * The real Postgres store whose writes of an outcome fail while `down` is set, as they do while
 * the database is unreachable (the claim went through before the outage began).
 */
class OutageStore extends PostgresIdempotencyStore {
  down = false;
  failedWrites = 0;
  private check(): void {
    if (this.down) {
      this.failedWrites++;
      throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    }
  }
  override async complete(platformId: string, key: string, owner: string, res: StoredResponse): Promise<void> {
    this.check();
    return super.complete(platformId, key, owner, res);
  }
  override async release(platformId: string, key: string, owner: string): Promise<void> {
    this.check();
    return super.release(platformId, key, owner);
  }
}

describe('Idempotency-Key when its outcome cannot be recorded (the database went away mid-request)', () => {
  let store: OutageStore;
  let g: Harness;
  beforeAll(async () => {
    store = new OutageStore(orm, { ttlMs: 86_400_000, leaseMs: 60_000 });
    g = await startGateway(idp.address, { test: testRoutes(state) }, {}, { orm, idempotencyStore: store });
  });
  afterAll(async () => {
    store.down = false;
    await g?.close();
  });
  const send = (url: string, payload: unknown, key: string) =>
    g.app.inject({ method: 'POST', url: `${API}${url}`, headers: { ...authA, 'idempotency-key': key }, payload: payload as never });
  const until = async (what: () => Promise<boolean>) => {
    for (let i = 0; i < 100 && !(await what()); i++) await new Promise((r) => setTimeout(r, 50));
  };

  it('the unrecorded answer does not go out: 503 with Retry-After, 409 while it is unrecorded, then the first answer replayed', async () => {
    const key = `k-${newId('Request')}`;
    const calls = state.widgetCalls;
    store.down = true;
    const first = await send('/widgets', widget, key);
    expect(first.statusCode).toBe(503);
    expect(first.headers['retry-after']).toBe('1');
    expect(first.headers.location).toBeUndefined();
    expect(first.json()).toEqual({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: 'The service is temporarily unavailable; retry later',
    });
    expect(state.widgetCalls).toBe(calls + 1); // the operation ran
    const meanwhile = await send('/widgets', widget, key);
    expect(meanwhile.statusCode).toBe(409);
    expect(meanwhile.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_PROGRESS' });
    expect(store.failedWrites).toBeGreaterThanOrEqual(1);
    store.down = false;
    await until(async () => (await row(key))?.state === 'COMPLETED');
    expect(await row(key)).toEqual({ state: 'COMPLETED', response_status: 201 });
    const replay = await send('/widgets', widget, key);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toMatchObject({ ...widget, call: calls + 1 });
    expect(state.widgetCalls).toBe(calls + 1); // and ran once
  });

  it('a release that failed is retried: the key is free as soon as the database is back, not after the lease', async () => {
    const key = `k-${newId('Request')}`;
    state.flakyCalls = 0;
    store.down = true;
    const first = await send('/flaky', {}, key);
    expect(first.statusCode).toBe(503);
    expect(await row(key)).toMatchObject({ state: 'IN_PROGRESS' });
    store.down = false;
    await until(async () => (await row(key)) === undefined);
    expect(await row(key)).toBeUndefined();
    const retry = await send('/flaky', {}, key);
    expect(retry.statusCode).toBe(201);
    expect(retry.json()).toEqual({ call: 2 });
  });
});

function cur(code: string) {
  return { code, name: code, symbol: code, decimals: 2 };
}
