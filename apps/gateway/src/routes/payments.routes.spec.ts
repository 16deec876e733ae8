import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { common, identity, payments } from '@sluice/contracts';
import { DomainError, invalidInput, newId } from '@sluice/core';
import { createLogger } from '@sluice/logging';
import { implement, startRpcServer, type RpcServer } from '@sluice/rpc';
import { API, startGateway, transparentCursors, type Harness } from '../../test/support/harness.js';
import { basic } from '../../test/support/fake-identity.js';
import paymentsRoutes from './payments.routes.js';

// Route tests for the payments reads: the real gateway core, and fake identity and
// payments gRPC servers (real gRPC, real error transport) that record calls.

const logger = createLogger('fake', 'silent');
const sandbox = {
  tokenId: newId('Token'),
  secret: 's1',
  platformId: newId('Platform'),
  env: common.Environment.SANDBOX,
};
const production = {
  tokenId: newId('Token'),
  secret: 's2',
  platformId: newId('Platform'),
  env: common.Environment.PRODUCTION,
};
const customerOfSandbox = newId('Customer');
const auth = basic(sandbox.tokenId, sandbox.secret);

type Call = { method: string; req: Record<string, unknown> };

async function serve<S>(
  definition: Parameters<typeof implement>[0],
  handlers: Record<string, (req: never) => Promise<unknown>>,
): Promise<RpcServer> {
  const all = Object.fromEntries(
    Object.keys(definition).map((m) => [
      m,
      handlers[m] ??
        (async () => {
          throw new DomainError('UNIMPLEMENTED', 'NOT_IMPLEMENTED', 'not in the fake');
        }),
    ]),
  );
  return startRpcServer({
    host: '127.0.0.1',
    port: 0,
    logger,
    services: [implement<S>(definition, all as never, logger)],
  });
}

const calls: Call[] = [];
let paymentsFail: Error | undefined;
const LOOKUP: payments.ReceiverLookup = {
  id: newId('Lookup'),
  platformId: sandbox.platformId,
  receiverUmaAddress: '$success.eur@sandbox.sluice.local',
  sendingCurrency: 'USD',
  supportedCurrencies: [
    {
      currency: { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 },
      estimatedExchangeRate: '1.08',
      min: 100n,
      max: 1_000_000_000n,
    },
  ],
  requiredPayerDataFields: [
    { name: 'FULL_NAME', mandatory: true },
    { name: 'NATIONALITY', mandatory: false },
  ],
  sandboxBehavior: payments.SandboxReceiverBehavior.SUCCESS,
  createdAt: new Date('2026-05-01T10:00:00.000Z'),
  expiresAt: new Date('2026-05-01T10:15:00.000Z'),
};
const EXTERNAL = newId('ExternalAccount');
const USD = { code: 'USD', name: 'United States Dollar', symbol: '$', decimals: 2 };
const EUR = { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 };

let h: Harness;
let identityServer: RpcServer;
let paymentsServer: RpcServer;

beforeAll(async () => {
  const tokens = [sandbox, production];
  identityServer = await serve<identity.IdentityServiceServer>(identity.IdentityServiceService, {
    authenticateToken: async (req: identity.AuthenticateTokenRequest) => {
      const t = tokens.find((x) => x.tokenId === req.tokenId && x.secret === req.clientSecret);
      if (!t) throw new DomainError('UNAUTHENTICATED', 'UNAUTHORIZED', 'Invalid or missing API credentials');
      return {
        tokenId: t.tokenId,
        platform: { id: t.platformId, name: 'p', environment: t.env, createdAt: new Date() },
        permissions: [identity.Permission.VIEW, identity.Permission.TRANSACT, identity.Permission.MANAGE],
      };
    },
    getCustomer: async (req: identity.GetCustomerRequest) => {
      calls.push({ method: 'getCustomer', req: { ...req } });
      if (req.platformId !== sandbox.platformId || req.customerId !== customerOfSandbox) {
        throw new DomainError('NOT_FOUND', 'CUSTOMER_NOT_FOUND', `Customer ${req.customerId} not found`);
      }
      return {
        customer: {
          id: req.customerId,
          platformId: req.platformId,
          platformCustomerId: 'pc-1',
          customerType: identity.CustomerType.INDIVIDUAL,
          currencies: ['USD'],
          umaAddress: '$pc1@example.com',
          kycStatus: identity.VerificationStatus.APPROVED,
          kybStatus: identity.VerificationStatus.UNSPECIFIED,
          isDeleted: false,
        } as identity.Customer,
      };
    },
  });
  const record = (method: string, answer: () => unknown) => async (req: Record<string, unknown>) => {
    calls.push({ method, req: { ...req } });
    if (paymentsFail) throw paymentsFail;
    return answer();
  };
  paymentsServer = await serve<payments.PaymentsServiceServer>(payments.PaymentsServiceService, {
    lookupUmaReceiver: record('lookupUmaReceiver', () => ({ lookup: LOOKUP })),
    lookupExternalAccountReceiver: record('lookupExternalAccountReceiver', () => ({
      lookup: {
        ...LOOKUP,
        receiverUmaAddress: undefined,
        externalAccountId: EXTERNAL,
        requiredPayerDataFields: [],
      },
    })),
    listExchangeRates: record('listExchangeRates', () => ({
      rates: [
        {
          sourceCurrency: USD,
          destinationCurrency: EUR,
          destinationPaymentRail: 'SEPA_INSTANT',
          sendingAmount: 10_000n,
          minSendingAmount: 100n,
          maxSendingAmount: 1_000_000_000n,
          receivingAmount: 9_223n,
          exchangeRate: '1.08',
          fixedFee: 10n,
          variableFeeRate: '0.003',
          updatedAt: new Date('2026-01-01T00:00:00.000Z'),
        },
      ],
    })),
    listUmaProviders: record('listUmaProviders', () => ({
      providers: [
        {
          name: 'Aurora Pay',
          domain: 'aurora-pay.example',
          supportedRegions: ['US'],
          supportedCurrencies: [USD],
          logoUrl: 'https://aurora-pay.example/logo.png',
          allowListStatus: true,
        },
      ],
      page: { hasMore: true, nextCursor: 'next-1', totalCount: 9 },
    })),
  });
  h = await startGateway(`127.0.0.1:${identityServer.port}`, { payments: paymentsRoutes }, {
    PAYMENTS_GRPC_URL: `127.0.0.1:${paymentsServer.port}`,
  }, { cursors: transparentCursors });
});

afterAll(async () => {
  await h?.close();
  await paymentsServer?.shutdown(0);
  await identityServer?.shutdown(0);
});

beforeEach(() => {
  calls.length = 0;
  paymentsFail = undefined;
});

const get = (url: string, authorization = auth) =>
  h.app.inject({ method: 'GET', url: `${API}${url}`, headers: { authorization } });

describe('GET /receiver/uma/{receiverUmaAddress}', () => {
  it('returns the lookup in the public shape and forwards the platform, environment and decoded address', async () => {
    const res = await get(
      `/receiver/uma/${encodeURIComponent('$success.eur@sandbox.sluice.local')}?senderUmaAddress=%24alice%40x.example&sendingCurrency=usd`,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      receiverUmaAddress: '$success.eur@sandbox.sluice.local',
      supportedCurrencies: [{ currency: EUR, estimatedExchangeRate: 1.08, min: 100, max: 1_000_000_000 }],
      requiredPayerDataFields: [
        { name: 'FULL_NAME', mandatory: true },
        { name: 'NATIONALITY', mandatory: false },
      ],
      lookupId: LOOKUP.id,
      expiresAt: '2026-05-01T10:15:00.000Z',
    });
    expect(calls).toEqual([
      {
        method: 'lookupUmaReceiver',
        req: {
          platformId: sandbox.platformId,
          environment: common.Environment.SANDBOX,
          receiverUmaAddress: '$success.eur@sandbox.sluice.local',
          senderUmaAddress: '$alice@x.example',
          sendingCurrency: 'USD',
        },
      },
    ]);
  });

  it('checks customerId belongs to the platform (404 otherwise) before looking up', async () => {
    const ok = await get(`/receiver/uma/$success.eur@sandbox.sluice.local?customerId=${customerOfSandbox}`);
    expect(ok.statusCode).toBe(200);
    expect(calls.map((c) => c.method)).toEqual(['getCustomer', 'lookupUmaReceiver']);
    calls.length = 0;
    const other = await get(
      `/receiver/uma/$success.eur@sandbox.sluice.local?customerId=${newId('Customer')}`,
    );
    expect(other.statusCode).toBe(404);
    expect(other.json().code).toBe('CUSTOMER_NOT_FOUND');
    expect(calls.map((c) => c.method)).toEqual(['getCustomer']);
  });

  it('passes the payments service’s errors through: 400 INVALID_UMA_ADDRESS with the field, 404 UMA_RECEIVER_NOT_FOUND', async () => {
    paymentsFail = new DomainError(
      'INVALID_ARGUMENT',
      'INVALID_UMA_ADDRESS',
      'receiverUmaAddress: a UMA address starts with "$"',
      {
        field: 'receiverUmaAddress',
        errors: [{ field: 'receiverUmaAddress', message: 'a UMA address starts with "$"' }],
      },
    );
    const bad = await get('/receiver/uma/alice@x.example');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({
      status: 400,
      code: 'INVALID_UMA_ADDRESS',
      details: { field: 'receiverUmaAddress' },
    });
    paymentsFail = new DomainError(
      'NOT_FOUND',
      'UMA_RECEIVER_NOT_FOUND',
      'No receiver $nobody@sandbox.sluice.local',
    );
    const missing = await get('/receiver/uma/$nobody@sandbox.sluice.local');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('UMA_RECEIVER_NOT_FOUND');
  });

  it('rejects bad query parameters with 400 INVALID_INPUT naming the field, calling nothing', async () => {
    for (const [q, field] of [
      ['customerId=Customer:nope', 'customerId'],
      ['color=red', 'color'],
      ['sendingCurrency=US$', 'sendingCurrency'],
    ] as const) {
      const res = await get(`/receiver/uma/$success.usd@sandbox.sluice.local?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().code).toBe('INVALID_INPUT');
      expect(JSON.stringify(res.json().details), q).toContain(field);
    }
    expect(calls).toEqual([]);
  });

  it('sends production platforms’ lookups as PRODUCTION', async () => {
    await get('/receiver/uma/$a@b.example', basic(production.tokenId, production.secret));
    expect(calls[0]!.req).toMatchObject({
      platformId: production.platformId,
      environment: common.Environment.PRODUCTION,
    });
  });
});

describe('GET /receiver/external-account/{accountId}', () => {
  it('returns the lookup with accountId and forwards the request', async () => {
    const res = await get(
      `/receiver/external-account/${EXTERNAL}?customerId=${customerOfSandbox}&sendingCurrency=GBP`,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      accountId: EXTERNAL,
      supportedCurrencies: [{ currency: EUR, estimatedExchangeRate: 1.08, min: 100, max: 1_000_000_000 }],
      requiredPayerDataFields: [],
      lookupId: LOOKUP.id,
      expiresAt: '2026-05-01T10:15:00.000Z',
    });
    expect(calls.map((c) => c.method)).toEqual(['getCustomer', 'lookupExternalAccountReceiver']);
    expect(calls[1]!.req).toEqual({
      platformId: sandbox.platformId,
      environment: common.Environment.SANDBOX,
      accountId: EXTERNAL,
      customerId: customerOfSandbox,
      sendingCurrency: 'GBP',
    });
  });

  it('400 for a malformed id, 404 passed through from payments', async () => {
    const bad = await get('/receiver/external-account/ExternalAccount:nope');
    expect(bad.statusCode).toBe(400);
    expect(calls).toEqual([]);
    paymentsFail = new DomainError('NOT_FOUND', 'EXTERNAL_ACCOUNT_NOT_FOUND', 'External account not found');
    const missing = await get(`/receiver/external-account/${newId('ExternalAccount')}`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('EXTERNAL_ACCOUNT_NOT_FOUND');
  });
});

describe('GET /exchange-rates', () => {
  it('returns corridors with numeric rates and forwards filters (destinationCurrency repeatable)', async () => {
    const res = await get(
      '/exchange-rates?sourceCurrency=usd&destinationCurrency=EUR&destinationCurrency=mxn&sendingAmount=10000',
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      data: [
        {
          sourceCurrency: USD,
          destinationCurrency: EUR,
          destinationPaymentRail: 'SEPA_INSTANT',
          sendingAmount: 10000,
          minSendingAmount: 100,
          maxSendingAmount: 1000000000,
          receivingAmount: 9223,
          exchangeRate: 1.08,
          fees: { fixed: 10, variableRate: 0.003 },
          updatedAt: '2026-01-01T00:00:00.000Z',
        },
      ],
      hasMore: false,
      totalCount: 1,
    });
    expect(calls[0]!.req).toEqual({
      platformId: sandbox.platformId,
      environment: common.Environment.SANDBOX,
      sourceCurrency: 'USD',
      destinationCurrencies: ['EUR', 'MXN'],
      sendingAmount: 10000n,
    });
    await get('/exchange-rates?destinationCurrency=EUR');
    expect(calls[1]!.req).toEqual({
      platformId: sandbox.platformId,
      environment: common.Environment.SANDBOX,
      destinationCurrencies: ['EUR'],
      sendingAmount: 10000n,
    });
  });

  it('rejects bad amounts and unknown parameters; passes currency errors through', async () => {
    for (const q of ['sendingAmount=-1', 'sendingAmount=1.5', 'sendingAmount=9000000000000001', 'amount=5']) {
      const res = await get(`/exchange-rates?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().code).toBe('INVALID_INPUT');
    }
    expect(calls).toEqual([]);
    paymentsFail = invalidInput([{ field: 'sourceCurrency', message: 'unknown currency "XXX"' }]);
    const res = await get('/exchange-rates?sourceCurrency=XXX');
    expect(res.json()).toMatchObject({ status: 400, details: { errors: [{ field: 'sourceCurrency' }] } });
  });
});

describe('GET /uma-providers', () => {
  it('returns the envelope and forwards filters, sort and pagination', async () => {
    const res = await get(
      '/uma-providers?countryCode=us&currencyCode=usd&hasBlockedProviders=false&sortOrder=asc&limit=1&cursor=abc',
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      data: [
        {
          name: 'Aurora Pay',
          supportedRegions: ['US'],
          domain: 'aurora-pay.example',
          logoUrl: 'https://aurora-pay.example/logo.png',
          supportedCurrencies: [USD],
          allowListStatus: true,
        },
      ],
      hasMore: true,
      nextCursor: 'next-1',
      totalCount: 9,
    });
    expect(calls[0]!.req).toEqual({
      platformId: sandbox.platformId,
      environment: common.Environment.SANDBOX,
      countryCode: 'US',
      currencyCode: 'USD',
      hasBlockedProviders: false,
      sortOrder: payments.SortOrder.ASC,
      page: { limit: 1, cursor: 'abc' },
    });
    await get('/uma-providers');
    expect(calls[1]!.req).toEqual({
      platformId: sandbox.platformId,
      environment: common.Environment.SANDBOX,
      sortOrder: payments.SortOrder.DESC,
      page: { limit: 20 },
    });
  });

  it('rejects bad filters with 400 before calling payments', async () => {
    for (const q of [
      'countryCode=USA',
      'sortOrder=up',
      'limit=101',
      'limit=0',
      'hasBlockedProviders=maybe',
      'region=US',
    ]) {
      const res = await get(`/uma-providers?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().code, q).toBe('INVALID_INPUT');
    }
    expect(calls).toEqual([]);
  });

  it('needs credentials', async () => {
    expect((await get('/uma-providers', basic(sandbox.tokenId, 'wrong'))).statusCode).toBe(401);
  });
});

describe('OpenAPI document', () => {
  it('documents the payments reads with named schemas', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: `${API}/openapi.json` })).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/receiver/uma/{receiverUmaAddress}',
        '/receiver/external-account/{accountId}',
        '/exchange-rates',
        '/uma-providers',
      ]),
    );
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        'ReceiverUmaLookupResponse',
        'CurrencyPreference',
        'ExchangeRate',
        'ExchangeRateListResponse',
        'UmaProvider',
        'UmaProviderListResponse',
      ]),
    );
  });
});
