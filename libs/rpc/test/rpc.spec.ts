import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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
import { Metrics, sumOf } from '@sluice/metrics';
import {
  createRpcClient,
  implement,
  inheritedDeadline,
  startRpcServer,
  RpcError,
  type RpcServer,
} from '../src/index.js';

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
  relay: method('Relay'),
  deadline: method('Deadline'),
  relayDeadline: method('RelayDeadline'),
  late: method('Late'),
  refuse: method('Refuse'),
} as unknown as ServiceDefinition;
const EchoClient = makeGenericClientConstructor(EchoService, 'test.v1.EchoService');

type Echo = { text?: string; ms?: number };
/** What the Late handler saw when it called on after its caller's deadline. */
let lateOutcome: Promise<unknown> | undefined;
let echoCalls = 0;
let refuseCalls = 0;
/** Called when a Slow call reaches its handler. */
let slowStarted: () => void = () => undefined;
const logger = createLogger('rpc-test', 'silent');

describe('rpc kit', () => {
  let server: RpcServer;
  type Client = Record<
    string,
    (req: unknown, opts?: { deadlineMs?: number }) => Promise<Record<string, unknown>>
  >;
  let client: Client;
  /** A client of the same server whose own default deadline is far longer than any caller's. */
  let patient: Client;
  const PATIENT_DEFAULT_MS = 600_000;

  beforeAll(async () => {
    const handlers = {
      echo: async (req: Echo, ctx: { requestId: string; platformId?: string }) => (echoCalls++, {
        text: req.text,
        requestId: ctx.requestId,
        platformId: ctx.platformId,
        logged: currentContext().requestId,
      }),
      fail: async () => {
        throw new DomainError('NOT_FOUND', 'THING_NOT_FOUND', 'No such thing', { id: 'Thing:1' });
      },
      refuse: async () => {
        refuseCalls++;
        throw new DomainError('UNAVAILABLE', 'SERVICE_UNAVAILABLE', 'Shedding load; retry in a moment');
      },
      crash: async () => {
        throw new Error('connection string postgres://secret@db leaked?');
      },
      slow: async (req: Echo) => {
        slowStarted();
        await new Promise((r) => setTimeout(r, req.ms));
        return { done: true };
      },
      // A downstream call that times out (this same server's Slow, 20 ms deadline).
      relay: async () => client.slow!({ ms: 300 }, { deadlineMs: 20 }),
      // The deadline this handler inherited from its caller.
      deadline: async () => ({ at: inheritedDeadline() }),
      // Calls Deadline through a client whose own default is ten minutes: it must inherit ours instead.
      relayDeadline: async () => ({ outer: inheritedDeadline(), inner: (await patient.deadline!({})).at }),
      // Outlives its caller's deadline, then calls on: that call must not be sent.
      late: async () => {
        await new Promise((r) => setTimeout(r, 150));
        lateOutcome = client.echo!({ text: 'too late' }).then(
          () => 'sent',
          (e: unknown) => e,
        );
        await lateOutcome;
        return {};
      },
    };
    server = await startRpcServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      services: [implement(EchoService, handlers as never, logger)],
    });
    client = createRpcClient(EchoClient as never, `127.0.0.1:${server.port}`) as never;
    patient = createRpcClient(EchoClient as never, `127.0.0.1:${server.port}`, {
      defaultDeadlineMs: PATIENT_DEFAULT_MS,
    }) as never;
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

  it('answers a DomainError of kind UNAVAILABLE once: the clients’ retry policy (for transport failures) does not repeat it', async () => {
    const err = await client.refuse!({}).catch((e) => e);
    expect(err).toMatchObject({ kind: 'UNAVAILABLE', code: 'SERVICE_UNAVAILABLE' });
    expect(refuseCalls).toBe(1);
  });

  it('passes a downstream DEADLINE_EXCEEDED through as itself (retryable, 503 at the gateway), not INTERNAL', async () => {
    const err = await client.relay!({}).catch((e) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect(err.grpcCode).toBe(status.DEADLINE_EXCEEDED);
    expect(err.message).toContain('did not answer in time');
  });

  it('propagates deadlines: a call made while serving one gets at most the time its caller has left', async () => {
    // The bounds below are the instants measured around the call, not tolerances: a deadline crosses
    // the wire as a relative timeout in whole milliseconds (grpc-timeout), so the server's copy of an
    // absolute deadline D lies in [D, D + the time the message took], and that time lies within the call.
    const before = Date.now();
    const res = (await client.relayDeadline!({}, { deadlineMs: 2_000 })) as { outer: number; inner: number };
    const after = Date.now();
    // The handler served a caller that gave it 2 s from some instant of the call.
    expect(res.outer).toBeGreaterThanOrEqual(before + 2_000);
    expect(res.outer).toBeLessThanOrEqual(after + 2_000);
    // Its own call (through a client whose default is ten minutes) inherited the caller's deadline:
    // it is the outer deadline, moved only by the transit of the inner call.
    expect(res.inner).toBeGreaterThanOrEqual(res.outer);
    expect(res.inner).toBeLessThanOrEqual(res.outer + (after - before));
    // Outside of any served call nothing is inherited: the client's own default applies.
    const outside = Date.now();
    const own = (await patient.deadline!({})).at as number;
    expect(own).toBeGreaterThanOrEqual(outside + PATIENT_DEFAULT_MS);
    expect(own).toBeLessThanOrEqual(Date.now() + PATIENT_DEFAULT_MS);
  });

  it('does not send a call once the caller it serves has given up', async () => {
    const err = await client.late!({}, { deadlineMs: 50 }).catch((e) => e);
    expect(err.grpcCode).toBe(status.DEADLINE_EXCEEDED);
    const calls = echoCalls;
    await vi.waitFor(() => expect(lateOutcome).toBeDefined(), { timeout: 5_000 });
    const outcome = (await lateOutcome) as RpcError;
    expect(outcome).toBeInstanceOf(RpcError);
    expect(outcome.grpcCode).toBe(status.DEADLINE_EXCEEDED);
    expect(outcome.message).toContain('deadline passed before this call was made');
    expect(echoCalls).toBe(calls);
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
    // After the drain the server is gone: a new call waits for a server until its deadline
    // (wait-for-ready), then fails as a retryable transport failure, and never runs.
    const calls = echoCalls;
    const late = await client.echo!({ text: 'late' }, { deadlineMs: 1_000 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(RpcError);
    expect([status.UNAVAILABLE, status.DEADLINE_EXCEEDED]).toContain((late as RpcError).grpcCode);
    expect(echoCalls).toBe(calls);
  });
});

describe('rpc metrics', () => {
  it('counts each call by method and status code, and times it, on the server and on the client', async () => {
    const serverMetrics = new Metrics('echo', { processMetrics: false });
    const clientMetrics = new Metrics('caller', { processMetrics: false });
    const server = await startRpcServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      metrics: serverMetrics,
      services: [
        implement(
          { echo: EchoService.echo!, fail: EchoService.fail!, crash: EchoService.crash! } as ServiceDefinition,
          {
            echo: async (req: Echo) => ({ text: req.text }),
            fail: async () => {
              throw new DomainError('NOT_FOUND', 'THING_NOT_FOUND', 'No such thing');
            },
            crash: async () => {
              throw new Error('boom');
            },
          } as never,
          logger,
        ),
      ],
    });
    const c = createRpcClient(EchoClient as never, `127.0.0.1:${server.port}`, { metrics: clientMetrics }) as unknown as Record<
      string,
      (req: unknown) => Promise<unknown>
    >;
    try {
      await c.echo!({ text: 'a' });
      await c.echo!({ text: 'b' });
      await c.fail!({}).catch(() => undefined);
      await c.crash!({}).catch(() => undefined);
      const s = await serverMetrics.samples();
      const handled = (grpc_method: string, grpc_code: string) =>
        sumOf(s, 'grpc_server_handled_total', { grpc_service: 'test.v1.EchoService', grpc_method, grpc_code, service: 'echo' });
      expect(handled('Echo', 'OK')).toBe(2);
      expect(handled('Fail', 'NOT_FOUND')).toBe(1);
      expect(handled('Crash', 'INTERNAL')).toBe(1);
      expect(sumOf(s, 'grpc_server_started_total')).toBe(4);
      expect(sumOf(s, 'grpc_server_handling_seconds_count', { grpc_method: 'Echo', grpc_type: 'unary' })).toBe(2);
      const cs = await clientMetrics.samples();
      expect(sumOf(cs, 'grpc_client_handled_total', { grpc_method: 'Echo', grpc_code: 'OK', service: 'caller' })).toBe(2);
      expect(sumOf(cs, 'grpc_client_handled_total', { grpc_method: 'Fail', grpc_code: 'NOT_FOUND' })).toBe(1);
      expect(sumOf(cs, 'grpc_client_handling_seconds_count')).toBe(4);
    } finally {
      (c as unknown as { close(): void }).close();
      await server.shutdown(100);
    }
  });
});
