import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { common, accounts } from '@sluice/contracts';
import { DomainError, invalidInput, newId } from '@sluice/core';
import { createLogger } from '@sluice/logging';
import { implement, startRpcServer, type RpcServer } from '@sluice/rpc';
import { API, startGateway, transparentCursors, type Harness } from '../../test/support/harness.js';
import { basic, FakeIdentity } from '../../test/support/fake-identity.js';
import { referenceValidator } from '@sluice/testing/reference';
import externalAccountsRoutes from './external-accounts.routes.js';

// Route tests for external accounts: the real gateway core, a fake identity
// (credentials) and a fake accounts gRPC server that records calls.

const customerId = newId('Customer');
function pbAccount(over: Partial<accounts.ExternalAccount> = {}): accounts.ExternalAccount {
  return {
    id: newId('ExternalAccount'),
    platformId: 'Platform:x',
    customerId,
    status: accounts.ExternalAccountStatus.ACTIVE,
    currency: 'USD',
    accountInfo: {
      accountType: 'USD_ACCOUNT',
      accountNumber: '12345678901',
      routingNumber: '021000021',
      bankAccountType: 'CHECKING',
      paymentRails: ['ACH', 'WIRE', 'RTP', 'FEDNOW'],
      beneficiary: {
        beneficiaryType: 'INDIVIDUAL',
        fullName: 'John Doe',
        address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
      },
    },
    platformAccountId: 'ext_1',
    defaultUmaDepositAccount: false,
    beneficiaryVerificationStatus: accounts.BeneficiaryVerificationStatus.PARTIAL_MATCH,
    beneficiaryVerifiedData: { fullName: 'J. Doe' },
    createdAt: new Date('2026-01-02T03:04:05.678Z'),
    updatedAt: new Date('2026-01-02T03:04:06.000Z'),
    environment: common.Environment.SANDBOX,
    primaryIdentifier: '12345678901',
    ...over,
  };
}
const PUBLIC = (a: accounts.ExternalAccount) => ({
  id: a.id,
  ...(a.customerId ? { customerId: a.customerId } : {}),
  status: 'ACTIVE',
  platformAccountId: 'ext_1',
  currency: 'USD',
  defaultUmaDepositAccount: false,
  beneficiaryVerificationStatus: 'PARTIAL_MATCH',
  beneficiaryVerifiedData: { fullName: 'J. Doe' },
  accountInfo: {
    accountType: 'USD_ACCOUNT',
    accountNumber: '12345678901',
    routingNumber: '021000021',
    bankAccountType: 'CHECKING',
    paymentRails: ['ACH', 'WIRE', 'RTP', 'FEDNOW'],
    beneficiary: {
      beneficiaryType: 'INDIVIDUAL',
      fullName: 'John Doe',
      address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
    },
  },
  createdAt: '2026-01-02T03:04:05.678Z',
  updatedAt: '2026-01-02T03:04:06.000Z',
});

class FakeAccounts {
  calls: { method: string; req: Record<string, unknown> }[] = [];
  account = pbAccount();
  list: accounts.ListExternalAccountsResponse = { accounts: [], page: { hasMore: false, totalCount: 0 } };
  fail: Error | undefined;
  private server: RpcServer | undefined;
  get address() {
    return `127.0.0.1:${this.server!.port}`;
  }
  async start() {
    const logger = createLogger('fake-accounts', 'silent');
    const record = (method: string) => async (req: Record<string, unknown>) => {
      this.calls.push({ method, req });
      if (this.fail) throw this.fail;
      if (method === 'listExternalAccounts') return this.list;
      if (method === 'createExternalAccount' || method === 'getExternalAccount')
        return { account: this.account };
      if (method === 'deleteExternalAccount') return { accountId: req.accountId };
      throw new DomainError('UNIMPLEMENTED', 'NOT_IMPLEMENTED', 'not in the fake');
    };
    const handlers = Object.fromEntries(
      Object.keys(accounts.AccountsServiceService).map((m) => [m, record(m)]),
    );
    this.server = await startRpcServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      services: [
        implement<accounts.AccountsServiceServer>(accounts.AccountsServiceService, handlers as never, logger),
      ],
    });
    return this;
  }
  async stop() {
    await this.server?.shutdown(0);
  }
}

let h: Harness;
const identity = new FakeIdentity();
const fake = new FakeAccounts();
const sandbox = {
  tokenId: newId('Token'),
  secret: 's-secret',
  platformId: newId('Platform'),
  environment: 'SANDBOX' as const,
};
const production = {
  tokenId: newId('Token'),
  secret: 'p-secret',
  platformId: newId('Platform'),
  environment: 'PRODUCTION' as const,
};
const auth = basic(sandbox.tokenId, sandbox.secret);

beforeAll(async () => {
  await identity.start();
  await fake.start();
  identity.add(sandbox);
  identity.add(production);
  h = await startGateway(
    identity.address,
    { 'external-accounts': externalAccountsRoutes },
    { ACCOUNTS_GRPC_URL: fake.address },
    { cursors: transparentCursors },
  );
});
afterAll(async () => {
  await h?.close();
  await fake.stop();
  await identity.stop();
});
beforeEach(() => {
  fake.calls = [];
  fake.fail = undefined;
  fake.account = pbAccount();
});

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown, authorization = auth) =>
  h.app.inject({
    method,
    url: `${API}${url}`,
    headers: { authorization, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });

const createBody = {
  customerId,
  currency: 'USD',
  platformAccountId: 'ext_1',
  accountInfo: {
    accountType: 'USD_ACCOUNT',
    accountNumber: '12345678901',
    routingNumber: '021000021',
    bankAccountType: 'CHECKING',
    beneficiary: {
      beneficiaryType: 'INDIVIDUAL',
      fullName: 'John Doe',
      address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
    },
  },
};

describe('POST /customers/external-accounts', () => {
  it('creates the account (201, public shape) passing the environment', async () => {
    const res = await call('POST', '/customers/external-accounts', createBody);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual(PUBLIC(fake.account));
    expect(referenceValidator('ExternalAccount')(res.json())).toEqual([]);
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]!.method).toBe('createExternalAccount');
    expect(fake.calls[0]!.req).toMatchObject({
      platformId: sandbox.platformId,
      environment: common.Environment.SANDBOX,
      customerId,
      currency: 'USD',
      platformAccountId: 'ext_1',
      accountInfo: {
        accountType: 'USD_ACCOUNT',
        accountNumber: '12345678901',
        paymentRails: [],
        beneficiary: { fullName: 'John Doe', address: { country: 'US' } },
      },
    });
  });

  it('passes the rails a request selects', async () => {
    await call('POST', '/customers/external-accounts', {
      ...createBody,
      accountInfo: { ...createBody.accountInfo, paymentRails: ['WIRE'] },
    });
    expect(fake.calls[0]!.req).toMatchObject({ accountInfo: { paymentRails: ['WIRE'] } });
  });

  it('refuses a body of the wrong shape with 400 naming the field, before calling accounts', async () => {
    const { beneficiary: _b, ...noBeneficiary } = createBody.accountInfo;
    const cases: [unknown, string][] = [
      [{ ...createBody.accountInfo, accountType: 'CHF_ACCOUNT' }, 'accountInfo.accountType'],
      [{ ...createBody.accountInfo, accountType: undefined }, 'accountInfo.accountType'],
      [noBeneficiary, 'accountInfo.beneficiary'],
      [{ ...createBody.accountInfo, iban: 'DE89370400440532013000' }, 'accountInfo.iban'],
      [{ ...createBody.accountInfo, paymentRails: ['SEPA'] }, 'accountInfo.paymentRails[0]'],
      [{ ...createBody.accountInfo, paymentRails: [] }, 'accountInfo.paymentRails'],
      [{ ...createBody.accountInfo, bankAccountType: 'BROKERAGE' }, 'accountInfo.bankAccountType'],
      [
        { ...createBody.accountInfo, beneficiary: { fullName: 'John Doe' } },
        'accountInfo.beneficiary.beneficiaryType',
      ],
      [
        {
          ...createBody.accountInfo,
          beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'J', legalName: 'Acme' },
        },
        'accountInfo.beneficiary.legalName',
      ],
      [
        { ...createBody.accountInfo, beneficiary: { beneficiaryType: 'BUSINESS', fullName: 'J' } },
        'accountInfo.beneficiary.legalName',
      ],
      [
        {
          accountType: 'KES_ACCOUNT',
          phoneNumber: '+254712345678',
          beneficiary: createBody.accountInfo.beneficiary,
        },
        'accountInfo.provider',
      ],
    ];
    for (const [accountInfo, field] of cases) {
      const res = await call('POST', '/customers/external-accounts', { ...createBody, accountInfo });
      expect(res.statusCode, JSON.stringify(accountInfo)).toBe(400);
      expect(
        res.json().details.errors.map((e: { field: string }) => e.field),
        JSON.stringify(accountInfo),
      ).toContain(field);
    }
    expect(fake.calls).toEqual([]);
  });

  it('production platforms create with the PRODUCTION environment', async () => {
    await call(
      'POST',
      '/customers/external-accounts',
      createBody,
      basic(production.tokenId, production.secret),
    );
    expect(fake.calls[0]!.req.environment).toBe(common.Environment.PRODUCTION);
  });

  it('rejects malformed bodies with 400 before calling accounts', async () => {
    for (const body of [
      { ...createBody, accountInfo: { ...createBody.accountInfo, accountType: 'CHF_ACCOUNT' } },
      { ...createBody, accountInfo: { ...createBody.accountInfo, color: 'red' } },
      { ...createBody, customerId: 'Customer:1' },
      { ...createBody, extra: true },
      { customerId, accountInfo: createBody.accountInfo },
    ]) {
      const res = await call('POST', '/customers/external-accounts', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('INVALID_INPUT');
    }
    expect(fake.calls).toEqual([]);
  });

  it('passes the service’s field errors, 404 and 409 through', async () => {
    fake.fail = invalidInput([{ field: 'accountInfo.iban', message: 'checksum does not match' }]);
    const bad = await call('POST', '/customers/external-accounts', createBody);
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({
      code: 'INVALID_INPUT',
      details: { errors: [{ field: 'accountInfo.iban', message: 'checksum does not match' }] },
    });
    fake.fail = new DomainError('NOT_FOUND', 'CUSTOMER_NOT_FOUND', 'Customer not found');
    expect((await call('POST', '/customers/external-accounts', createBody)).statusCode).toBe(404);
    fake.fail = new DomainError('ALREADY_EXISTS', 'EXTERNAL_ACCOUNT_ALREADY_EXISTS', 'exists');
    expect((await call('POST', '/customers/external-accounts', createBody)).statusCode).toBe(409);
    fake.fail = new DomainError('INVALID_ARGUMENT', 'EXTERNAL_ACCOUNT_INVALID', 'invalid account');
    const invalid = await call('POST', '/customers/external-accounts', createBody);
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().code).toBe('EXTERNAL_ACCOUNT_INVALID');
  });
});

describe('GET /customers/external-accounts', () => {
  it('lists in the envelope with filters', async () => {
    fake.list = { accounts: [fake.account], page: { hasMore: true, nextCursor: 'abc', totalCount: 9 } };
    const res = await call(
      'GET',
      `/customers/external-accounts?currency=USD&customerId=${customerId}&limit=5&cursor=xyz`,
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      data: [PUBLIC(fake.account)],
      hasMore: true,
      nextCursor: 'abc',
      totalCount: 9,
    });
    expect(fake.calls[0]!.req).toEqual({
      platformId: sandbox.platformId,
      owner: accounts.Owner.CUSTOMERS,
      currency: 'USD',
      customerId,
      page: { limit: 5, cursor: 'xyz' },
    });
  });
  it('rejects bad filters', async () => {
    for (const q of ['customerId=x', 'limit=0', 'limit=101', 'color=red'])
      expect((await call('GET', `/customers/external-accounts?${q}`)).statusCode, q).toBe(400);
    expect(fake.calls).toEqual([]);
  });
});

describe('by id', () => {
  it('GET returns the account; DELETE answers 204; unknown is 404; malformed id 400', async () => {
    const id = fake.account.id;
    const got = await call('GET', `/customers/external-accounts/${id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json().id).toBe(id);
    const del = await call('DELETE', `/customers/external-accounts/${id}`);
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expect(fake.calls.map((c) => [c.method, c.req])).toEqual([
      ['getExternalAccount', { platformId: sandbox.platformId, accountId: id }],
      ['deleteExternalAccount', { platformId: sandbox.platformId, accountId: id }],
    ]);
    fake.fail = new DomainError('NOT_FOUND', 'EXTERNAL_ACCOUNT_NOT_FOUND', 'not found');
    expect((await call('GET', `/platform/external-accounts/${id}`)).statusCode).toBe(404);
    expect((await call('DELETE', `/platform/external-accounts/${id}`)).statusCode).toBe(404);
    expect((await call('GET', '/customers/external-accounts/ExternalAccount:1')).statusCode).toBe(400);
  });
});

describe('/platform/external-accounts', () => {
  it('creates without customerId and lists platform accounts', async () => {
    fake.account = pbAccount({ customerId: undefined });
    const { customerId: _c, ...body } = createBody;
    const res = await call('POST', '/platform/external-accounts', body);
    expect(res.statusCode).toBe(201);
    expect('customerId' in res.json()).toBe(false);
    expect(fake.calls[0]!.req.customerId).toBeUndefined();
    expect((await call('POST', '/platform/external-accounts', createBody)).statusCode).toBe(400);
    fake.list = { accounts: [fake.account], page: { hasMore: false, totalCount: 1 } };
    const list = await call('GET', '/platform/external-accounts?currency=USD');
    expect(list.json()).toEqual({ data: [PUBLIC(fake.account)], hasMore: false, totalCount: 1 });
    expect(fake.calls.at(-1)!.req).toMatchObject({ owner: accounts.Owner.PLATFORM, currency: 'USD' });
    expect((await call('GET', `/platform/external-accounts?customerId=${customerId}`)).statusCode).toBe(400);
  });
});

describe('OpenAPI document', () => {
  it('documents the routes and the named schemas', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: `${API}/openapi.json` })).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/customers/external-accounts',
        '/customers/external-accounts/{externalAccountId}',
        '/platform/external-accounts',
        '/platform/external-accounts/{externalAccountId}',
      ]),
    );
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        'ExternalAccount',
        'ExternalAccountList',
        'ExternalAccountCreateRequest',
        'ExternalAccountInfoOneOf',
        'ExternalAccountCreateInfoOneOf',
        'CadExternalAccountCreateInfo',
        'IndividualBeneficiaryInput',
        'UsdExternalAccountInfo',
        'UsdBeneficiary',
        'BusinessBeneficiary',
        'SlvExternalAccountInfo',
        'EthereumWalletExternalAccountInfo',
      ]),
    );
    const oneOf = doc.components.schemas.ExternalAccountInfoOneOf;
    expect(oneOf.oneOf).toHaveLength(43);
    expect(oneOf.discriminator).toEqual({ propertyName: 'accountType' });
  });
});
