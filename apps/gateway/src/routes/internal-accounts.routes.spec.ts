import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { common, accounts, payments } from '@sluice/contracts';
import { DomainError, invalidInput, newId } from '@sluice/core';
import { createLogger } from '@sluice/logging';
import { implement, startRpcServer, type RpcServer } from '@sluice/rpc';
import { API, startGateway, transparentCursors, type Harness } from '../../test/support/harness.js';
import { basic, FakeIdentity } from '../../test/support/fake-identity.js';
import internalAccountsRoutes from './internal-accounts.routes.js';
import sandboxFundRoutes from './sandbox-fund.routes.js';

// Route tests for internal accounts and sandbox funding: the real gateway core,
// a fake identity (credentials) and fake accounts and payments gRPC servers that record calls.

/** accountOrWalletInfo of each currency as the accounts service generates them (sandbox). */
const INFOS: Record<string, Record<string, unknown>> = {
  USD: {
    accountType: 'USD_ACCOUNT',
    accountNumber: '931947163254',
    routingNumber: '110000000',
    paymentRails: ['ACH', 'WIRE'],
    bankName: 'Sluice Sandbox Bank',
    reference: 'SLUNX1T4D4C',
  },
  EUR: {
    accountType: 'EUR_ACCOUNT',
    iban: 'DE07100200304167868233',
    swiftCode: 'SLUIDEB1XXX',
    paymentRails: ['SEPA', 'SEPA_INSTANT'],
    reference: 'SLUNX1T4D4C',
  },
  GBP: {
    accountType: 'GBP_ACCOUNT',
    sortCode: '040075',
    accountNumber: '57443718',
    paymentRails: ['FASTER_PAYMENTS'],
    reference: 'SLUNX1T4D4C',
  },
  MXN: {
    accountType: 'MXN_ACCOUNT',
    clabeNumber: '646180593969837888',
    paymentRails: ['SPEI'],
    reference: 'SLUNX1T4D4C',
  },
  BRL: {
    accountType: 'BRL_ACCOUNT',
    qrCode:
      '00020126580014br.gov.bcb.pix0136541081d1-0942-431d-a6e7-ff87dfb486be5204000053039865802BR5914SLUICE SANDBOX6009SAO PAULO62150511SLUNX1T4D4C630465AF',
  },
  CAD: {
    accountType: 'CAD_ACCOUNT',
    bankCode: '998',
    branchCode: '00001',
    accountNumber: '072746151214',
    paymentRails: ['BANK_TRANSFER'],
    reference: 'SLUNX1T4D4C',
  },
  INR: { accountType: 'INR_ACCOUNT', vpa: 'slunx1t4d4c@sluice', paymentRails: ['UPI'] },
  NGN: {
    accountType: 'NGN_ACCOUNT',
    accountNumber: '3914877394',
    bankName: 'Sluice Sandbox Bank',
    paymentRails: ['BANK_TRANSFER'],
    reference: 'SLUNX1T4D4C',
  },
  PHP: {
    accountType: 'PHP_ACCOUNT',
    bankName: 'Sluice Sandbox Bank',
    accountNumber: '111121581519',
    paymentRails: ['BANK_TRANSFER'],
    reference: 'SLUNX1T4D4C',
  },
  USDC: {
    accountType: 'SOLANA_WALLET',
    address: 'AdW8zLCdaRRAAiQSHyLG4e3qiYv9hPPUNgA6M2YiMWFR',
    assetType: 'USDC',
  },
  USDT: { accountType: 'TRON_WALLET', address: 'TBCBMJNZTXwsMfgHKfsSSPcreaWJkeqY1o', assetType: 'USDT' },
  BTC: {
    accountType: 'SPARK_WALLET',
    address: 'spark1pgss97wpg9ktlgxr00d60ewxy8j5amyxyx52mxuzeqmfk5rhm4mphh4qcchtcu',
    assetType: 'BTC',
  },
};
const CRYPTO = new Set(['USDC', 'USDT', 'BTC']);

function pbAccount(
  currency: string,
  opts: { customerId?: string; amount?: bigint; platformId?: string } = {},
): accounts.InternalAccount {
  const info = INFOS[currency]!;
  return {
    id: newId('InternalAccount'),
    platformId: opts.platformId ?? 'Platform:x',
    ...(opts.customerId ? { customerId: opts.customerId } : {}),
    type: CRYPTO.has(currency)
      ? accounts.InternalAccountType.INTERNAL_CRYPTO
      : accounts.InternalAccountType.INTERNAL_FIAT,
    balance: {
      amount: opts.amount ?? 0n,
      currency: {
        code: currency,
        name: `${currency} name`,
        symbol: '¤',
        decimals: CRYPTO.has(currency) ? 6 : 2,
      },
    },
    fundingPaymentInstructions: [
      {
        accountOrWalletInfo: {
          accountType: String(info.accountType),
          paymentRails: [],
          ...(info as object),
        } as accounts.PaymentAccountInfo,
        instructionsNotes: `notes ${currency}`,
        isPlatformAccount: !opts.customerId,
      },
    ],
    createdAt: new Date('2026-01-02T03:04:05.678Z'),
    updatedAt: new Date('2026-01-02T03:04:06.000Z'),
    currency,
    environment: common.Environment.SANDBOX,
    availableAmount: opts.amount ?? 0n,
    fundingReference: 'SLUNX1T4D4C',
  };
}

function publicJson(a: accounts.InternalAccount) {
  const currency = a.currency;
  return {
    id: a.id,
    ...(a.customerId ? { customerId: a.customerId } : {}),
    type: CRYPTO.has(currency) ? 'INTERNAL_CRYPTO' : 'INTERNAL_FIAT',
    balance: { amount: Number(a.balance!.amount), currency: a.balance!.currency },
    fundingPaymentInstructions: [
      {
        accountOrWalletInfo: INFOS[currency],
        instructionsNotes: `notes ${currency}`,
        isPlatformAccount: !a.customerId,
      },
    ],
    createdAt: '2026-01-02T03:04:05.678Z',
    updatedAt: '2026-01-02T03:04:06.000Z',
  };
}

class FakeAccounts {
  calls: { method: string; req: Record<string, unknown> }[] = [];
  list: accounts.ListInternalAccountsResponse = { accounts: [], page: { hasMore: false, totalCount: 0 } };
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
      if (method === 'listInternalAccounts') return this.list;
      if (method === 'getInternalAccount')
        return { account: pbAccount('USD', { customerId: newId('Customer'), amount: 100_000n }) };
      if (method === 'sandboxFund') {
        return {
          account: pbAccount('USD', { customerId: newId('Customer'), amount: req.amount as bigint }),
          entryId: String(req.entryId ?? 'JournalEntry:x'),
          replayed: false,
        };
      }
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

/** Payments' sandbox funding: records the calls, answers a COMPLETED INCOMING transaction (or `fail`). */
class FakePayments {
  calls: { method: string; req: Record<string, unknown> }[] = [];
  fail: Error | undefined;
  status = 'COMPLETED';
  private server: RpcServer | undefined;

  get address() {
    return `127.0.0.1:${this.server!.port}`;
  }

  async start() {
    const logger = createLogger('fake-payments', 'silent');
    const record = (method: string) => async (req: Record<string, unknown>) => {
      this.calls.push({ method, req });
      if (this.fail) throw this.fail;
      if (method !== 'sandboxFundAccount') throw new DomainError('UNIMPLEMENTED', 'NOT_IMPLEMENTED', 'not in the fake');
      const t: payments.Transaction = {
        id: newId('Transaction'),
        platformId: String(req.platformId),
        type: 'INCOMING',
        status: this.status,
        source: { kind: 'REALTIME_FUNDING', currency: 'USD' },
        destination: { kind: 'ACCOUNT', accountId: String(req.accountId), currency: 'USD' },
        customerId: newId('Customer'),
        platformCustomerId: 'pc-1',
        sentAmount: req.amount as bigint,
        receivedAmount: req.amount as bigint,
        fees: 0n,
        exchangeRate: '1',
        reference: 'SLC-ABCDEFGHJKLMNPQR',
        counterpartyInformation: {},
        paymentInstructions: [],
        createdAt: new Date(),
        updatedAt: new Date(),
      };
      return { transaction: t };
    };
    const handlers = Object.fromEntries(Object.keys(payments.PaymentsServiceService).map((m) => [m, record(m)]));
    this.server = await startRpcServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      services: [implement<payments.PaymentsServiceServer>(payments.PaymentsServiceService, handlers as never, logger)],
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
const fakePayments = new FakePayments();
const sandbox = {
  tokenId: newId('Token'),
  secret: 'sandbox-secret',
  platformId: newId('Platform'),
  environment: 'SANDBOX' as const,
};
const production = {
  tokenId: newId('Token'),
  secret: 'production-secret',
  platformId: newId('Platform'),
  environment: 'PRODUCTION' as const,
};
const auth = basic(sandbox.tokenId, sandbox.secret);

beforeAll(async () => {
  await identity.start();
  await fake.start();
  await fakePayments.start();
  identity.add(sandbox);
  identity.add(production);
  h = await startGateway(
    identity.address,
    { 'internal-accounts': internalAccountsRoutes, 'sandbox-fund': sandboxFundRoutes },
    { ACCOUNTS_GRPC_URL: fake.address, PAYMENTS_GRPC_URL: fakePayments.address },
    { cursors: transparentCursors },
  );
});
afterAll(async () => {
  await h?.close();
  await fake.stop();
  await fakePayments.stop();
  await identity.stop();
});
beforeEach(() => {
  fake.calls = [];
  fake.fail = undefined;
  fakePayments.calls = [];
  fakePayments.fail = undefined;
  fakePayments.status = 'COMPLETED';
});

const get = (url: string, authorization = auth) =>
  h.app.inject({ method: 'GET', url: `${API}${url}`, headers: { authorization } });
const fund = (accountId: string, body: unknown, headers: Record<string, string> = {}, authorization = auth) =>
  h.app.inject({
    method: 'POST',
    url: `${API}/sandbox/internal-accounts/${accountId}/fund`,
    headers: { authorization, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });

describe('GET /customers/internal-accounts', () => {
  it('returns every instruction variant in the public shape, in the list envelope', async () => {
    const customerId = newId('Customer');
    const rows = Object.keys(INFOS).map((cur) => pbAccount(cur, { customerId, amount: 12_550n }));
    fake.list = { accounts: rows, page: { hasMore: true, nextCursor: 'abc', totalCount: 40 } };
    const res = await get(
      `/customers/internal-accounts?customerId=${customerId}&currency=USD&type=INTERNAL_FIAT&limit=12&cursor=xyz`,
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      data: rows.map(publicJson),
      hasMore: true,
      nextCursor: 'abc',
      totalCount: 40,
    });
    expect(fake.calls).toEqual([
      {
        method: 'listInternalAccounts',
        req: {
          platformId: sandbox.platformId,
          owner: accounts.Owner.CUSTOMERS,
          customerId,
          currency: 'USD',
          type: accounts.InternalAccountType.INTERNAL_FIAT,
          page: { limit: 12, cursor: 'xyz' },
        },
      },
    ]);
  });

  it('rejects bad filters with 400 INVALID_INPUT before calling accounts', async () => {
    for (const q of ['type=SAVINGS', 'customerId=Customer:123', 'limit=101', 'limit=0', 'color=red']) {
      const res = await get(`/customers/internal-accounts?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().code, q).toBe('INVALID_INPUT');
    }
    expect(fake.calls).toEqual([]);
  });

  it('passes the accounts service’s field errors through', async () => {
    fake.fail = invalidInput([{ field: 'currency', message: 'unknown currency "DOGE"' }]);
    const res = await get('/customers/internal-accounts?currency=DOGE');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      status: 400,
      code: 'INVALID_INPUT',
      details: { errors: [{ field: 'currency', message: 'unknown currency "DOGE"' }] },
    });
  });
});

describe('GET /platform/internal-accounts', () => {
  it('lists platform accounts (no customerId), 100 per page by default', async () => {
    const rows = [pbAccount('USD'), pbAccount('USDC')];
    fake.list = { accounts: rows, page: { hasMore: false, totalCount: 2 } };
    const res = await get('/platform/internal-accounts?currency=USDC');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({ data: rows.map(publicJson), hasMore: false, totalCount: 2 });
    expect('customerId' in body.data[0]).toBe(false);
    expect(fake.calls[0]!.req).toEqual({
      platformId: sandbox.platformId,
      owner: accounts.Owner.PLATFORM,
      currency: 'USDC',
      page: { limit: 100 },
    });
    expect((await get('/platform/internal-accounts?customerId=x')).statusCode).toBe(400);
  });
});

describe('POST /sandbox/internal-accounts/{accountId}/fund', () => {
  const accountId = newId('InternalAccount');

  it('funds through payments (an INCOMING transaction) and returns the InternalAccount as it is then', async () => {
    const res = await fund(accountId, { amount: 100000 }, { 'idempotency-key': 'key-1' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      type: 'INTERNAL_FIAT',
      balance: { amount: 100000, currency: { code: 'USD' } },
    });
    expect(fakePayments.calls).toEqual([
      {
        method: 'sandboxFundAccount',
        req: {
          platformId: sandbox.platformId,
          environment: common.Environment.SANDBOX,
          accountId,
          amount: 100000n,
          requestKey: 'key-1',
        },
      },
    ]);
    expect(fake.calls).toEqual([{ method: 'getInternalAccount', req: { platformId: sandbox.platformId, accountId } }]);
  });

  it('a credit the ledger refuses (the balance would pass the maximum) is 400 BALANCE_LIMIT_EXCEEDED', async () => {
    fakePayments.status = 'FAILED';
    const res = await fund(accountId, { amount: 5 });
    expect([res.statusCode, res.json().code, res.json().details.field]).toEqual([400, 'BALANCE_LIMIT_EXCEEDED', 'amount']);
    expect(fake.calls).toEqual([]);
  });

  it('rejects bad amounts and bodies with 400 and calls nothing', async () => {
    for (const body of [
      { amount: 0 },
      { amount: -1 },
      { amount: 1.5 },
      { amount: '100' },
      { amount: 9000000000000001 },
      {},
      { amount: 5, currency: 'USD' },
    ]) {
      const res = await fund(accountId, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('INVALID_INPUT');
    }
    expect((await fund('InternalAccount:not-a-uuid', { amount: 5 })).statusCode).toBe(400);
    expect(fake.calls).toEqual([]);
    expect(fakePayments.calls).toEqual([]);
  });

  it('is 403 for a production platform and 404 for an account the platform does not have', async () => {
    const prod = await fund(accountId, { amount: 5 }, {}, basic(production.tokenId, production.secret));
    expect(prod.statusCode).toBe(403);
    expect(prod.json().code).toBe('SANDBOX_ONLY');
    expect(fakePayments.calls).toEqual([]);
    fakePayments.fail = new DomainError(
      'NOT_FOUND',
      'INTERNAL_ACCOUNT_NOT_FOUND',
      `Internal account ${accountId} not found`,
    );
    const missing = await fund(accountId, { amount: 5 });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('INTERNAL_ACCOUNT_NOT_FOUND');
  });
});

describe('GET /internal-accounts/{id}', () => {
  it('returns the account of the platform, and forwards its id', async () => {
    const id = newId('InternalAccount');
    const res = await get(`/internal-accounts/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ type: 'INTERNAL_FIAT', balance: { amount: 100000 } });
    expect(fake.calls).toEqual([{ method: 'getInternalAccount', req: { platformId: sandbox.platformId, accountId: id } }]);
  });

  it('is 400 naming `id` for a malformed id (nothing called), and passes 404 through', async () => {
    const bad = await get('/internal-accounts/InternalAccount:nope');
    expect([bad.statusCode, bad.json().details.errors[0].field]).toEqual([400, 'id']);
    expect(fake.calls).toEqual([]);
    fake.fail = new DomainError('NOT_FOUND', 'INTERNAL_ACCOUNT_NOT_FOUND', 'not found');
    const missing = await get(`/internal-accounts/${newId('InternalAccount')}`);
    expect([missing.statusCode, missing.json().code]).toEqual([404, 'INTERNAL_ACCOUNT_NOT_FOUND']);
  });
});

describe('OpenAPI document', () => {
  it('documents the routes with named InternalAccount schemas', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: `${API}/openapi.json` })).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/customers/internal-accounts',
        '/platform/internal-accounts',
        '/sandbox/internal-accounts/{accountId}/fund',
      ]),
    );
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        'InternalAccount',
        'InternalAccountListResponse',
        'PaymentInstructions',
        'PaymentUsdAccountInfo',
        'SandboxFundRequest',
        'InternalAccountType',
      ]),
    );
  });
});
