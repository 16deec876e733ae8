import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { common, identity, payments } from '@sluice/contracts';
import { DomainError, newId } from '@sluice/core';
import { createLogger } from '@sluice/logging';
import { implement, startRpcServer, type RpcServer } from '@sluice/rpc';
import { API, startGateway, transparentCursors, type Harness } from '../../test/support/harness.js';
import { basic } from '../../test/support/fake-identity.js';
import transfersRoutes from './transfers.routes.js';
import transactionsRoutes from './transactions.routes.js';

// Route tests for transfers and transactions: the real gateway core, fake identity and
// payments gRPC servers (real gRPC and error transport) that record what they receive.

const logger = createLogger('fake', 'silent');
const sandbox = { tokenId: newId('Token'), secret: 's1', platformId: newId('Platform') };
const auth = basic(sandbox.tokenId, sandbox.secret);
const INTERNAL = newId('InternalAccount');
const EXTERNAL = newId('ExternalAccount');
const CUSTOMER = newId('Customer');
const USD = { code: 'USD', name: 'United States Dollar', symbol: '$', decimals: 2 };

const TX: payments.Transaction = {
  id: newId('Transaction'),
  platformId: sandbox.platformId,
  type: 'OUTGOING',
  status: 'PROCESSING',
  source: { kind: 'ACCOUNT', accountId: INTERNAL, currency: 'USD' },
  destination: { kind: 'ACCOUNT', accountId: EXTERNAL, currency: 'USD' },
  customerId: CUSTOMER,
  platformCustomerId: 'pc-1',
  sentAmount: 12_550n,
  receivedAmount: 12_550n,
  fees: 0n,
  exchangeRate: '1',
  reference: 'SLC-ABCDEFGHJKLMNPQR',
  counterpartyInformation: {},
  paymentInstructions: [],
  createdAt: new Date('2026-05-01T10:00:00.000Z'),
  updatedAt: new Date('2026-05-01T10:00:01.000Z'),
};

type Call = { method: string; req: Record<string, unknown> };
const calls: Call[] = [];
let paymentsFail: Error | undefined;
let h: Harness;
let identityServer: RpcServer;
let paymentsServer: RpcServer;

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

beforeAll(async () => {
  identityServer = await serve<identity.IdentityServiceServer>(identity.IdentityServiceService, {
    authenticateToken: async (req: identity.AuthenticateTokenRequest) => {
      if (req.tokenId !== sandbox.tokenId || req.clientSecret !== sandbox.secret) {
        throw new DomainError('UNAUTHENTICATED', 'UNAUTHORIZED', 'Invalid or missing API credentials');
      }
      return {
        tokenId: sandbox.tokenId,
        platform: {
          id: sandbox.platformId,
          name: 'p',
          environment: common.Environment.SANDBOX,
          createdAt: new Date(),
        },
        permissions: [identity.Permission.VIEW, identity.Permission.TRANSACT, identity.Permission.MANAGE],
      };
    },
  });
  const record = (method: string, answer: () => unknown) => async (req: Record<string, unknown>) => {
    calls.push({ method, req: { ...req } });
    if (paymentsFail) throw paymentsFail;
    return answer();
  };
  paymentsServer = await serve<payments.PaymentsServiceServer>(payments.PaymentsServiceService, {
    transferOut: record('transferOut', () => ({ transaction: TX, replayed: false })),
    transferIn: record('transferIn', () => ({
      transaction: {
        ...TX,
        type: 'INCOMING',
        source: { kind: 'ACCOUNT', accountId: EXTERNAL, currency: 'USD' },
        destination: { kind: 'ACCOUNT', accountId: INTERNAL, currency: 'USD' },
      },
      replayed: false,
    })),
    getTransaction: record('getTransaction', () => ({ transaction: TX })),
    listTransactions: record('listTransactions', () => ({
      transactions: [
        { ...TX, status: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED', failureDetail: 'ACCOUNT_CLOSED' },
      ],
      page: { hasMore: true, nextCursor: 'c2', totalCount: 7 },
    })),
  });
  h = await startGateway(
    `127.0.0.1:${identityServer.port}`,
    { transfers: transfersRoutes, transactions: transactionsRoutes },
    { PAYMENTS_GRPC_URL: `127.0.0.1:${paymentsServer.port}` },
    { cursors: transparentCursors },
  );
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

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  h.app.inject({
    method: 'POST',
    url: `${API}${url}`,
    headers: { authorization: auth, ...headers },
    payload: payload as object,
  });
const get = (url: string) =>
  h.app.inject({ method: 'GET', url: `${API}${url}`, headers: { authorization: auth } });

const OUTGOING_JSON = {
  id: TX.id,
  status: 'PROCESSING',
  type: 'OUTGOING',
  source: { sourceType: 'ACCOUNT', accountId: INTERNAL, currency: 'USD' },
  destination: { destinationType: 'ACCOUNT', accountId: EXTERNAL, currency: 'USD' },
  customerId: CUSTOMER,
  platformCustomerId: 'pc-1',
  sentAmount: { amount: 12550, currency: USD },
  receivedAmount: { amount: 12550, currency: USD },
  exchangeRate: 1,
  fees: 0,
  reconciliationInstructions: { reference: 'SLC-ABCDEFGHJKLMNPQR' },
  counterpartyInformation: {},
  createdAt: '2026-05-01T10:00:00.000Z',
  updatedAt: '2026-05-01T10:00:01.000Z',
};

describe('POST /transfer-out and /transfer-in', () => {
  it('creates the transfer (201, public Transaction) and passes the Idempotency-Key down as the request key', async () => {
    const res = await post(
      '/transfer-out',
      { source: { accountId: INTERNAL }, destination: { accountId: EXTERNAL }, amount: 12550 },
      { 'idempotency-key': 'key-out-1' },
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual(OUTGOING_JSON);
    expect(calls).toEqual([
      {
        method: 'transferOut',
        req: {
          platformId: sandbox.platformId,
          environment: common.Environment.SANDBOX,
          requestKey: 'key-out-1',
          sourceAccountId: INTERNAL,
          destinationAccountId: EXTERNAL,
          amount: 12550n,
        },
      },
    ]);
  });

  it('transfer-in: INCOMING without the outgoing-only fields; without a key a fresh request key is used', async () => {
    const res = await post('/transfer-in', {
      source: { accountId: EXTERNAL },
      destination: { accountId: INTERNAL },
      amount: 5,
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      type: 'INCOMING',
      source: { accountId: EXTERNAL },
      receivedAmount: { amount: 12550 },
    });
    expect(body).not.toHaveProperty('sentAmount');
    expect(calls[0]!.req.requestKey).toMatch(/^Request:/);
  });

  it.each([
    ['a missing destination', { source: { accountId: INTERNAL }, amount: 1 }],
    [
      'an internal account as destination',
      { source: { accountId: INTERNAL }, destination: { accountId: INTERNAL }, amount: 1 },
    ],
    ['amount 0', { source: { accountId: INTERNAL }, destination: { accountId: EXTERNAL }, amount: 0 }],
    [
      'a decimal amount',
      { source: { accountId: INTERNAL }, destination: { accountId: EXTERNAL }, amount: 1.5 },
    ],
    [
      'an unknown field',
      { source: { accountId: INTERNAL }, destination: { accountId: EXTERNAL }, amount: 1, fee: 2 },
    ],
  ])('refuses %s with 400 and never calls payments', async (_n, body) => {
    const res = await post('/transfer-out', body);
    expect(res.statusCode, res.body).toBe(400);
    expect(calls).toEqual([]);
  });

  it('renders payments errors: INSUFFICIENT_FUNDS 400, unknown account 404', async () => {
    paymentsFail = new DomainError('FAILED_PRECONDITION', 'INSUFFICIENT_FUNDS', 'Insufficient funds');
    const body = { source: { accountId: INTERNAL }, destination: { accountId: EXTERNAL }, amount: 1 };
    const r1 = await post('/transfer-out', body);
    expect(r1.statusCode).toBe(400);
    expect(r1.json()).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    paymentsFail = new DomainError('NOT_FOUND', 'EXTERNAL_ACCOUNT_NOT_FOUND', 'not found');
    const r2 = await post('/transfer-out', body, { 'idempotency-key': 'key-404' });
    expect(r2.statusCode).toBe(404);
  });
});

describe('GET /transactions', () => {
  it('forwards every filter and returns the envelope', async () => {
    const q =
      `customerId=${sandbox.platformId}&platformCustomerId=pc-1&accountIdentifier=${INTERNAL}` +
      `&senderAccountIdentifier=${INTERNAL}&receiverAccountIdentifier=${EXTERNAL}&status=FAILED&type=OUTGOING` +
      `&reference=SLC-X&startDate=2026-05-01T00:00:00Z&endDate=2026-05-02T00:00:00Z&sortOrder=asc&limit=5&cursor=c1`;
    const res = await get(`/transactions?${q}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      data: [
        {
          ...OUTGOING_JSON,
          status: 'FAILED',
          failureReason: 'QUOTE_EXECUTION_FAILED',
          failureDetail: 'ACCOUNT_CLOSED',
        },
      ],
      hasMore: true,
      nextCursor: 'c2',
      totalCount: 7,
    });
    expect(calls[0]).toEqual({
      method: 'listTransactions',
      req: {
        platformId: sandbox.platformId,
        customerId: sandbox.platformId,
        platformCustomerId: 'pc-1',
        accountIdentifier: INTERNAL,
        senderAccountIdentifier: INTERNAL,
        receiverAccountIdentifier: EXTERNAL,
        status: 'FAILED',
        type: 'OUTGOING',
        reference: 'SLC-X',
        startDate: new Date('2026-05-01T00:00:00Z'),
        endDate: new Date('2026-05-02T00:00:00Z'),
        sortOrder: payments.SortOrder.ASC,
        page: { limit: 5, cursor: 'c1' },
      },
    });
  });

  it('defaults to desc and 20; refuses a bad status, type, sortOrder or date with 400', async () => {
    const res = await get('/transactions');
    expect(res.statusCode).toBe(200);
    expect(calls[0]!.req).toMatchObject({ sortOrder: payments.SortOrder.DESC, page: { limit: 20 } });
    for (const q of ['status=DONE', 'type=SIDEWAYS', 'sortOrder=up', 'startDate=yesterday', 'bogus=1']) {
      expect((await get(`/transactions?${q}`)).statusCode, q).toBe(400);
    }
    expect(calls).toHaveLength(1);
  });

  it('GET /transactions/{id}: the transaction; 404 passes through; a malformed id is 400', async () => {
    const ok = await get(`/transactions/${TX.id}`);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toEqual(OUTGOING_JSON);
    expect(calls[0]!.req).toEqual({ platformId: sandbox.platformId, transactionId: TX.id });
    paymentsFail = new DomainError('NOT_FOUND', 'TRANSACTION_NOT_FOUND', 'not found');
    const missing = await get(`/transactions/${newId('Transaction')}`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'TRANSACTION_NOT_FOUND' });
    expect((await get('/transactions/nope')).statusCode).toBe(400);
  });
});
