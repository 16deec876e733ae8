import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { agents, common, identity } from '@sluice/contracts';
import { NOT_STARTED_ADDRESS, eventually, natsUrl, startServices, World, type ServiceSet } from '@sluice/testing';
import { agentsService } from '@sluice/agents';
import { createLogger } from '@sluice/logging';
import { migrate, openStore, type MikroORM } from '@sluice/store';
import { GATEWAY_SCHEMA, migrations } from '../src/store/migrations.js';
import { identityService } from '@sluice/identity';
import { createGatewayClients } from '../src/clients.js';
import agentMeRoutes from '../src/routes/agent-me.routes.js';
import { basic } from './support/identity.js';
import { testRoutes } from './support/test-routes.js';
import { API, startGateway, type Harness } from './support/harness.js';

/**
 * Bearer authentication of the agent routes against the real identity and agents services: only
 * an agent token on /agents/me..., only Basic elsewhere, and the agents service's
 * AGENT_TOKEN.REVOKED / AGENT.UPDATED over NATS dropping the cached agent at once (what makes a
 * deleted agent's token stop on every replica).
 */
type Set = ServiceSet<{ identity: typeof identityService; agents: typeof agentsService }>;
let services: Set;
let nc: NatsConnection;
let h: Harness;
/** A gateway with its database: rate limits on (3 requests per agent token per hour). */
let limited: Harness;
let orm: MikroORM;
const PER_AGENT = 3;
let world: World;
let authCalls = 0;
let gatewayClients: ReturnType<typeof createGatewayClients>;

/** A platform with an API token, a customer, and a connected agent of it. */
async function agentOf(): Promise<{ platformId: string; basic: string; agentId: string; token: string }> {
  const p = await world.platform();
  const customer = await world.customer(p.id);
  const client = services.client(agents.AgentsServiceClient, 'agents');
  const { agent, deviceCode } = await client.createAgent({
    platformId: p.id,
    environment: common.Environment.SANDBOX,
    name: 'bot',
    customerId: customer.id,
    policy: agents.AgentPolicy.fromPartial({
      permissions: ['VIEW_TRANSACTIONS'],
      defaultExecutionMode: 'AUTO',
      spendingLimits: { currency: 'USD', perTransactionLimit: 100n },
    }),
  });
  const { accessToken } = await client.redeemDeviceCode({ code: deviceCode!.code, source: 'test' });
  return { platformId: p.id, basic: basic(p.tokenId, p.clientSecret), agentId: agent!.id, token: accessToken };
}

const get = (url: string, authorization?: string) =>
  h.app.inject({ url: `${API}${url}`, headers: authorization === undefined ? {} : { authorization } });

beforeAll(async () => {
  services = await startServices('gwagents', { identity: identityService, agents: agentsService });
  world = new World({ identity: services.client(identity.IdentityServiceClient, 'identity') });
  nc = await connect({ servers: await natsUrl() });
  gatewayClients = createGatewayClients({
    IDENTITY_GRPC_URL: services.address('identity'),
    ACCOUNTS_GRPC_URL: NOT_STARTED_ADDRESS,
    WEBHOOK_DISPATCHER_GRPC_URL: NOT_STARTED_ADDRESS,
    WALLET_AUTH_GRPC_URL: NOT_STARTED_ADDRESS,
    PAYMENTS_GRPC_URL: NOT_STARTED_ADDRESS,
    AGENTS_GRPC_URL: services.address('agents'),
    COMPLIANCE_GRPC_URL: NOT_STARTED_ADDRESS,
    RPC_DEADLINE_MS: 5000,
  });
  // Count the gateway's agent verifications (what the cache saves).
  const real = gatewayClients.agents;
  gatewayClients.agents = new Proxy(real, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop !== 'authenticateAgent') return value;
      return (...args: Parameters<typeof real.authenticateAgent>) => {
        authCalls++;
        return real.authenticateAgent(...args);
      };
    },
  });
  h = await startGateway(
    services.address('identity'),
    { test: testRoutes({ widgetCalls: 0, flakyCalls: 0 }), 'agent-me': agentMeRoutes },
    { EVENT_SUBJECT_PREFIX: services.prefix },
    { nats: nc, clients: gatewayClients },
  );
  orm = await openStore({ databaseUrl: services.db.url, schema: GATEWAY_SCHEMA, entities: [], migrations, logger: createLogger('test', 'silent') });
  await migrate(orm, GATEWAY_SCHEMA);
  limited = await startGateway(
    services.address('identity'),
    { 'agent-me': agentMeRoutes },
    { RATE_LIMIT_PER_AGENT: String(PER_AGENT), RATE_LIMIT_WINDOW_SECONDS: '3600' },
    { orm, clients: gatewayClients },
  );
}, 120_000);

afterAll(async () => {
  await h?.close();
  await limited?.close();
  await orm?.close();
  for (const c of Object.values(gatewayClients ?? {})) c.close();
  await nc?.close();
  await services?.stop();
});

describe('agent routes take only an agent bearer token', () => {
  it('Bearer on /agents/me; Basic there and Bearer elsewhere are 401', async () => {
    const a = await agentOf();
    const me = await get('/agents/me', `Bearer ${a.token}`);
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json()).toMatchObject({ id: a.agentId, isConnected: true });

    const basicThere = await get('/agents/me', a.basic);
    expect(basicThere.statusCode).toBe(401);
    expect(basicThere.headers['www-authenticate']).toMatch(/^Bearer/);
    expect((await get('/whoami', a.basic)).statusCode).toBe(200);
    const bearerElsewhere = await get('/whoami', `Bearer ${a.token}`);
    expect(bearerElsewhere.statusCode).toBe(401);
    expect(bearerElsewhere.headers['www-authenticate']).toMatch(/^Basic/);
    expect((await get('/agents/me')).statusCode).toBe(401);
    expect((await get('/agents/me', `Bearer sat_${'A'.repeat(43)}`)).statusCode).toBe(401);
  });

  it('deleting the agent (AGENT_TOKEN.REVOKED) and pausing it (AGENT.UPDATED) drop it from the cache at once', async () => {
    const client = services.client(agents.AgentsServiceClient, 'agents');
    const cases: [string, (a: { platformId: string; agentId: string }) => Promise<unknown>, number][] = [
      ['delete', (a) => client.deleteAgent(a), 401],
      ['pause', (a) => client.updateAgent({ ...a, isPaused: true }), 200],
    ];
    for (const [what, change, after] of cases) {
      const a = await agentOf();
      expect((await get('/agents/me', `Bearer ${a.token}`)).statusCode).toBe(200);
      const calls = authCalls;
      expect((await get('/agents/me', `Bearer ${a.token}`)).statusCode).toBe(200);
      expect(authCalls, `${what}: the second request was answered from the cache`).toBe(calls);
      const cache = h.app.gateway.agentCredentialCache!;
      const size = cache.size;
      await change({ platformId: a.platformId, agentId: a.agentId });
      // The event itself drops the entry (nothing reads the cache meanwhile, and an entry past its
      // TTL leaves only when read); the next request asks the agents service again.
      await eventually(async () => cache.size === size - 1, 30_000, 10);
      const next = await get('/agents/me', `Bearer ${a.token}`);
      expect(next.statusCode, what).toBe(after);
      if (what === 'pause') expect(next.json().isPaused).toBe(true);
      expect(authCalls, what).toBe(calls + 1);
    }
  });
});

describe('rate limit per agent token', () => {
  it('the request over RATE_LIMIT_PER_AGENT is 429 with Retry-After; another agent is not affected', async () => {
    const me = (token: string) => limited.app.inject({ url: `${API}/agents/me`, headers: { authorization: `Bearer ${token}` } });
    const a = await agentOf();
    const b = await agentOf();
    const statuses: number[] = [];
    // A window boundary (the hour, by the database clock) may fall in the loop: then a few more pass.
    for (let i = 0; i <= PER_AGENT && !statuses.includes(429); i++) statuses.push((await me(a.token)).statusCode);
    for (let i = 0; i <= PER_AGENT && !statuses.includes(429); i++) statuses.push((await me(a.token)).statusCode);
    expect(statuses.slice(0, PER_AGENT)).toEqual(Array(PER_AGENT).fill(200));
    expect(statuses.at(-1)).toBe(429);
    const over = await me(a.token);
    expect(over.json()).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(over.headers['ratelimit-limit']).toBe(String(PER_AGENT));
    const other = await me(b.token);
    expect(other.statusCode).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe(String(PER_AGENT - 1));
  });
});
