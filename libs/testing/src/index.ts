import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { isDomainError, type DomainError } from '@sluice/core';

/**
 * Test infrastructure. Postgres and NATS come from DATABASE_URL / NATS_URL when
 * set; otherwise, where a Docker engine runs, from testcontainers. Each call
 * gets its own database and its own subject prefix (so its own streams), so
 * test files run beside each other and beside a running `npm start`.
 */

let pgContainerUrl: Promise<string> | undefined;
let natsContainerUrl: Promise<string> | undefined;

function dockerAvailable(): boolean {
  try {
    execFileSync('docker', ['info'], { stdio: 'ignore', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

async function basePostgresUrl(): Promise<string> {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  if (dockerAvailable()) {
    pgContainerUrl ??= (async () => {
      const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
      const c = await new PostgreSqlContainer('postgres:16-alpine').start();
      return c.getConnectionUri();
    })();
    return pgContainerUrl;
  }
  throw new Error(
    'Tests need Postgres: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/sluice) or run a Docker engine',
  );
}

export async function natsUrl(): Promise<string> {
  if (process.env.NATS_URL) return process.env.NATS_URL;
  if (dockerAvailable()) {
    natsContainerUrl ??= (async () => {
      const { GenericContainer } = await import('testcontainers');
      const c = await new GenericContainer('nats:2.10-alpine')
        .withCommand(['-js'])
        .withExposedPorts(4222)
        .start();
      return `nats://${c.getHost()}:${c.getMappedPort(4222)}`;
    })();
    return natsContainerUrl;
  }
  throw new Error(
    'Tests need NATS with JetStream: set NATS_URL (e.g. nats://127.0.0.1:4222) or run a Docker engine',
  );
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, empty database for one test file. */
export async function createTestDatabase(label = 'test'): Promise<TestDatabase> {
  const base = new URL(await basePostgresUrl());
  const name = `sluice_${label
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase()
    .slice(0, 20)}_${randomBytes(5).toString('hex')}`;
  const admin = new URL(base);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: admin.toString() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

/** A unique event subject prefix (and so unique stream names) for one test file. */
export function testPrefix(label = 't'): string {
  return `${label
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase()
    .slice(0, 10)}${randomBytes(4).toString('hex')}`;
}

/** Deletes every stream whose name starts with the prefix (upper-cased). */
export async function dropStreams(url: string, prefix: string): Promise<void> {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    for await (const s of jsm.streams.list()) {
      if (s.config.name.startsWith(prefix.toUpperCase() + '_')) await jsm.streams.delete(s.config.name);
    }
  } finally {
    await nc.close();
  }
}

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Polls `fn` until it returns a truthy value or the timeout passes. */
export async function eventually<T>(
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end)
      throw new Error(`condition not met in ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** A MikroORM, typed structurally (no store dependency): its knex emits `query` for each statement. */
interface QueryEmitter {
  em: {
    getConnection(): {
      getKnex(): {
        on(e: 'query', f: (q: { sql: string }) => void): unknown;
        removeListener(e: 'query', f: (q: { sql: string }) => void): unknown;
      };
    };
  };
}

/** The statements an ORM ran while `fn` ran (their SQL, trimmed), with what `fn` returned. */
export async function statementsDuring<T>(
  orm: QueryEmitter,
  fn: () => Promise<T>,
): Promise<{ result: T; statements: string[] }> {
  const knex = orm.em.getConnection().getKnex();
  const statements: string[] = [];
  const seen = (q: { sql: string }) => void statements.push(q.sql.trim());
  knex.on('query', seen);
  try {
    return { result: await fn(), statements };
  } finally {
    knex.removeListener('query', seen);
  }
}

/** How many statements an ORM ran while `fn` ran: proves that something idle does not poll. */
export async function queriesDuring(orm: QueryEmitter, fn: () => Promise<unknown>): Promise<number> {
  return (await statementsDuring(orm, fn)).statements.length;
}
export * from './services.js';
export * from './world.js';
export * from './http.js';

/**
 * The DomainError a call fails with (a promise, or a function returning one); fails the test when
 * the call succeeds, and rethrows anything that is not a DomainError (a transport failure is no
 * refusal).
 */
export async function rejection(call: Promise<unknown> | (() => Promise<unknown>)): Promise<DomainError> {
  try {
    await (typeof call === 'function' ? call() : call);
  } catch (e) {
    if (isDomainError(e)) return e;
    throw e;
  }
  throw new Error('expected the call to fail');
}
export { cuttableLink, startBalancer, type Balancer } from './balancer.js';
