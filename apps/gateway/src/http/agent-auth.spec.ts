import { describe, expect, it } from 'vitest';
import { agents, common } from '@sluice/contracts';
import { DomainError } from '@sluice/core';
import { createLogger } from '@sluice/logging';
import { AgentAuthenticator, parseBearer, type AuthenticatedAgent } from './agent-auth.js';
import { CredentialCache } from './credential.cache.js';
import { HttpError } from './error-mapping.js';
import type { GatewayClients } from './types.js';

const TOKEN = `sat_${'A'.repeat(43)}`;

/** An agents client that knows one token and counts its calls. */
function agentsStandIn() {
  const calls: string[] = [];
  const client = {
    authenticateAgent: async ({ accessToken }: { accessToken: string }) => {
      calls.push(accessToken);
      if (accessToken !== TOKEN) throw new DomainError('UNAUTHENTICATED', 'AGENT_TOKEN_INVALID', 'no');
      return {
        agent: agents.Agent.fromPartial({
          id: 'Agent:a',
          platformId: 'Platform:p',
          customerId: 'Customer:c',
          environment: common.Environment.SANDBOX,
          policy: { permissions: ['VIEW_TRANSACTIONS'] },
        }),
      };
    },
  };
  return { calls, clients: { agents: client } as unknown as Pick<GatewayClients, 'agents'> };
}

describe('agent bearer authentication', () => {
  it('takes only `Bearer <token>`', () => {
    expect(parseBearer(`Bearer ${TOKEN}`)).toBe(TOKEN);
    expect(parseBearer(`bearer  ${TOKEN} `)).toBe(TOKEN);
    expect(parseBearer(`Basic ${TOKEN}`)).toBeUndefined();
    expect(parseBearer('Bearer')).toBeUndefined();
    expect(parseBearer(`Bearer ${TOKEN} extra`)).toBeUndefined();
    expect(parseBearer(undefined)).toBeUndefined();
  });

  it('verifies with agents once, caches the agent, and drops it when the agent is revoked', async () => {
    const { calls, clients } = agentsStandIn();
    const cache = new CredentialCache<AuthenticatedAgent>(5000, 10);
    const auth = new AgentAuthenticator(clients, cache, createLogger('test', 'silent'), 1000);
    const [a, b] = await Promise.all([auth.authenticate(`Bearer ${TOKEN}`), auth.authenticate(`Bearer ${TOKEN}`)]);
    expect(a).toEqual({
      tokenId: 'Agent:a',
      id: 'Agent:a',
      platformId: 'Platform:p',
      customerId: 'Customer:c',
      environment: 'SANDBOX',
      isPaused: false,
      permissions: ['VIEW_TRANSACTIONS'],
    });
    expect(b).toBe(a);
    await auth.authenticate(`Bearer ${TOKEN}`);
    expect(calls).toHaveLength(1);
    cache.revoke('Agent:a');
    await auth.authenticate(`Bearer ${TOKEN}`);
    expect(calls).toHaveLength(2);
  });

  it('answers 401 with WWW-Authenticate: Bearer for a missing, malformed or unknown token', async () => {
    const { clients } = agentsStandIn();
    const auth = new AgentAuthenticator(clients, new CredentialCache<AuthenticatedAgent>(5000, 10), createLogger('test', 'silent'), 1000);
    for (const header of [undefined, 'Basic abc', `Bearer sat_${'B'.repeat(43)}`]) {
      const err = await auth.authenticate(header).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HttpError);
      expect((err as HttpError).status).toBe(401);
      expect((err as HttpError).headers).toEqual({ 'www-authenticate': 'Bearer realm="sluice", charset="UTF-8"' });
    }
  });
});
