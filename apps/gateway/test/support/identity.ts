import { identity } from '@sluice/contracts';
import type { PromiseClient } from '@sluice/rpc';
import { startServices, World, type ServiceSet } from '@sluice/testing';
import { identityService } from '@sluice/identity';
import { createGatewayClients } from '../../src/clients.js';
import type { GatewayClients, Permission } from '../../src/http/types.js';

/** An API token identity issued, with the secret it returned once. */
export interface TestToken {
  tokenId: string;
  secret: string;
  platformId: string;
  environment: 'SANDBOX' | 'PRODUCTION';
}

/**
 * The real identity service started in-process (its own database, a subject prefix its outbox
 * relay publishes TOKEN.DELETED under), issuing the API tokens gateway tests authenticate with.
 */
export interface IdentityHarness {
  services: ServiceSet<{ identity: typeof identityService }>;
  client: PromiseClient<identity.IdentityServiceClient>;
  /** host:port of identity's gRPC server. */
  address: string;
  /** The subject prefix identity publishes its events under. */
  prefix: string;
  /** AuthenticateToken calls made through the clients of `gatewayClients()` (the gateway's identity hops). */
  readonly authCalls: number;
  /** A new platform of `environment` and a token of `permissions` on it (identity's CreateToken). */
  token(opts?: { environment?: 'SANDBOX' | 'PRODUCTION'; permissions?: Permission[] }): Promise<TestToken>;
  /** Revokes a token in identity (DeleteToken), which publishes TOKEN.DELETED. */
  deleteToken(t: TestToken): Promise<void>;
  /**
   * Gateway clients whose identity client reaches the real identity and counts AuthenticateToken
   * (the others point at `env`'s addresses or nowhere); closed by `stop()`.
   */
  gatewayClients(env?: Record<string, string>): GatewayClients;
  stop(): Promise<void>;
}

export async function startIdentity(label: string): Promise<IdentityHarness> {
  const services = await startServices(label, { identity: identityService });
  const client = services.client(identity.IdentityServiceClient, 'identity');
  const world = new World({ identity: client });
  const address = services.address('identity');
  const opened: GatewayClients[] = [];
  let authCalls = 0;
  return {
    services,
    client,
    address,
    prefix: services.prefix,
    get authCalls() {
      return authCalls;
    },
    async token({ environment = 'SANDBOX', permissions = ['VIEW', 'TRANSACT', 'MANAGE'] } = {}) {
      const platform = await world.platform(environment);
      const r = await client.createToken({
        platformId: platform.id,
        name: `test ${permissions.join(' ')}`,
        permissions: permissions.map((p) => identity.Permission[p as keyof typeof identity.Permission]),
      });
      return { tokenId: r.token!.id, secret: r.clientSecret, platformId: platform.id, environment };
    },
    async deleteToken(t) {
      await client.deleteToken({ platformId: t.platformId, tokenId: t.tokenId });
    },
    gatewayClients(env = {}) {
      const clients = createGatewayClients({
        IDENTITY_GRPC_URL: address,
        ACCOUNTS_GRPC_URL: '127.0.0.1:1',
        WEBHOOK_DISPATCHER_GRPC_URL: '127.0.0.1:1',
        WALLET_AUTH_GRPC_URL: '127.0.0.1:1',
        PAYMENTS_GRPC_URL: '127.0.0.1:1',
        AGENTS_GRPC_URL: '127.0.0.1:1',
        COMPLIANCE_GRPC_URL: '127.0.0.1:1',
        RPC_DEADLINE_MS: 2000,
        ...env,
      } as Parameters<typeof createGatewayClients>[0]);
      const real = clients.identity;
      clients.identity = new Proxy(real, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (prop !== 'authenticateToken') return value;
          return (...args: Parameters<typeof real.authenticateToken>) => {
            authCalls++;
            return real.authenticateToken(...args);
          };
        },
      });
      opened.push(clients);
      return clients;
    },
    async stop() {
      for (const c of opened.splice(0)) for (const x of Object.values(c)) x.close();
      await services.stop();
    },
  };
}

export function basic(tokenId: string, secret: string): string {
  return `Basic ${Buffer.from(`${tokenId}:${secret}`).toString('base64')}`;
}
