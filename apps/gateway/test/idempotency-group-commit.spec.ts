import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sluice/core';
import { createLogger } from '@sluice/logging';
import { migrate, openStore, pgTextArray, type MikroORM } from '@sluice/store';
import { createTestDatabase, type TestDatabase } from '@sluice/testing';
import { fingerprint, type ClaimOutcome } from '../src/domain/idempotency.js';
import { PostgresIdempotencyStore, type StoredResponse } from '../src/store/idempotency.repository.js';
import { GATEWAY_SCHEMA, migrations } from '../src/store/migrations.js';

/**
 * The Postgres Idempotency-Key store's group commit, against the real Postgres (its own database):
 * concurrent claims, completions and releases share statements, and so transactions, without an
 * answer changing. Which transaction wrote a row is its `xmin` (the writing transaction's id): rows
 * written by one batch share it, and N operations each in its own transaction would leave N of them.
 */
let db: TestDatabase;
let orm: MikroORM;
let store: PostgresIdempotencyStore;

beforeAll(async () => {
  db = await createTestDatabase('gwgroupcommit');
  orm = await openStore({
    databaseUrl: db.url,
    schema: GATEWAY_SCHEMA,
    entities: [],
    migrations,
    logger: createLogger('test', 'silent'),
  });
  await migrate(orm, GATEWAY_SCHEMA);
  store = new PostgresIdempotencyStore(orm, { ttlMs: 86_400_000, leaseMs: 60_000 });
});

afterAll(async () => {
  await orm?.close();
  await db?.drop();
});

const platform = 'pl_group';
const fp = (body: unknown, path = '/2025-10-13/widgets') => fingerprint('POST', path, body);
const keys = (n: number) => Array.from({ length: n }, () => `k-${newId('Request')}`);
const response = (body: string): StoredResponse => ({
  status: 201,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body,
});

/** Each key's row (state, owner, response status) and the id of the transaction that wrote it last. */
async function rows(ks: readonly string[]) {
  const found = await orm.em.getConnection().execute<
    {
      idempotency_key: string;
      state: string;
      owner_request_id: string;
      response_status: number | null;
      xmin: string;
    }[]
  >(
    `SELECT idempotency_key, state, owner_request_id, response_status, xmin::text AS xmin
       FROM idempotency_keys WHERE platform_id = ? AND idempotency_key = ANY(?::text[])`,
    [platform, pgTextArray(ks)],
  );
  return new Map(found.map((r) => [r.idempotency_key, r]));
}

/** How many transactions wrote the rows of `ks` (each must have one). */
async function writers(ks: readonly string[]): Promise<number> {
  const found = await rows(ks);
  expect(found.size).toBe(ks.length);
  return new Set([...found.values()].map((r) => r.xmin)).size;
}

describe('PostgresIdempotencyStore: group commit', () => {
  it('claims of distinct keys made at once share statements: 250 claims in 3 transactions of at most 100', async () => {
    const ks = keys(250);
    const outcomes = await Promise.all(ks.map((k, i) => store.claim(platform, k, fp({ i }), `req-${i}`)));
    expect(outcomes.every((o) => o.kind === 'claimed')).toBe(true);
    const found = await rows(ks);
    ks.forEach((k, i) =>
      expect(found.get(k)).toMatchObject({ state: 'IN_PROGRESS', owner_request_id: `req-${i}` }),
    );
    expect(await writers(ks)).toBe(3);
  });

  it('while a batch is in flight, what arrives waits and then goes out in one transaction', async () => {
    const [blocked, ...later] = keys(41);
    // Another transaction holds the first claim's key (an uncommitted insert), so its batch stays in flight.
    const knex = orm.em.getConnection().getKnex();
    const other = await knex.transaction();
    await other.raw(
      `INSERT INTO idempotency_keys (platform_id, idempotency_key, request_method, request_path, request_hash, state, owner_request_id, locked_until, expires_at)
       VALUES (?, ?, 'POST', '/x', 'h', 'IN_PROGRESS', 'other', now() + interval '1 minute', now() + interval '1 day')`,
      [platform, blocked!],
    );
    const first = store.claim(platform, blocked!, fp({}), 'req-first');
    await new Promise((r) => setTimeout(r, 50));
    const settled: ClaimOutcome[] = [];
    const rest = later.map((k, i) =>
      store.claim(platform, k, fp({ i }), `req-later-${i}`).then((o) => settled.push(o)),
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(settled).toEqual([]); // held behind the batch in flight
    await other.rollback();
    expect(await first).toEqual({ kind: 'claimed' });
    await Promise.all(rest);
    expect(settled.every((o) => o.kind === 'claimed')).toBe(true);
    expect(await writers(later)).toBe(1);
    const found = await rows([blocked!, later[0]!]);
    expect(found.get(blocked!)!.xmin).not.toBe(found.get(later[0]!)!.xmin);
  });

  it('one key claimed by many at once: exactly one claims it, the others are in progress, then all replay', async () => {
    const [k] = keys(1);
    const req = fp({ amount: 5 });
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.claim(platform, k!, req, `req-${i}`)),
    );
    const winners = outcomes.flatMap((o, i) => (o.kind === 'claimed' ? [i] : []));
    expect(winners).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'in_progress')).toHaveLength(19);
    expect((await rows([k!])).get(k!)).toMatchObject({
      state: 'IN_PROGRESS',
      owner_request_id: `req-${winners[0]}`,
    });

    await store.complete(platform, k!, `req-${winners[0]}`, response('{"id":1}'));
    const again = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => store.claim(platform, k!, req, `again-${i}`)),
      store.claim(platform, k!, fp({ amount: 6 }), 'other-body'),
      store.claim(platform, k!, fp({ amount: 5 }, '/2025-10-13/other'), 'other-path'),
    ]);
    const replay = { kind: 'replay', status: 201, headers: response('').headers, body: '{"id":1}' };
    expect(again.slice(0, 10)).toEqual(Array.from({ length: 10 }, () => replay));
    expect(again.slice(10)).toEqual([
      { kind: 'mismatch', reason: 'body' },
      { kind: 'mismatch', reason: 'path' },
    ]);
  });

  it('claims, completions and releases in flight at once: one transaction for distinct keys, each key in the order its operations came', async () => {
    const held = keys(10);
    const fresh = keys(10);
    await Promise.all(held.map((k, i) => store.claim(platform, k, fp({ held: i }), `owner-${i}`)));
    const lapsed = keys(2);
    // An abandoned claim (its lease ran out) and an expired stored answer, both taken over in the batch.
    await orm.em.getConnection().execute(
      `INSERT INTO idempotency_keys (platform_id, idempotency_key, request_method, request_path, request_hash, state, owner_request_id, locked_until, expires_at)
       VALUES (?, ?, 'POST', ?, ?, 'IN_PROGRESS', 'dead', now() - interval '1 second', now() + interval '1 day'),
              (?, ?, 'POST', '/elsewhere', 'h', 'COMPLETED', 'old', now() - interval '2 days', now() - interval '1 second')`,
      [platform, lapsed[0]!, fp({ lapsed: 0 }).path, fp({ lapsed: 0 }).bodyHash, platform, lapsed[1]!],
    );

    const all = await Promise.all<unknown>([
      ...held.slice(0, 5).map((k, i) => store.complete(platform, k, `owner-${i}`, response(`{"held":${i}}`))),
      ...held.slice(5).map((k, i) => store.release(platform, k, `owner-${i + 5}`)),
      ...fresh.map((k, i) => store.claim(platform, k, fp({ fresh: i }), `fresh-${i}`)),
      store.claim(platform, lapsed[0]!, fp({ lapsed: 0 }), 'taker-0'),
      store.claim(platform, lapsed[1]!, fp({ lapsed: 1 }), 'taker-1'),
      // After the operations above on the same keys: the completion is replayed, the released key is free.
      store.claim(platform, held[0]!, fp({ held: 0 }), 'retry-0'),
      store.claim(platform, held[5]!, fp({ other: true }), 'new-owner-5'),
      // Not the owner: nothing happens.
      store.complete(platform, held[9]!, 'not-the-owner', response('{}')),
    ]);
    expect(all.slice(10, 22)).toEqual(Array.from({ length: 12 }, () => ({ kind: 'claimed' })));
    expect(all[22]).toEqual({
      kind: 'replay',
      status: 201,
      headers: response('').headers,
      body: '{"held":0}',
    });
    expect(all[23]).toEqual({ kind: 'claimed' });

    const found = await rows([...held, ...fresh, ...lapsed]);
    held
      .slice(0, 5)
      .forEach((k) => expect(found.get(k)).toMatchObject({ state: 'COMPLETED', response_status: 201 }));
    expect(found.get(held[5]!)).toMatchObject({ state: 'IN_PROGRESS', owner_request_id: 'new-owner-5' });
    held.slice(6).forEach((k) => expect(found.has(k)).toBe(false));
    expect(found.get(lapsed[0]!)).toMatchObject({ state: 'IN_PROGRESS', owner_request_id: 'taker-0' });
    expect(found.get(lapsed[1]!)).toMatchObject({ state: 'IN_PROGRESS', owner_request_id: 'taker-1' });
    // The completions, the fresh claims and the take-overs went in one transaction.
    expect(await writers([...held.slice(0, 5), ...fresh, ...lapsed])).toBe(1);
  });

  it('a batch with a bad operation: that caller gets its error, every other its own answer', async () => {
    const held = keys(3);
    await Promise.all(held.map((k, i) => store.claim(platform, k, fp({ bad: i }), `owner-${i}`)));
    const fresh = keys(5);
    const results = await Promise.allSettled<unknown>([
      ...fresh.map((k, i) => store.claim(platform, k, fp({ fresh: i }), `fresh-${i}`)),
      // A NUL character cannot be stored in a text column: Postgres refuses the statement.
      store.complete(platform, held[0]!, 'owner-0', response('nul \u0000 byte')),
      store.complete(platform, held[1]!, 'owner-1', response('{"ok":true}')),
      store.release(platform, held[2]!, 'owner-2'),
      store.claim(`pl\u0000bad`, 'k', fp({}), 'bad-claim'),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      ...Array(5).fill('fulfilled'),
      'rejected',
      'fulfilled',
      'fulfilled',
      'rejected',
    ]);
    expect(results.slice(0, 5).map((r) => (r as PromiseFulfilledResult<unknown>).value)).toEqual(
      Array.from({ length: 5 }, () => ({ kind: 'claimed' })),
    );
    const found = await rows([...held, ...fresh]);
    expect(found.get(held[0]!)).toMatchObject({ state: 'IN_PROGRESS', owner_request_id: 'owner-0' });
    expect(found.get(held[1]!)).toMatchObject({ state: 'COMPLETED', response_status: 201 });
    expect(found.has(held[2]!)).toBe(false);
    fresh.forEach((k, i) =>
      expect(found.get(k)).toMatchObject({ state: 'IN_PROGRESS', owner_request_id: `fresh-${i}` }),
    );
    // The refused completion left its claim as it was: it can still be completed.
    await store.complete(platform, held[0]!, 'owner-0', response('fine'));
    expect((await rows([held[0]!])).get(held[0]!)).toMatchObject({ state: 'COMPLETED' });
  });
});

describe('PostgresIdempotencyStore: group commit when the database goes away', () => {
  let lost: TestDatabase;
  let lostOrm: MikroORM;
  let admin: MikroORM;
  const allow = (on: boolean) =>
    admin.em.getConnection().execute(`ALTER DATABASE "${lost.name}" WITH ALLOW_CONNECTIONS ${on}`);

  beforeAll(async () => {
    lost = await createTestDatabase('gwgroupcommitlost');
    const open = (url: string) =>
      openStore({
        databaseUrl: url,
        schema: GATEWAY_SCHEMA,
        entities: [],
        migrations,
        logger: createLogger('test', 'silent'),
      });
    lostOrm = await open(lost.url);
    await migrate(lostOrm, GATEWAY_SCHEMA);
    admin = await open(db.url);
  });

  afterAll(async () => {
    await allow(true).catch(() => undefined);
    await lostOrm?.close();
    await admin?.close();
    await lost?.drop();
  });

  it('every operation of the failed batch fails as its own statement would, then the store works again', async () => {
    const lostStore = new PostgresIdempotencyStore(lostOrm, { ttlMs: 86_400_000, leaseMs: 60_000 });
    const held = keys(2);
    await Promise.all(held.map((k, i) => lostStore.claim(platform, k, fp({ i }), `owner-${i}`)));
    await allow(false);
    await admin.em
      .getConnection()
      .execute(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ?`, [lost.name]);
    const fresh = keys(5);
    const results = await Promise.allSettled<unknown>([
      ...fresh.map((k, i) => lostStore.claim(platform, k, fp({ i }), `fresh-${i}`)),
      lostStore.complete(platform, held[0]!, 'owner-0', response('{}')),
      lostStore.release(platform, held[1]!, 'owner-1'),
    ]);
    expect(results.map((r) => r.status)).toEqual(Array(7).fill('rejected'));
    await allow(true);
    expect(await lostStore.claim(platform, fresh[0]!, fp({ i: 0 }), 'fresh-0')).toEqual({ kind: 'claimed' });
    await lostStore.complete(platform, held[0]!, 'owner-0', response('{}'));
    expect(await lostStore.claim(platform, held[0]!, fp({ i: 0 }), 'retry')).toMatchObject({
      kind: 'replay',
    });
  });
});
