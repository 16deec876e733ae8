import { Agent, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, startIdentity, type IdentityHarness } from './support/identity.js';
import { testRoutes } from './support/test-routes.js';
import { API, startGateway, type Harness } from './support/harness.js';

/**
 * MAX_CONNECTIONS_PER_CLIENT over real sockets, with API tokens of the real identity service: a
 * client may hold that many connections; a request on one more is 429 TOO_MANY_CONNECTIONS with
 * Retry-After, runs nothing (no widget made) and its connection is closed; once a connection is
 * given back, a new one serves again.
 */
let idp: IdentityHarness;
let gw: Harness;
let auth: string;
const state = { widgetCalls: 0, flakyCalls: 0 };
const LIMIT = 3;

beforeAll(async () => {
  idp = await startIdentity('gwconn');
  const token = await idp.token();
  auth = basic(token.tokenId, token.secret);
  gw = await startGateway(idp.address, { test: testRoutes(state) }, { MAX_CONNECTIONS_PER_CLIENT: String(LIMIT) }, {
    clients: idp.gatewayClients(),
  });
  await gw.app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await gw?.close();
  await idp?.stop();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request on its own kept-alive agent (so each agent holds its own connection). */
function call(agent: Agent, method: string, path: string, body?: unknown): Promise<Answer> {
  const { port } = gw.app.server.address() as { port: number };
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(
      {
        agent,
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          authorization: auth,
          ...(payload ? { 'content-type': 'application/json', 'idempotency-key': `k-${Math.random()}` } : {}),
        },
      },
      (r) => {
        let text = '';
        r.on('data', (c: Buffer) => (text += c.toString()));
        r.on('end', () => resolve({ status: r.statusCode!, headers: r.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('connections per client', () => {
  it('serves up to the limit, answers 429 on one more without running it, and serves again once one is given back', async () => {
    const agents = Array.from({ length: LIMIT + 1 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    try {
      // LIMIT connections, each kept open by its agent.
      for (const a of agents.slice(0, LIMIT)) expect((await call(a, 'GET', `${API}/whoami`)).status).toBe(200);
      const calls = state.widgetCalls;
      const over = await call(agents[LIMIT]!, 'POST', `${API}/widgets`, { name: 'w', kind: 'SMALL', amount: 1 });
      expect(over.status).toBe(429);
      expect(JSON.parse(over.body)).toMatchObject({ status: 429, code: 'TOO_MANY_CONNECTIONS' });
      expect(over.headers['retry-after']).toBe('1');
      expect(over.headers.connection).toBe('close');
      expect(state.widgetCalls, 'the refused request ran nothing').toBe(calls);
      // The kept connections still serve.
      expect((await call(agents[0]!, 'GET', `${API}/whoami`)).status).toBe(200);
      // One given back: a new connection is served.
      agents[1]!.destroy();
      await new Promise((r) => setTimeout(r, 100));
      expect((await call(agents[LIMIT]!, 'POST', `${API}/widgets`, { name: 'w', kind: 'SMALL', amount: 1 })).status).toBe(201);
      expect(state.widgetCalls).toBe(calls + 1);
    } finally {
      for (const a of agents) a.destroy();
    }
  });
});
