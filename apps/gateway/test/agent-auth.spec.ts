import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { agents, common } from '@sluice/contracts';
import { loadConfig } from '@sluice/config';
import { DomainError, newId } from '@sluice/core';
import { subjectFor, toJson } from '@sluice/events';
import { eventually, natsUrl, testPrefix } from '@sluice/testing';
import { createGatewayClients } from '../src/clients.js';
import { gatewayConfigSchema } from '../src/config.js';
import agentMeRoutes from '../src/routes/agent-me.routes.js';
import { FakeIdentity, basic } from './support/fake-identity.js';
import { testRoutes } from './support/test-routes.js';
import { API, startGateway, type Harness } from './support/harness.js';

/**
 * Bearer authentication of the agent routes through the gateway's composition: only an agent
 * token on /agents/me..., only Basic elsewhere, and AGENT_TOKEN.REVOKED / AGENT.UPDATED over
 * NATS dropping the cached agent at once (what makes a deleted agent's token stop on every
 * replica). The agents service is a stand-in that knows which tokens are valid.
 */
let idp: FakeIdentity;
let nc: NatsConnection;
let h: Harness;
let prefix: string;
const valid = new Map<string, string>(); // token → agent id
let authCalls = 0;

const agentPb = (id: string) =>
  agents.Agent.fromPartial({
    id,
    platformId: 'Platform:0196f0a1-0000-7000-8000-000000000001',
    name: 'bot',
    customerId: 'Customer:0196f0a1-0000-7000-8000-000000000002',
    environment: common.Environment.SANDBOX,
    policy: { permissions: ['VIEW_TRANSACTIONS'], defaultExecutionMode: 'AUTO', spendingLimits: { currency: 'USD', perTransactionLimit: 1n } },
    usage: { dailyResetDate: '2026-01-02', monthlyResetMonth: '2026-02' },
    createdAt: new Date(),
    updatedAt: new Date(),
  });

const standInAgents = {
  authenticateAgent: async ({ accessToken }: { accessToken: string }) => {
    authCalls++;
    const id = valid.get(accessToken);
    if (!id) throw new DomainError('UNAUTHENTICATED', 'AGENT_TOKEN_INVALID', 'invalid');
    return { agent: agentPb(id) };
  },
  getAgent: async ({ agentId }: { agentId: string }) => ({ agent: agentPb(agentId) }),
  close: () => undefined,
};

function newAgent(): { id: string; token: string } {
  const id = newId('Agent');
  const token = `sat_${Buffer.from(newId('Request').padEnd(32, 'x').slice(0, 32)).toString('base64url')}`;
  valid.set(token, id);
  return { id, token };
}

const get = (url: string, authorization?: string) =>
  h.app.inject({ url: `${API}${url}`, headers: authorization === undefined ? {} : { authorization } });

async function publish(type: 'AGENT_TOKEN.REVOKED' | 'AGENT.UPDATED', agentId: string): Promise<void> {
  const event = { id: newId('Event'), type, occurredAt: new Date().toISOString(), platformId: 'Platform:p', data: { agentId } };
  nc.publish(subjectFor(prefix, 'agents', type), toJson(event));
  await nc.flush();
}

beforeAll(async () => {
  idp = await new FakeIdentity().start();
  nc = await connect({ servers: await natsUrl() });
  prefix = testPrefix('gwagent');
  const config = loadConfig(gatewayConfigSchema, { IDENTITY_GRPC_URL: idp.address, LOG_LEVEL: 'silent' });
  const clients = { ...createGatewayClients(config), agents: standInAgents } as unknown as ReturnType<typeof createGatewayClients>;
  h = await startGateway(
    idp.address,
    { test: testRoutes({ widgetCalls: 0, flakyCalls: 0 }), 'agent-me': agentMeRoutes },
    { EVENT_SUBJECT_PREFIX: prefix },
    { nats: nc, clients },
  );
});

afterAll(async () => {
  await h?.close();
  await nc?.close();
  await idp?.stop();
});

describe('agent routes take only an agent bearer token', () => {
  it('Bearer on /agents/me; Basic there and Bearer elsewhere are 401', async () => {
    const a = newAgent();
    const me = await get('/agents/me', `Bearer ${a.token}`);
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json().id).toBe(a.id);

    const platform = idp.add({ tokenId: newId('Token'), secret: 'sk_secret_value_1', platformId: newId('Platform'), environment: 'SANDBOX' });
    const basicThere = await get('/agents/me', basic(platform.tokenId, platform.secret));
    expect(basicThere.statusCode).toBe(401);
    expect(basicThere.headers['www-authenticate']).toMatch(/^Bearer/);
    expect((await get('/whoami', basic(platform.tokenId, platform.secret))).statusCode).toBe(200);
    const bearerElsewhere = await get('/whoami', `Bearer ${a.token}`);
    expect(bearerElsewhere.statusCode).toBe(401);
    expect(bearerElsewhere.headers['www-authenticate']).toMatch(/^Basic/);
    expect((await get('/agents/me')).statusCode).toBe(401);
  });

  it('AGENT_TOKEN.REVOKED drops the cached agent at once; AGENT.UPDATED too', async () => {
    for (const type of ['AGENT_TOKEN.REVOKED', 'AGENT.UPDATED'] as const) {
      const a = newAgent();
      expect((await get('/agents/me', `Bearer ${a.token}`)).statusCode).toBe(200);
      const calls = authCalls;
      expect((await get('/agents/me', `Bearer ${a.token}`)).statusCode).toBe(200);
      expect(authCalls, 'the second request was answered from the cache').toBe(calls);
      valid.delete(a.token); // the agents service no longer accepts it...
      const cache = h.app.gateway.agentCredentialCache!;
      const size = cache.size;
      await publish(type, a.id); // ...and says so
      // The event itself drops the entry (nothing reads the cache meanwhile, and an entry past its
      // TTL leaves only when read); the next request asks the agents service again and is refused.
      await eventually(async () => cache.size === size - 1, 30_000, 10);
      expect((await get('/agents/me', `Bearer ${a.token}`)).statusCode).toBe(401);
      expect(authCalls).toBe(calls + 1);
    }
  });
});
