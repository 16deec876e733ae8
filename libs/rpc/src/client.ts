import {
  credentials,
  Metadata,
  type CallOptions,
  type Client,
  type ClientOptions,
  type ClientUnaryCall,
  type ClientWritableStream,
  type ServiceError,
  type ChannelCredentials,
} from '@grpc/grpc-js';
import { currentContext } from '@sluice/logging';
import { endSpan, failSpan, injectTraceContext, SpanKind, startSpan, withSpan } from '@sluice/tracing';
import type { Metrics } from '@sluice/metrics';
import { status } from '@grpc/grpc-js';
import { fromServiceError, RpcError } from './errors.js';
import { inheritedDeadline } from './deadline.js';
import { PLATFORM_ID_METADATA, REQUEST_ID_METADATA } from './server.js';

type Callback<Res> = (error: ServiceError | null, response: Res) => void;

export interface CallOpts {
  deadlineMs?: number;
  metadata?: Record<string, string>;
}

/**
 * A client-streaming call in progress: `write` each message (it waits while the transport's
 * buffer is full, so a fast producer never piles messages up in memory), then `end` for the
 * response. `response` settles as soon as the server answers, even early (an error before the
 * client finished writing); a write after that rejects with the server's error.
 */
export interface ClientStream<Req, Res> {
  write(message: Req): Promise<void>;
  end(): Promise<Res>;
  /** Abandons the call (the server sees CANCELLED). */
  cancel(): void;
  response: Promise<Res>;
}

type ClientStreamingMethod<Req, Res> = (
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: Callback<Res>,
) => ClientWritableStream<Req>;

/**
 * Promise form of a ts-proto grpc-js client: `await client.getCustomer(req)`; a client-streaming
 * method returns a ClientStream: `const s = client.upload(); await s.write(m); await s.end()`.
 */
export type PromiseClient<C> = {
  [
    K in keyof C as C[K] extends ClientStreamingMethod<infer _Req, infer _Res> ? K : never
  ]: C[K] extends ClientStreamingMethod<infer Req, infer Res>
    ? (opts?: CallOpts) => ClientStream<Req, Res>
    : never;
} & {
  [
    K in keyof C as C[K] extends ClientStreamingMethod<infer _Req, infer _Res>
      ? never
      : C[K] extends (
            request: never,
            metadata: Metadata,
            options: Partial<CallOptions>,
            callback: Callback<unknown>,
          ) => ClientUnaryCall
        ? K
        : never
  ]: C[K] extends (
    request: infer Req,
    metadata: Metadata,
    options: Partial<CallOptions>,
    callback: Callback<infer Res>,
  ) => ClientUnaryCall
    ? (request: Req, opts?: CallOpts) => Promise<Res>
    : never;
} & { close(): void };

type ClientCtor<C> = new (address: string, creds: ChannelCredentials, options?: Partial<ClientOptions>) => C;

/**
 * Reconnect backoff of every client channel (grpc-js subchannel backoff).
 *
 * A channel that cannot connect goes to TRANSIENT_FAILURE and fails calls at
 * once with UNAVAILABLE (they are not queued) until its next connection attempt,
 * which grpc-js schedules with exponential backoff: by default 1 s × 1.6 per
 * failed attempt (±20 % jitter) up to 120 s. The wait grows with the time the
 * server was down: a client whose server took 20 s to restart kept failing for
 * up to ~10 s more (measured), one whose server took a minute for up to ~45 s
 * more, and after a few minutes for up to two minutes, although the server was
 * serving: every call through that client failed (the gateway answered 503).
 *
 * Our services are a few hops away on a private network and restart (deploys,
 * crashes) as a matter of course, so a client tries again at least every
 * `maxMs` (±20 %): a restarted server is used within about a second of serving,
 * whatever the outage lasted. A connection attempt to a server that is down costs
 * one refused TCP handshake per second per client, which is negligible.
 */
export const RECONNECT_BACKOFF = { initialMs: 100, maxMs: 1_000 } as const;

/**
 * The channel options of every client: bounded reconnect backoff (see
 * RECONNECT_BACKOFF); HTTP/2 keepalive pings every 30 s while calls are in
 * flight, so a peer that vanished without closing the connection (a deleted
 * pod, a network partition) is noticed; and up to 5 attempts of a call that
 * failed UNAVAILABLE (50 ms → 500 ms apart, 750 ms of pauses at most; 5 is grpc-js's cap). That retry
 * covers a connection that drops under a call: with 3, a call whose attempts met the killed replica's
 * reset connection before the balancer dropped it could still fail (CI saw it once). And wait-for-ready: a call made while no replica of the
 * service is connected (one restarting, the other not yet reconnected after its
 * own restart) waits for one, within its deadline, instead of failing at once —
 * it has not been sent, so waiting is safe for every call. A service that stays
 * down therefore costs each call its deadline (the gateway's RPC_DEADLINE_MS,
 * then 503 with Retry-After), never more.
 *
 * Calls are balanced round robin over every address of the target (`rpcTarget`): the
 * replicas of a service, each with its own connection. A replica that is stopping
 * (GOAWAY) or gone leaves the rotation at once; a call that was refused by it before
 * being read is retried on another replica (grpc-js transparent retry, then the policy
 * above), so one replica restarting fails no call while another serves.
 */
export function rpcChannelOptions(): Partial<ClientOptions> {
  return {
    'grpc.initial_reconnect_backoff_ms': RECONNECT_BACKOFF.initialMs,
    'grpc.max_reconnect_backoff_ms': RECONNECT_BACKOFF.maxMs,
    'grpc.keepalive_time_ms': 30_000,
    'grpc.service_config': JSON.stringify({
      loadBalancingConfig: [{ round_robin: {} }],
      methodConfig: [
        {
          name: [{}],
          retryPolicy: {
            maxAttempts: 5,
            initialBackoff: '0.05s',
            maxBackoff: '0.5s',
            backoffMultiplier: 2,
            retryableStatusCodes: ['UNAVAILABLE'],
          },
        },
      ],
    }),
  };
}

/**
 * The grpc-js target of a `<SERVICE>_GRPC_URL` value. `host:port` and `dns:///name:port` resolve
 * through DNS (every address a name has: a Kubernetes headless Service lists its ready pods);
 * a comma-separated list of `ip:port` (the local stack's replicas) becomes an `ipv4:`/`ipv6:`
 * target; a value with its own scheme (`ipv4:`, `unix:`) is used as it is.
 */
export function rpcTarget(address: string): string {
  if (!address.includes(',') || /^(dns|ipv4|ipv6|unix|unix-abstract|vsock):/.test(address)) return address;
  const parts = address.split(',').map((p) => p.trim());
  if (parts.every((p) => /^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(p))) return `ipv4:${parts.join(',')}`;
  if (parts.every((p) => /^\[[0-9a-f:.]+\]:\d+$/i.test(p))) return `ipv6:${parts.join(',')}`;
  throw new Error(
    `${address}: a list of replica addresses must be IP literals of one family (ip:port,ip:port)`,
  );
}

/**
 * Creates a promise client for a service. Every call carries a deadline
 * (default `defaultDeadlineMs`) and the current request id and platform id as
 * metadata; a server's DomainError comes back as the same DomainError. The
 * channel reconnects promptly after its server restarts (`rpcChannelOptions`).
 */
export function createRpcClient<C extends Client>(
  Ctor: ClientCtor<C>,
  address: string,
  opts: {
    defaultDeadlineMs?: number;
    /** Measure unary calls: `grpc_client_handled_total` by code, `grpc_client_handling_seconds`. */
    metrics?: Metrics;
  } = {},
): PromiseClient<C> {
  const client = new Ctor(rpcTarget(address), credentials.createInsecure(), rpcChannelOptions());
  const defaultDeadline = opts.defaultDeadlineMs ?? 5000;
  const measured = opts.metrics && clientMetrics(opts.metrics);
  // Each method's wrapper is built once, at its first use, not at every call.
  const methods = new Map<string, unknown>();
  return new Proxy({} as PromiseClient<C>, {
    get(_t, prop: string) {
      if (prop === 'close') return () => client.close();
      if (prop === 'then') return undefined;
      let method = methods.get(prop);
      if (method === undefined) {
        method = wrap(prop);
        if (method !== undefined) methods.set(prop, method);
      }
      return method;
    },
  });

  function wrap(prop: string): unknown {
    const fn = (client as unknown as Record<string, unknown>)[prop];
    if (typeof fn !== 'function') return undefined;
    const service = (
      Ctor as unknown as { service?: Record<string, { requestStream?: boolean; path?: string }> }
    ).service;
    if (service?.[prop]?.requestStream)
      return (callOpts: CallOpts = {}) => clientStream(client, fn, callSetup(callOpts, defaultDeadline));
    const [, grpcService = 'unknown', grpcMethod = prop] = (service?.[prop]?.path ?? '').split('/');
    const labels = { grpc_service: grpcService, grpc_method: grpcMethod, grpc_type: 'unary' };
    return (request: unknown, callOpts: CallOpts = {}) =>
      new Promise((resolve, reject) => {
        // The client span's context goes in the metadata (traceparent), so the server's span is its child.
        const span = startSpan(`${grpcService}/${grpcMethod}`, {
          kind: SpanKind.CLIENT,
          attributes: { 'rpc.system': 'grpc', 'rpc.service': grpcService, 'rpc.method': grpcMethod },
        });
        const { md, deadlineAt } = withSpan(span, () => callSetup(callOpts, defaultDeadline));
        if (deadlineAt <= Date.now()) {
          endSpan(span, { code: 'DEADLINE_EXCEEDED' });
          reject(deadlinePassed());
          return;
        }
        const deadline = new Date(deadlineAt);
        const stop = measured?.seconds.startTimer(labels);
        (fn as (...a: unknown[]) => unknown).call(
          client,
          request,
          md,
          { deadline },
          (err: ServiceError | null, res: unknown) => {
            stop?.();
            const code = err ? err.code : status.OK;
            measured?.handled.inc({ ...labels, grpc_code: status[code] ?? 'UNKNOWN' });
            if (err) failSpan(span, status[code] ?? 'UNKNOWN');
            endSpan(span, undefined, { 'rpc.grpc.status_code': code });
            if (err) reject(fromServiceError(err));
            else resolve(res);
          },
        );
      });
  }
}

/** The client side of the gRPC RED metrics (go-grpc-prometheus names; see instrumentService for the server's). */
function clientMetrics(metrics: Metrics) {
  const { total, duration } = metrics.red({
    total: { name: 'grpc_client_handled_total', help: 'RPCs completed by the client, by gRPC status code' },
    duration: {
      name: 'grpc_client_handling_seconds',
      help: 'Time from sending an RPC to receiving its response',
    },
    labelNames: ['grpc_service', 'grpc_method', 'grpc_type'],
    resultLabels: ['grpc_code'],
  });
  return { handled: total, seconds: duration };
}

/** Metadata (request id, platform id, W3C trace context, extra) and the deadline of a call (deadline propagation, deadline.ts). */
function callSetup(callOpts: CallOpts, defaultDeadline: number): { md: Metadata; deadlineAt: number } {
  // Wait-for-ready (see rpcChannelOptions); grpc-js reads it from the call's metadata options only.
  const md = new Metadata({ waitForReady: true });
  const ctx = currentContext();
  if (ctx.requestId) md.set(REQUEST_ID_METADATA, ctx.requestId);
  if (ctx.platformId) md.set(PLATFORM_ID_METADATA, ctx.platformId);
  injectTraceContext((key, value) => md.set(key, value));
  for (const [k, v] of Object.entries(callOpts.metadata ?? {})) md.set(k, v);
  // At most the time the caller we serve has left.
  const own = Date.now() + (callOpts.deadlineMs ?? defaultDeadline);
  const inherited = inheritedDeadline();
  return { md, deadlineAt: inherited === undefined ? own : Math.min(own, inherited) };
}

function deadlinePassed(): RpcError {
  return new RpcError(status.DEADLINE_EXCEEDED, 'The caller’s deadline passed before this call was made');
}

function clientStream(
  client: unknown,
  fn: unknown,
  setup: { md: Metadata; deadlineAt: number },
): ClientStream<unknown, unknown> {
  let failure: Error | undefined;
  let resolveResponse!: (res: unknown) => void;
  let rejectResponse!: (err: Error) => void;
  const response = new Promise<unknown>((resolve, reject) => {
    resolveResponse = resolve;
    rejectResponse = reject;
  });
  response.catch((err: Error) => {
    failure = err;
  });
  if (setup.deadlineAt <= Date.now()) {
    rejectResponse(deadlinePassed());
    const noop = async () => {
      throw deadlinePassed();
    };
    return { write: noop, end: noop, cancel: () => undefined, response };
  }
  const call = (fn as (...a: unknown[]) => ClientWritableStream<unknown>).call(
    client,
    setup.md,
    { deadline: new Date(setup.deadlineAt) },
    (err: ServiceError | null, res: unknown) =>
      err ? rejectResponse(fromServiceError(err)) : resolveResponse(res),
  );
  const settledError = response.then(
    () => undefined,
    (err: Error) => err,
  );
  return {
    response,
    async write(message) {
      if (failure) throw failure;
      if (call.write(message)) return;
      const drained = new Promise<void>((resolve) => call.once('drain', () => resolve()));
      const err = await Promise.race([drained.then(() => undefined), settledError]);
      if (err) throw err;
    },
    async end() {
      if (!failure) call.end();
      return response;
    },
    cancel() {
      call.cancel();
    },
  };
}
