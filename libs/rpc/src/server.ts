import {
  Server,
  ServerCredentials,
  Metadata,
  status as grpcStatus,
  type ServiceDefinition,
  type UntypedServiceImplementation,
  type handleClientStreamingCall,
  type handleUnaryCall,
  type ServerReadableStream,
  type ServerUnaryCall,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { randomUUID } from 'node:crypto';
import { withContext, type Logger } from '@sluice/logging';
import { endSpan, extractTraceContext, failSpan, SpanKind, startSpan, withSpan } from '@sluice/tracing';
import type { Metrics } from '@sluice/metrics';
import { isDomainError } from '@sluice/core';
import { isDownstreamTransportFailure, toServiceError } from './errors.js';
import { withDeadline } from './deadline.js';

export const REQUEST_ID_METADATA = 'x-request-id';
export const PLATFORM_ID_METADATA = 'x-platform-id';

/** What a handler knows about the call besides the request. */
export interface CallContext {
  requestId: string;
  /** The authenticated platform the gateway acts for, when any. */
  platformId?: string;
  metadata: Metadata;
}

/**
 * Async handler form of a ts-proto `XServer` interface: a unary method takes its request, a
 * client-streaming method the stream of its requests (read with `for await`, which applies
 * backpressure: the client sends no faster than the handler reads).
 */
export type AsyncService<S> = {
  // `string extends K` drops the index signature inherited from UntypedServiceImplementation.
  [K in keyof S as string extends K ? never : K]: S[K] extends handleUnaryCall<infer Req, infer Res>
    ? (request: Req, ctx: CallContext) => Promise<Res>
    : S[K] extends handleClientStreamingCall<infer Req, infer Res>
      ? (requests: AsyncIterable<Req>, ctx: CallContext) => Promise<Res>
      : never;
};

export interface RegisteredService {
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
  /** Fully qualified service name for health (e.g. `sluice.identity.v1.IdentityService`). */
  name: string;
}

function firstString(md: Metadata, key: string): string | undefined {
  const v = md.get(key)[0];
  return v === undefined ? undefined : String(v);
}

/**
 * Adapts async handlers to grpc-js: runs each call inside the request context
 * (request id and platform id from metadata, so they reach logs and events),
 * turns expected DomainErrors into their status and anything else into an
 * INTERNAL error that leaks nothing, and logs each call.
 */
export function implement<S>(
  definition: ServiceDefinition,
  handlers: AsyncService<S>,
  logger: Logger,
  /** Fully qualified name; taken from the methods' paths when omitted. */
  serviceName?: string,
): RegisteredService {
  const implementation: UntypedServiceImplementation = {};
  let name = serviceName ?? '';
  for (const [method, def] of Object.entries(definition)) {
    name = def.path.split('/')[1] ?? name;
    const handler = (handlers as Record<string, (req: unknown, ctx: CallContext) => Promise<unknown>>)[method];
    if (!handler) throw new Error(`handler for ${def.path} is missing`);
    if (def.responseStream) throw new Error(`${def.path}: server-streaming methods are not supported`);
    implementation[method] = (
      call: ServerUnaryCall<unknown, unknown> | ServerReadableStream<unknown, unknown>,
      callback: sendUnaryData<unknown>,
    ) => {
      const requestId = firstString(call.metadata, REQUEST_ID_METADATA) ?? randomUUID();
      const platformId = firstString(call.metadata, PLATFORM_ID_METADATA);
      const started = process.hrtime.bigint();
      const callerDeadline = call.getDeadline();
      const deadlineMs = callerDeadline instanceof Date ? callerDeadline.getTime() : callerDeadline;
      // The caller's trace continues here (traceparent metadata); the span is active for the handler.
      const [, grpcService = name, grpcMethod = method] = def.path.split('/');
      const span = startSpan(def.path.slice(1), {
        kind: SpanKind.SERVER,
        parent: extractTraceContext((key) => firstString(call.metadata, key)),
        attributes: { 'rpc.system': 'grpc', 'rpc.service': grpcService, 'rpc.method': grpcMethod, 'sluice.request_id': requestId },
      });
      void withContext({ requestId, platformId }, () => withSpan(span, () => withDeadline(deadlineMs, async () => {
        try {
          // A client-streaming handler reads the call itself (a Readable of the requests).
          const input = def.requestStream ? call : (call as ServerUnaryCall<unknown, unknown>).request;
          const res = await handler(input, { requestId, platformId, metadata: call.metadata });
          logger.debug({ rpc: def.path, ms: Number(process.hrtime.bigint() - started) / 1e6 }, 'rpc ok');
          endSpan(span, undefined, { 'rpc.grpc.status_code': grpcStatus.OK });
          callback(null, res);
        } catch (err) {
          if (isDomainError(err)) {
            logger.info({ rpc: def.path, code: err.code }, 'rpc rejected');
          } else if (isDownstreamTransportFailure(err)) {
            logger.warn({ rpc: def.path, err }, 'rpc failed: a service it depends on did not answer');
          } else {
            logger.error({ rpc: def.path, err }, 'rpc failed');
          }
          const failure = toServiceError(err);
          // An expected refusal (a DomainError: NOT_FOUND, FAILED_PRECONDITION...) is an answer, not a server failure.
          if (!isDomainError(err)) failSpan(span, grpcStatus[failure.code] ?? 'UNKNOWN');
          endSpan(span, undefined, { 'rpc.grpc.status_code': failure.code });
          callback(failure as never, null);
        }
      })));
    };
  }
  if (!name) throw new Error('service name unknown: pass serviceName for a service without methods');
  return { definition, implementation, name };
}

/**
 * RED metrics of a service's methods, the names of go-grpc-prometheus:
 * `grpc_server_started_total`, `grpc_server_handled_total` (by `grpc_code`, the
 * status name: OK, NOT_FOUND, ...) and the `grpc_server_handling_seconds`
 * histogram, labelled by `grpc_service`, `grpc_method` and `grpc_type` (bounded:
 * the methods of the proto). Wraps the implementation grpc-js calls, so every
 * registered handler is measured, whatever built it.
 */
export function instrumentService(service: RegisteredService, metrics: Metrics): RegisteredService {
  const labelNames = ['grpc_service', 'grpc_method', 'grpc_type'] as const;
  const started = metrics.counter({ name: 'grpc_server_started_total', help: 'RPCs started on the server', labelNames });
  const { total: handled, duration: seconds } = metrics.red({
    total: { name: 'grpc_server_handled_total', help: 'RPCs completed on the server, by gRPC status code' },
    duration: { name: 'grpc_server_handling_seconds', help: 'Time from receiving an RPC to sending its response' },
    labelNames,
    resultLabels: ['grpc_code'],
  });
  const implementation: UntypedServiceImplementation = {};
  for (const [method, def] of Object.entries(service.definition)) {
    const original = service.implementation[method] as (call: unknown, callback: sendUnaryData<unknown>) => void;
    const labels = {
      grpc_service: service.name,
      grpc_method: def.path.split('/')[2] ?? method,
      grpc_type: def.requestStream ? 'client_stream' : 'unary',
    };
    implementation[method] = (call: unknown, callback: sendUnaryData<unknown>) => {
      started.inc(labels);
      const stop = seconds.startTimer(labels);
      original(call, (err, ...rest) => {
        stop();
        const code = err ? ((err as { code?: number }).code ?? grpcStatus.UNKNOWN) : grpcStatus.OK;
        handled.inc({ ...labels, grpc_code: grpcStatus[code] ?? 'UNKNOWN' });
        callback(err, ...rest);
      });
    };
  }
  return { ...service, implementation };
}

export interface RpcServer {
  port: number;
  server: Server;
  health: HealthImplementation;
  /** Stops accepting calls, lets in-flight calls finish within `graceMs`, then cuts the rest. */
  shutdown(graceMs: number): Promise<void>;
}

/**
 * Starts a gRPC server with the standard `grpc.health.v1.Health` service. The
 * overall status ('') and each service's status turn SERVING once bound and
 * NOT_SERVING when shutdown starts.
 */
export async function startRpcServer(opts: {
  host: string;
  port: number;
  services: RegisteredService[];
  logger: Logger;
  /** Measure every method (see instrumentService). */
  metrics?: Metrics;
}): Promise<RpcServer> {
  const server = new Server({
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
    // Clients reconnect (and so re-resolve a headless Service's addresses) at least every few
    // minutes: replicas added by a scale-up take their share of the calls. In-flight calls finish.
    'grpc.max_connection_age_ms': 300_000,
    'grpc.max_connection_age_grace_ms': 30_000,
  });
  const statusMap: Record<string, 'SERVING' | 'NOT_SERVING'> = { '': 'NOT_SERVING' };
  for (const s of opts.services) statusMap[s.name] = 'NOT_SERVING';
  const health = new HealthImplementation(statusMap);
  health.addToServer(server);
  // grpc-js refuses a service without methods; a skeleton still reports health under its name.
  for (const s of opts.services) {
    if (!Object.keys(s.definition).length) continue;
    const { definition, implementation } = opts.metrics ? instrumentService(s, opts.metrics) : s;
    server.addService(definition, implementation);
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${opts.host}:${opts.port}`, ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  for (const key of Object.keys(statusMap)) health.setStatus(key, 'SERVING');
  opts.logger.info({ port, host: opts.host }, 'gRPC server listening');
  return {
    port,
    server,
    health,
    async shutdown(graceMs: number) {
      for (const key of Object.keys(statusMap)) health.setStatus(key, 'NOT_SERVING');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          opts.logger.warn('grace period over; cutting remaining calls');
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
