import {
  credentials,
  Metadata,
  type CallOptions,
  type Client,
  type ClientOptions,
  type ClientUnaryCall,
  type ServiceError,
  type ChannelCredentials,
} from '@grpc/grpc-js';
import { currentContext } from '@sluice/logging';
import { fromServiceError } from './errors.js';
import { PLATFORM_ID_METADATA, REQUEST_ID_METADATA } from './server.js';

type Callback<Res> = (error: ServiceError | null, response: Res) => void;

export interface CallOpts {
  deadlineMs?: number;
  metadata?: Record<string, string>;
}

/** Promise form of a ts-proto grpc-js client: `await client.getCustomer(req)`. */
export type PromiseClient<C> = {
  [K in keyof C as C[K] extends (
    request: never,
    metadata: Metadata,
    options: Partial<CallOptions>,
    callback: Callback<unknown>,
  ) => ClientUnaryCall
    ? K
    : never]: C[K] extends (
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
 * Creates a promise client for a service. Every call carries a deadline
 * (default `defaultDeadlineMs`) and the current request id and platform id as
 * metadata; a server's DomainError comes back as the same DomainError.
 */
export function createRpcClient<C extends Client>(
  Ctor: ClientCtor<C>,
  address: string,
  opts: { defaultDeadlineMs?: number } = {},
): PromiseClient<C> {
  const client = new Ctor(address, credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 30_000,
    'grpc.service_config': JSON.stringify({
      methodConfig: [
        {
          name: [{}],
          retryPolicy: {
            maxAttempts: 3,
            initialBackoff: '0.05s',
            maxBackoff: '0.5s',
            backoffMultiplier: 2,
            retryableStatusCodes: ['UNAVAILABLE'],
          },
        },
      ],
    }),
  });
  const defaultDeadline = opts.defaultDeadlineMs ?? 5000;
  return new Proxy({} as PromiseClient<C>, {
    get(_t, prop: string) {
      if (prop === 'close') return () => client.close();
      if (prop === 'then') return undefined;
      const fn = (client as unknown as Record<string, unknown>)[prop];
      if (typeof fn !== 'function') return undefined;
      return (request: unknown, callOpts: CallOpts = {}) =>
        new Promise((resolve, reject) => {
          const md = new Metadata();
          const ctx = currentContext();
          if (ctx.requestId) md.set(REQUEST_ID_METADATA, ctx.requestId);
          if (ctx.platformId) md.set(PLATFORM_ID_METADATA, ctx.platformId);
          for (const [k, v] of Object.entries(callOpts.metadata ?? {})) md.set(k, v);
          const deadline = new Date(Date.now() + (callOpts.deadlineMs ?? defaultDeadline));
          (fn as (...a: unknown[]) => unknown).call(client, request, md, { deadline }, (err: ServiceError | null, res: unknown) =>
            err ? reject(fromServiceError(err)) : resolve(res),
          );
        });
    },
  });
}
