import type { ChannelCredentials, Client, ClientOptions } from '@grpc/grpc-js';
import pg from 'pg';
import type { Clock } from '@sluice/core';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import {
  startService,
  type Composition,
  type RunningService,
  type ServiceConfig,
  type ServiceDefinition,
} from '@sluice/runtime';
import type { TObject } from '@sinclair/typebox';
import { createTestDatabase, dropStreams, natsUrl, testPrefix, type TestDatabase } from './index.js';

/**
 * Real services of the project started in-process through their composition roots, for the
 * integration tests of a service that asserts an effect belonging to a neighbour (a balance, a
 * hold, a single-use signing request, a customer). One database per call (each service migrates
 * its own schema in it), one subject prefix shared by all (so their events reach each other), a
 * gRPC server per service on a free port, each service's `<NAME>_GRPC_URL` pointing at the
 * neighbours started here, and shutdown in reverse order.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDefinition = ServiceDefinition<any, any>;
/** The service definitions to start, keyed by their name, in start order (a service's neighbours first). */
export type ServiceSetDefinitions = Record<string, AnyDefinition>;

type RunningOf<D> =
  D extends ServiceDefinition<infer P extends TObject, infer G extends Composition>
    ? RunningService<ServiceConfig<P>, G>
    : never;

export interface ServiceSetOptions<D extends ServiceSetDefinitions> {
  /** Variables every service receives (a service ignores those it does not declare). */
  env?: Record<string, string>;
  /** Variables of one service, over `env`. */
  envOf?: { [K in keyof D]?: Record<string, string> };
  /** The clock of every service (a ManualClock where a test drives time). */
  clock?: Clock;
  /**
   * Services whose event consumers are not started (their synchronous API is under test and a
   * neighbour's events would only add asynchronous work to what the test asserts).
   */
  withoutConsumers?: (keyof D)[];
}

export interface ServiceSet<D extends ServiceSetDefinitions> {
  /** The running services (their object graphs in `.graph`). */
  readonly running: { [K in keyof D]: RunningOf<D[K]> };
  readonly db: TestDatabase;
  /** A small pool on the test database: each service's tables are in its own schema. */
  readonly sql: pg.Pool;
  /** The subject prefix every service publishes and consumes under. */
  readonly prefix: string;
  readonly natsUrl: string;
  /** host:port of a service's gRPC server. */
  address(name: keyof D): string;
  /** A gRPC client of a service, closed by `stop()`. */
  client<C extends Client>(
    Ctor: new (address: string, creds: ChannelCredentials, options?: Partial<ClientOptions>) => C,
    name: keyof D,
    opts?: { defaultDeadlineMs?: number },
  ): PromiseClient<C>;
  /** Stops the services in reverse order, then drops the streams and the database. */
  stop(): Promise<void>;
}

/**
 * Test-only master keys (public, fixed: several in-process replicas of a service share them) of
 * the services whose data at rest is sealed, given to every service started here unless `env`
 * says otherwise. tools/stack.ts gives local stacks their own dev keys the same way.
 */
export const TEST_MASTER_KEYS: Record<string, string> = {
  IDENTITY_DATA_MASTER_KEY: Buffer.alloc(32, 'identity-test-key').toString('base64'),
  ACCOUNT_DATA_MASTER_KEY: Buffer.alloc(32, 'accounts-test-key').toString('base64'),
  PAYMENTS_DATA_MASTER_KEY: Buffer.alloc(32, 'payments-test-key').toString('base64'),
};

/** Where a service's client of a neighbour not started here points: nothing listens there, so a call fails at once. */
export const NOT_STARTED_ADDRESS = '127.0.0.1:1';

const GRPC_URL = /^([A-Z_]+)_GRPC_URL$/;
const variableName = (service: string) => `${service.toUpperCase().replace(/-/g, '_')}_GRPC_URL`;

/**
 * Starts `definitions` in order on a fresh database and subject prefix. A service whose config
 * names a neighbour (`ACCOUNTS_GRPC_URL`, ...) gets the address of that neighbour if it was
 * started before it here, and an address nothing listens on if it is not in the set (so a test
 * never reaches a stack that happens to run on the default ports); a neighbour listed after the
 * service that calls it is an error (list it first). `env`/`envOf` override any of this.
 */
export async function startServices<D extends ServiceSetDefinitions>(
  label: string,
  definitions: D,
  options: ServiceSetOptions<D> = {},
): Promise<ServiceSet<D>> {
  const names = Object.keys(definitions);
  for (const name of names) {
    if (definitions[name]!.name !== name) {
      throw new Error(`startServices: key ${name} holds the definition of ${definitions[name]!.name}`);
    }
  }
  const db = await createTestDatabase(label);
  const prefix = testPrefix(label);
  const nats = await natsUrl();
  const started: { name: string; running: RunningService<unknown> }[] = [];
  const clients: { close(): void }[] = [];
  const addresses = new Map<string, string>();
  let pool: pg.Pool | undefined;

  const stop = async () => {
    const errors: unknown[] = [];
    for (const c of clients.splice(0)) c.close();
    await pool?.end().catch((e) => errors.push(e));
    for (const s of started.splice(0).reverse()) await s.running.stop().catch((e) => errors.push(e));
    await dropStreams(nats, prefix).catch((e) => errors.push(e));
    await db.drop().catch((e) => errors.push(e));
    if (errors.length) throw new AggregateError(errors, `stopping the services of ${label}`);
  };

  try {
    for (const name of names) {
      const def = definitions[name]!;
      const neighbours: Record<string, string> = {};
      for (const variable of Object.keys((def.config as TObject).properties)) {
        if (!GRPC_URL.test(variable)) continue;
        const neighbour = names.find((n) => variableName(n) === variable);
        if (neighbour && !addresses.has(neighbour)) {
          throw new Error(`startServices: ${name} calls ${neighbour}; list ${neighbour} before ${name}`);
        }
        neighbours[variable] = neighbour ? addresses.get(neighbour)! : NOT_STARTED_ADDRESS;
      }
      const running = await startService(
        def,
        {
          DATABASE_URL: db.url,
          NATS_URL: nats,
          EVENT_SUBJECT_PREFIX: prefix,
          GRPC_PORT: '0',
          GRPC_HOST: '127.0.0.1',
          LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
          ...TEST_MASTER_KEYS,
          ...neighbours,
          ...options.env,
          ...options.envOf?.[name],
        },
        { clock: options.clock, consume: !options.withoutConsumers?.includes(name) },
      );
      started.push({ name, running });
      addresses.set(name, `127.0.0.1:${running.port}`);
    }
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }

  const running = Object.fromEntries(started.map((s) => [s.name, s.running])) as ServiceSet<D>['running'];
  const address = (name: keyof D) => {
    const a = addresses.get(String(name));
    if (!a) throw new Error(`${String(name)} is not started here`);
    return a;
  };
  return {
    running,
    db,
    prefix,
    natsUrl: nats,
    get sql() {
      pool ??= new pg.Pool({ connectionString: db.url, max: 2 });
      return pool;
    },
    address,
    client(Ctor, name, opts = {}) {
      const c = createRpcClient(Ctor, address(name), { defaultDeadlineMs: 10_000, ...opts });
      clients.push(c);
      return c;
    },
    stop,
  };
}
