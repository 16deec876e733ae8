/* eslint-disable @typescript-eslint/no-explicit-any -- the test walks the generated JSON document */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeModules } from '../src/routes/index.js';
import { NOT_STARTED_ADDRESS } from '@sluice/testing';
import { API, startGateway, type Harness } from './support/harness.js';

/** Every `/agents...` path of the reference document is served and documented with its schemas and security. */
const REFERENCE_AGENT_PATHS = [
  '/agents',
  '/agents/approvals',
  '/agents/me',
  '/agents/{agentId}',
  '/agents/{agentId}/policy',
  '/agents/{agentId}/device-codes',
  '/agents/{agentId}/actions/{actionId}/approve',
  '/agents/{agentId}/actions/{actionId}/reject',
  '/agents/device-codes/{code}/status',
  '/agents/device-codes/{code}/redeem',
  '/agents/me/transactions',
  '/agents/me/transactions/{transactionId}',
  '/agents/me/quotes',
  '/agents/me/quotes/{quoteId}',
  '/agents/me/quotes/{quoteId}/execute',
  '/agents/me/actions',
  '/agents/me/actions/{actionId}',
  '/agents/me/transfer-in',
  '/agents/me/transfer-out',
  '/agents/me/internal-accounts',
  '/agents/me/external-accounts',
  '/agents/me/external-accounts/{externalAccountId}',
];

let h: Harness;
let doc: any;

beforeAll(async () => {
  // The document is public: no credential is checked, no backend is asked.
  h = await startGateway(NOT_STARTED_ADDRESS, routeModules);
  doc = (await h.app.inject({ url: `${API}/openapi.json` })).json();
});

afterAll(async () => {
  await h?.close();
});

describe('the OpenAPI document of the agent routes', () => {
  it('has every /agents path of the reference, and no other', () => {
    const served = Object.keys(doc.paths).filter((p) => p.startsWith('/agents'));
    expect(served.sort()).toEqual([...REFERENCE_AGENT_PATHS].sort());
  });

  it('declares who may call each operation and documents its bodies', () => {
    expect(doc.components.securitySchemes.AgentAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const path of REFERENCE_AGENT_PATHS) {
      for (const [method, op] of Object.entries<any>(doc.paths[path])) {
        const where = `${method.toUpperCase()} ${path}`;
        if (path.startsWith('/agents/me')) expect(op.security, where).toEqual([{ AgentAuth: [] }]);
        else if (path.startsWith('/agents/device-codes/')) expect(op.security, where).toEqual([]);
        else expect(op.security, where).toBeUndefined(); // the document's default: BasicAuth
        const success = Object.entries<any>(op.responses).filter(([status]) => status.startsWith('2'));
        expect(success.length, where).toBeGreaterThan(0);
        for (const [status, r] of success) {
          if (status === '204') continue;
          expect(r.content?.['application/json']?.schema, `${where} ${status}`).toBeDefined();
        }
        if (method === 'post' || method === 'patch') {
          const takesBody = !/(approve|execute|device-codes|redeem)$/.test(path);
          if (takesBody) expect(op.requestBody?.content?.['application/json']?.schema, where).toBeDefined();
        }
      }
    }
  });
});
