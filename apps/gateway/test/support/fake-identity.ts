import { common, identity } from '@sluice/contracts';
import { DomainError, decodeCursor, pageSize } from '@sluice/core';
import { createLogger } from '@sluice/logging';
import { implement, startRpcServer, type CallContext, type RpcServer } from '@sluice/rpc';

export interface FakeToken {
  tokenId: string;
  secret: string;
  platformId: string;
  environment: 'SANDBOX' | 'PRODUCTION';
  permissions?: ('VIEW' | 'TRANSACT' | 'MANAGE')[];
}

/**
 * An identity gRPC server that fails on command, for errors.spec.ts only: the gateway's mapping
 * of a backend's failures (a NOT_FOUND, a crash whose message must not leak, an outage) and the
 * request and platform ids it forwards (captured here). Real gRPC, real health service, real error
 * transport. Tests of what identity itself does use the real service (support/identity.ts).
 */
export class FakeIdentity {
  readonly tokens = new Map<string, FakeToken>();
  authCalls = 0;
  /** Request id and platform id the last ListCustomers call carried (gRPC metadata). */
  lastCall: { requestId?: string; platformId?: string } = {};
  /** Makes the next calls fail with this error (transport-level outage tests). */
  failWith: Error | undefined;
  private server: RpcServer | undefined;

  add(t: FakeToken): FakeToken {
    this.tokens.set(t.tokenId, t);
    return t;
  }

  get address(): string {
    return `127.0.0.1:${this.server!.port}`;
  }

  async start(): Promise<this> {
    const logger = createLogger('fake-identity', 'silent');
    const unimplemented = async () => {
      throw new DomainError('UNIMPLEMENTED', 'NOT_IMPLEMENTED', 'not in the fake');
    };
    const handlers: Record<string, (req: never, ctx: CallContext) => Promise<unknown>> = {};
    for (const method of Object.keys(identity.IdentityServiceService)) handlers[method] = unimplemented;
    handlers.authenticateToken = async (req: identity.AuthenticateTokenRequest) => {
      this.authCalls++;
      if (this.failWith) throw this.failWith;
      const t = this.tokens.get(req.tokenId);
      if (!t || t.secret !== req.clientSecret)
        throw new DomainError('UNAUTHENTICATED', 'UNAUTHORIZED', 'Invalid or missing API credentials');
      return {
        tokenId: t.tokenId,
        platform: {
          id: t.platformId,
          name: 'p',
          environment:
            t.environment === 'SANDBOX' ? common.Environment.SANDBOX : common.Environment.PRODUCTION,
          createdAt: new Date(),
        },
        permissions: (t.permissions ?? ['VIEW', 'TRANSACT', 'MANAGE']).map((p) => identity.Permission[p]),
      } satisfies identity.AuthenticateTokenResponse;
    };
    handlers.listCustomers = async (req: identity.ListCustomersRequest, ctx: CallContext) => {
      this.lastCall = { requestId: ctx.requestId, platformId: ctx.platformId };
      pageSize(req.page?.limit);
      decodeCursor(req.page?.cursor);
      return { customers: [], page: { hasMore: false, totalCount: 0 } };
    };
    handlers.getPlatform = async (req: identity.GetPlatformRequest) => {
      if (req.platformId === 'explode')
        throw new Error('connection to db-internal-7.prod:5432 refused (password=hunter2)');
      throw new DomainError('NOT_FOUND', 'PLATFORM_NOT_FOUND', `Platform ${req.platformId} not found`);
    };
    this.server = await startRpcServer({
      host: '127.0.0.1',
      port: 0,
      services: [
        implement<identity.IdentityServiceServer>(identity.IdentityServiceService, handlers as never, logger),
      ],
      logger,
    });
    return this;
  }

  async stop(): Promise<void> {
    await this.server?.shutdown(0);
  }
}

export function basic(tokenId: string, secret: string): string {
  return `Basic ${Buffer.from(`${tokenId}:${secret}`).toString('base64')}`;
}
