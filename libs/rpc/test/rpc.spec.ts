import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  status,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { DomainError, isDomainError } from '@sluice/core';
import { createLogger, currentContext, withContext } from '@sluice/logging';
import { createRpcClient, implement, startRpcServer, RpcError, type RpcServer } from '../src/index.js';

// A JSON-serialized service, so the kit is tested without generated stubs.
const json = {
  serialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  deserialize: (b: Buffer) => JSON.parse(b.toString()),
};
const method = (name: string) => ({
  path: `/test.v1.EchoService/${name}`,
  requestStream: false,
  responseStream: false,
  requestSerialize: json.serialize,
  requestDeserialize: json.deserialize,
  responseSerialize: json.serialize,
  responseDeserialize: json.deserialize,
});
const EchoService = {
  echo: method('Echo'),
  fail: method('Fail'),
  crash: method('Crash'),
  slow: method('Slow'),
} as unknown as ServiceDefinition;
const EchoClient = makeGenericClientConstructor(EchoService, 'test.v1.EchoService');

type Echo = { text?: string; ms?: number };
/** Called when a Slow call reaches its handler. */
let slowStarted: () => void = () => undefined;
const logger = createLogger('rpc-test', 'silent');

describe('rpc kit', () => {
  let server: RpcServer;
  let client: Record<
    string,
    (req: unknown, opts?: { deadlineMs?: number }) => Promise<Record<string, unknown>>
  >;

  beforeAll(async () => {
    const handlers = {
      echo: async (req: Echo, ctx: { requestId: string; platformId?: string }) => ({
        text: req.text,
        requestId: ctx.requestId,
        platformId: ctx.platformId,
        logged: currentContext().requestId,
      }),
      fail: async () => {
        throw new DomainError('NOT_FOUND', 'THING_NOT_FOUND', 'No such thing', { id: 'Thing:1' });
      },
      crash: async () => {
        throw new Error('connection string postgres://secret@db leaked?');
      },
      slow: async (req: Echo) => {
        slowStarted();
        await new Promise((r) => setTimeout(r, req.ms));
        return { done: true };
      },
    };
    server = await startRpcServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      services: [implement(EchoService, handlers as never, logger)],
    });
    client = createRpcClient(EchoClient as never, `127.0.0.1:${server.port}`) as never;
  });

  afterAll(async () => {
    await server?.shutdown(100);
  });

  it('carries request id and platform id from the caller context', async () => {
    const res = await withContext({ requestId: 'req-123', platformId: 'Platform:p' }, () =>
      client.echo!({ text: 'hi' }),
    );
    expect(res).toEqual({ text: 'hi', requestId: 'req-123', platformId: 'Platform:p', logged: 'req-123' });
  });

  it('turns a DomainError into its status and back into the same DomainError', async () => {
    const err = await client.fail!({}).catch((e) => e);
    expect(isDomainError(err)).toBe(true);
    expect(err).toMatchObject({
      kind: 'NOT_FOUND',
      code: 'THING_NOT_FOUND',
      message: 'No such thing',
      details: { id: 'Thing:1' },
    });
  });

  it('hides unexpected errors behind INTERNAL', async () => {
    const err = await client.crash!({}).catch((e) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect(err.grpcCode).toBe(status.INTERNAL);
    expect(err.message).toBe('Internal error');
  });

  it('applies a deadline', async () => {
    const err = await client.slow!({ ms: 500 }, { deadlineMs: 50 }).catch((e) => e);
    expect(err.grpcCode).toBe(status.DEADLINE_EXCEEDED);
  });

  it('serves grpc.health.v1 and drains in-flight calls on shutdown', async () => {
    const HealthClient = makeGenericClientConstructor(healthService, 'grpc.health.v1.Health');
    const h = new HealthClient(`127.0.0.1:${server.port}`, credentials.createInsecure()) as unknown as {
      check: (
        req: { service: string },
        md: Metadata,
        cb: (e: ServiceError | null, r: { status: string | number }) => void,
      ) => void;
    };
    const check = (service: string) =>
      new Promise<{ status: string | number }>((res, rej) =>
        h.check({ service }, new Metadata(), (e, r) => (e ? rej(e) : res(r))),
      );
    expect((await check('')).status).toBe('SERVING');
    expect((await check('test.v1.EchoService')).status).toBe('SERVING');

    // In flight for sure: the call has reached its handler (a fixed sleep can lose that race on a busy machine).
    const arrived = new Promise<void>((r) => (slowStarted = r));
    const inflight = client.slow!({ ms: 300 });
    await arrived;
    const stopping = server.shutdown(5000);
    await expect(inflight).resolves.toEqual({ done: true });
    await stopping;
    await expect(client.echo!({ text: 'late' }, { deadlineMs: 500 })).rejects.toBeTruthy();
  });
});
