/* eslint-disable @nx/enforce-module-boundaries -- the identity team owns these gateway route modules; this is their HTTP contract test against the real identity service */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '@sluice/config';
import { createLogger } from '@sluice/logging';
import { identity, type accounts } from '@sluice/contracts';
import { createRpcClient } from '@sluice/rpc';
import { buildGateway } from '../../gateway/src/compose.js';
import { gatewayConfigSchema } from '../../gateway/src/config.js';
import type { GatewayClients } from '../../gateway/src/http/types.js';
import tokensRoutes from '../../gateway/src/routes/tokens.routes.js';
import configRoutes from '../../gateway/src/routes/config.routes.js';
import customersRoutes from '../../gateway/src/routes/customers.routes.js';
import { newPlatform, startIdentity, type Harness, type TestPlatform } from './support/harness.js';

/**
 * The identity REST routes (tokens, config, customers) in the real gateway
 * core, against the identity service over gRPC; accounts is a recording fake.
 */
const API = '/2025-10-13';

let h: Harness;
let app: FastifyInstance;
let p: TestPlatform;
const accountCalls: { rpc: string; req: unknown }[] = [];
let accountsDown = 0;

function auth(t: { tokenId: string; clientSecret: string }) {
  return { authorization: `Basic ${Buffer.from(`${t.tokenId}:${t.clientSecret}`).toString('base64')}` };
}

beforeAll(async () => {
  h = await startIdentity('routes');
  const config = loadConfig(gatewayConfigSchema, {
    LOG_LEVEL: 'silent',
    AUTH_CACHE_TTL_MS: '0',
    IDENTITY_GRPC_URL: h.identityAddress,
  });
  const fakeAccounts = {
    async ensureCustomerAccounts(req: accounts.EnsureCustomerAccountsRequest) {
      if (accountsDown > 0) {
        accountsDown--;
        const { RpcError } = await import('@sluice/rpc');
        throw new RpcError(14, 'unavailable');
      }
      accountCalls.push({ rpc: 'ensureCustomerAccounts', req });
      return { accounts: [] };
    },
    async ensurePlatformAccounts(req: accounts.EnsurePlatformAccountsRequest) {
      accountCalls.push({ rpc: 'ensurePlatformAccounts', req });
      return { accounts: [] };
    },
    close() {},
  };
  const clients = {
    identity: createRpcClient(identity.IdentityServiceClient, h.identityAddress),
    accounts: fakeAccounts,
    webhooks: { close() {} },
  } as unknown as GatewayClients;
  app = await buildGateway({
    config,
    clients,
    logger: createLogger('gateway', 'silent'),
    routes: { tokens: tokensRoutes, config: configRoutes, customers: customersRoutes },
    readiness: {},
  });
  await app.ready();
  p = await newPlatform(h.client);
});

afterAll(async () => {
  await app?.close();
  await h?.stop();
});

describe('REST: customers', () => {
  it('creates a customer and provisions its accounts before answering', async () => {
    const body = {
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'rest-1',
      region: 'US',
      fullName: 'Jane Smith',
      birthDate: '1990-01-15',
      nationality: 'US',
    };
    const res = await app.inject({
      method: 'POST',
      url: `${API}/customers`,
      headers: { ...auth(p), 'idempotency-key': 'k-1' },
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(201);
    const c = res.json();
    expect(c).toMatchObject({
      platformCustomerId: 'rest-1',
      customerType: 'INDIVIDUAL',
      kycStatus: 'UNVERIFIED',
      currencies: ['USD', 'USDC'],
      isDeleted: false,
    });
    expect(c).not.toHaveProperty('kybStatus');
    expect(accountCalls.at(-1)).toEqual({
      rpc: 'ensureCustomerAccounts',
      req: {
        platformId: p.id,
        customerId: c.id,
        currencies: ['USD', 'USDC'],
        environment: 'ENVIRONMENT_SANDBOX',
      },
    });
    const got = await app.inject({ method: 'GET', url: `${API}/customers/${c.id}`, headers: auth(p) });
    expect(got.json()).toEqual(c);
  });

  it('answers 201 with the same customer when a retry follows an accounts outage', async () => {
    accountsDown = 3;
    const body = { customerType: 'BUSINESS', businessInfo: { legalName: 'Acme' } };
    const headers = { ...auth(p), 'idempotency-key': 'k-outage' };
    const failed = await app.inject({ method: 'POST', url: `${API}/customers`, headers, payload: body });
    expect(failed.statusCode).toBe(503);
    const retried = await app.inject({ method: 'POST', url: `${API}/customers`, headers, payload: body });
    expect(retried.statusCode, retried.body).toBe(201);
    expect(retried.json()).toMatchObject({
      customerType: 'BUSINESS',
      kybStatus: 'UNVERIFIED',
      businessInfo: { legalName: 'Acme' },
    });
    const list = await app.inject({
      method: 'GET',
      url: `${API}/customers?customerType=BUSINESS`,
      headers: auth(p),
    });
    expect(list.json()).toMatchObject({ totalCount: 1, hasMore: false });
  });

  it('reports bad bodies on the field at fault', async () => {
    const cases: [unknown, string][] = [
      [{ fullName: 'x' }, 'customerType'],
      [{ customerType: 'ALIEN' }, 'customerType'],
      [{ customerType: 'INDIVIDUAL', businessInfo: { legalName: 'x' } }, 'businessInfo'],
      [{ customerType: 'INDIVIDUAL', birthDate: 'yesterday' }, 'birthDate'],
      [{ customerType: 'BUSINESS' }, 'businessInfo'],
      [{ customerType: 'INDIVIDUAL', currencies: ['DOGE'] }, 'currencies[0]'],
      [{ customerType: 'INDIVIDUAL', umaAddress: 'bob@example.com' }, 'umaAddress'],
      [{ customerType: 'INDIVIDUAL', kycStatus: 'VERIFIED' }, 'kycStatus'],
      [{ customerType: 'INDIVIDUAL', kybStatus: 'APPROVED' }, 'kybStatus'],
      [{ customerType: 'BUSINESS', businessInfo: { legalName: 'x' }, kycStatus: 'APPROVED' }, 'kycStatus'],
      // Shape right, meaning wrong: this platform is not a regulated financial institution.
      [{ customerType: 'INDIVIDUAL', kycStatus: 'APPROVED' }, 'kycStatus'],
      [{ customerType: 'BUSINESS', businessInfo: { legalName: 'x' }, kybStatus: 'APPROVED' }, 'kybStatus'],
    ];
    for (const [payload, field] of cases) {
      const res = await app.inject({
        method: 'POST',
        url: `${API}/customers`,
        headers: auth(p),
        payload: payload as object,
      });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json(), JSON.stringify(payload)).toMatchObject({
        code: 'INVALID_INPUT',
        details: { errors: [expect.objectContaining({ field })] },
      });
    }
  });

  it('lists with filters and pages, 409s duplicates, 404s other platforms and 410s deleted customers', async () => {
    const q = await newPlatform(h.client);
    for (const id of ['l-1', 'l-2', 'l-3']) {
      const r = await app.inject({
        method: 'POST',
        url: `${API}/customers`,
        headers: auth(q),
        payload: { customerType: 'INDIVIDUAL', platformCustomerId: id },
      });
      expect(r.statusCode).toBe(201);
    }
    const dup = await app.inject({
      method: 'POST',
      url: `${API}/customers`,
      headers: auth(q),
      payload: { customerType: 'INDIVIDUAL', platformCustomerId: 'l-1' },
    });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toMatchObject({ status: 409, code: 'CUSTOMER_ALREADY_EXISTS' });

    const page1 = (
      await app.inject({ method: 'GET', url: `${API}/customers?limit=2`, headers: auth(q) })
    ).json();
    expect(page1).toMatchObject({ hasMore: true, totalCount: 3 });
    const page2 = (
      await app.inject({
        method: 'GET',
        url: `${API}/customers?limit=2&cursor=${page1.nextCursor}`,
        headers: auth(q),
      })
    ).json();
    expect(page2).toMatchObject({ hasMore: false, totalCount: 3 });
    expect(page2).not.toHaveProperty('nextCursor');
    expect(
      [...page1.data, ...page2.data].map((c: { platformCustomerId: string }) => c.platformCustomerId),
    ).toEqual(['l-3', 'l-2', 'l-1']);
    const bad = await app.inject({
      method: 'GET',
      url: `${API}/customers?customerType=ROBOT`,
      headers: auth(q),
    });
    expect(bad.statusCode).toBe(400);

    const target = page1.data[0].id as string;
    expect(
      (await app.inject({ method: 'GET', url: `${API}/customers/${target}`, headers: auth(p) })).statusCode,
    ).toBe(404);
    const del = await app.inject({ method: 'DELETE', url: `${API}/customers/${target}`, headers: auth(q) });
    expect(del.json()).toMatchObject({ id: target, isDeleted: true });
    const again = await app.inject({ method: 'DELETE', url: `${API}/customers/${target}`, headers: auth(q) });
    expect(again.statusCode).toBe(410);
    expect(again.json()).toMatchObject({ status: 410, code: 'CUSTOMER_DELETED' });
    const withDeleted = (
      await app.inject({ method: 'GET', url: `${API}/customers?isIncludingDeleted=true`, headers: auth(q) })
    ).json();
    expect(withDeleted.totalCount).toBe(3);
    expect(
      (await app.inject({ method: 'GET', url: `${API}/customers`, headers: auth(q) })).json().totalCount,
    ).toBe(2);
  });

  it('patches a customer and provisions new currencies', async () => {
    const created = (
      await app.inject({
        method: 'POST',
        url: `${API}/customers`,
        headers: auth(p),
        payload: { customerType: 'INDIVIDUAL', currencies: ['USD'] },
      })
    ).json();
    const res = await app.inject({
      method: 'PATCH',
      url: `${API}/customers/${created.id}`,
      headers: auth(p),
      payload: { customerType: 'INDIVIDUAL', currencies: ['USD', 'USDC'], email: 'jane@example.com' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ currencies: ['USD', 'USDC'], email: 'jane@example.com' });
    expect(accountCalls.at(-1)).toMatchObject({
      rpc: 'ensureCustomerAccounts',
      req: { customerId: created.id, currencies: ['USD', 'USDC'] },
    });
    const region = await app.inject({
      method: 'PATCH',
      url: `${API}/customers/${created.id}`,
      headers: auth(p),
      payload: { customerType: 'INDIVIDUAL', region: 'MX' },
    });
    expect(region.statusCode).toBe(400);
    expect(region.json().details.errors[0].field).toBe('region');
  });

  it('sets kycStatus / kybStatus for a regulated financial institution only', async () => {
    const own = await newPlatform(h.client, undefined, undefined, { isRegulatedFinancialInstitution: true });
    const post = (t: TestPlatform, payload: object) =>
      app.inject({ method: 'POST', url: `${API}/customers`, headers: auth(t), payload });
    const made = await post(own, {
      customerType: 'BUSINESS',
      businessInfo: { legalName: 'Acme' },
      kybStatus: 'APPROVED',
    });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json()).toMatchObject({ customerType: 'BUSINESS', kybStatus: 'APPROVED' });
    const patched = await app.inject({
      method: 'PATCH',
      url: `${API}/customers/${made.json().id}`,
      headers: auth(own),
      payload: { customerType: 'BUSINESS', kybStatus: 'REJECTED' },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ kybStatus: 'REJECTED' });

    const mine = (await post(p, { customerType: 'INDIVIDUAL' })).json();
    const refused = await app.inject({
      method: 'PATCH',
      url: `${API}/customers/${mine.id}`,
      headers: auth(p),
      payload: { customerType: 'INDIVIDUAL', kycStatus: 'APPROVED' },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({
      code: 'INVALID_INPUT',
      details: { errors: [{ field: 'kycStatus' }] },
    });
    const after = await app.inject({ method: 'GET', url: `${API}/customers/${mine.id}`, headers: auth(p) });
    expect(after.json()).toEqual(mine);
  });
});

describe('REST: config and tokens', () => {
  it('reads and patches the config, provisions platform accounts and rotates the secret', async () => {
    const get = await app.inject({ method: 'GET', url: `${API}/config`, headers: auth(p) });
    expect(get.statusCode, get.body).toBe(200);
    const before = get.json();
    expect(before.supportedCurrencies[0]).toEqual({
      currencyCode: 'USD',
      minAmount: 0,
      maxAmount: 9_000_000_000_000_000,
      requiredCounterpartyFields: [],
      enabledTransactionTypes: ['OUTGOING', 'INCOMING'],
    });
    expect(before.webhookSigningSecret).toMatch(/^whsec_/);

    const patch = await app.inject({
      method: 'PATCH',
      url: `${API}/config`,
      headers: auth(p),
      payload: {
        webhookEndpoint: 'https://hooks.example.com/x',
        supportedCurrencies: [
          { currencyCode: 'USD' },
          { currencyCode: 'EUR', minAmount: 100 },
          { currencyCode: 'USDC' },
        ],
      },
    });
    expect(patch.statusCode, patch.body).toBe(200);
    expect(patch.json()).toMatchObject({
      webhookEndpoint: 'https://hooks.example.com/x',
      supportedCurrencies: [
        { currencyCode: 'USD' },
        { currencyCode: 'EUR', minAmount: 100 },
        { currencyCode: 'USDC' },
      ],
    });
    expect(accountCalls.at(-1)).toEqual({
      rpc: 'ensurePlatformAccounts',
      req: { platformId: p.id, currencies: ['USD', 'EUR', 'USDC'], environment: 'ENVIRONMENT_SANDBOX' },
    });

    const bad = await app.inject({
      method: 'PATCH',
      url: `${API}/config`,
      headers: auth(p),
      payload: { webhookEndpoint: 'mailto:ops@example.com' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({
      code: 'INVALID_INPUT',
      details: { errors: [{ field: 'webhookEndpoint' }] },
    });
    const cleared = await app.inject({
      method: 'PATCH',
      url: `${API}/config`,
      headers: auth(p),
      payload: { webhookEndpoint: null },
    });
    expect(cleared.json()).not.toHaveProperty('webhookEndpoint');

    const rotated = await app.inject({
      method: 'POST',
      url: `${API}/config/webhook-secret/rotate`,
      headers: auth(p),
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json().webhookSigningSecret).not.toBe(before.webhookSigningSecret);
    // The previous secret keeps signing for exactly 24 hours from the rotation (identity's clock).
    expect(rotated.json().previousWebhookSigningSecretExpiresAt).toBe(
      new Date(h.clock.now().getTime() + 24 * 3600_000).toISOString(),
    );
  });

  it('sets, reads back and removes kycLinkUrlTemplate; a bad one is 400 on its field and stores nothing', async () => {
    const q = await newPlatform(h.client);
    const template = 'https://kyc.example.com/onboard/{token}?next={redirectUri}';
    const patch = (payload: object) =>
      app.inject({ method: 'PATCH', url: `${API}/config`, headers: auth(q), payload });
    const read = async () =>
      (await app.inject({ method: 'GET', url: `${API}/config`, headers: auth(q) })).json();
    expect(await read()).not.toHaveProperty('kycLinkUrlTemplate');

    const set = await patch({ kycLinkUrlTemplate: template });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().kycLinkUrlTemplate).toBe(template);
    const stored = await read();
    expect(stored.kycLinkUrlTemplate).toBe(template);

    // Shape (gateway schema) and meaning (identity) alike answer INVALID_INPUT on the field.
    const bad: unknown[] = [
      '',
      42,
      `https://kyc.example.com/${'x'.repeat(2048)}{token}`,
      'https://kyc.example.com/onboard',
      'http://kyc.example.com/{token}',
      'https://kyc.example.com/{token}/{platformId}',
      'not a url {token}',
    ];
    for (const kycLinkUrlTemplate of bad) {
      const res = await patch({ kycLinkUrlTemplate });
      const label = String(kycLinkUrlTemplate).slice(0, 60);
      expect(res.statusCode, label).toBe(400);
      expect(res.json(), label).toMatchObject({
        code: 'INVALID_INPUT',
        details: { errors: [expect.objectContaining({ field: 'kycLinkUrlTemplate' })] },
      });
    }
    expect(await read()).toEqual(stored);

    const removed = await patch({ kycLinkUrlTemplate: null });
    expect(removed.statusCode, removed.body).toBe(200);
    expect(removed.json()).not.toHaveProperty('kycLinkUrlTemplate');
    expect(await read()).not.toHaveProperty('kycLinkUrlTemplate');
  });

  it('creates a token whose secret works once shown, hides the signing secret from VIEW tokens, and deletes tokens', async () => {
    const created = await app.inject({
      method: 'POST',
      url: `${API}/tokens`,
      headers: auth(p),
      payload: { name: 'read only', permissions: ['VIEW'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const t = created.json();
    expect(t).toMatchObject({ name: 'read only', permissions: ['VIEW'], clientId: t.id });
    const viewer = { tokenId: t.clientId as string, clientSecret: t.clientSecret as string };

    const cfg = await app.inject({ method: 'GET', url: `${API}/config`, headers: auth(viewer) });
    expect(cfg.statusCode).toBe(200);
    expect(cfg.json()).not.toHaveProperty('webhookSigningSecret');
    const got = await app.inject({ method: 'GET', url: `${API}/tokens/${t.id}`, headers: auth(p) });
    expect(got.json()).not.toHaveProperty('clientSecret');
    const list = (
      await app.inject({ method: 'GET', url: `${API}/tokens?name=read%20only`, headers: auth(p) })
    ).json();
    expect(list).toMatchObject({ totalCount: 1, data: [{ id: t.id }] });

    const del = await app.inject({ method: 'DELETE', url: `${API}/tokens/${t.id}`, headers: auth(p) });
    expect(del.statusCode).toBe(204);
    expect(
      (await app.inject({ method: 'GET', url: `${API}/config`, headers: auth(viewer) })).statusCode,
    ).toBe(401);
    expect(
      (await app.inject({ method: 'GET', url: `${API}/tokens/${t.id}`, headers: auth(p) })).statusCode,
    ).toBe(404);
    const last = await app.inject({ method: 'DELETE', url: `${API}/tokens/${p.tokenId}`, headers: auth(p) });
    expect(last.statusCode).toBe(400);
    expect(last.json()).toMatchObject({ code: 'CANNOT_DELETE_LAST_TOKEN' });
    const noPerms = await app.inject({
      method: 'POST',
      url: `${API}/tokens`,
      headers: auth(p),
      payload: { name: 'x', permissions: [] },
    });
    expect(noPerms.statusCode).toBe(400);
  });
});

describe('REST: OpenAPI', () => {
  it('documents every identity route with named schemas', async () => {
    const doc = (await app.inject({ method: 'GET', url: `${API}/openapi.json` })).json();
    const paths = Object.keys(doc.paths);
    for (const path of [
      '/tokens',
      '/tokens/{tokenId}',
      '/config',
      '/config/webhook-secret/rotate',
      '/customers',
      '/customers/{customerId}',
    ]) {
      expect(
        paths.some((x) => x.endsWith(path)),
        path,
      ).toBe(true);
    }
    for (const name of [
      'ApiToken',
      'PlatformConfig',
      'IndividualCustomer',
      'BusinessCustomer',
      'CustomerListResponse',
    ]) {
      expect(doc.components.schemas, name).toHaveProperty(name);
    }
  });
});
