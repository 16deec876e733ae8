import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { common, identity, payments } from '@sluice/contracts';
import { DomainError, newId } from '@sluice/core';
import { createLogger } from '@sluice/logging';
import { implement, startRpcServer, type RpcServer } from '@sluice/rpc';
import { API, startGateway, type Harness } from '../../test/support/harness.js';
import { basic } from '../../test/support/fake-identity.js';
import incomingRoutes from './incoming.routes.js';

// Route tests for incoming payments: the real gateway core, fake identity and payments gRPC
// servers (real gRPC and error transport) that record what they receive.

const logger = createLogger('fake', 'silent');
const sandbox = { tokenId: newId('Token'), secret: 's1', platformId: newId('Platform') };
const production = { tokenId: newId('Token'), secret: 'p1', platformId: newId('Platform') };
const INTERNAL = newId('InternalAccount');
const CUSTOMER = newId('Customer');

const TX: payments.Transaction = {
  id: newId('Transaction'),
  platformId: sandbox.platformId,
  type: 'INCOMING',
  status: 'COMPLETED',
  source: { kind: 'UMA_ADDRESS', umaAddress: '$success.usd@sandbox.sluice.local', currency: 'USD' },
  destination: { kind: 'ACCOUNT', accountId: INTERNAL, currency: 'USD' },
  customerId: CUSTOMER,
  platformCustomerId: 'pc-1',
  sentAmount: 1000n,
  receivedAmount: 1000n,
  fees: 0n,
  exchangeRate: '1',
  reference: 'SLC-ABCDEFGHJKLMNPQR',
  counterpartyInformation: { senderUmaAddress: '$success.usd@sandbox.sluice.local' },
  settledAt: new Date('2026-05-01T10:00:02.000Z'),
  paymentInstructions: [],
  createdAt: new Date('2026-05-01T10:00:00.000Z'),
  updatedAt: new Date('2026-05-01T10:00:02.000Z'),
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
      const p = [sandbox, production].find((x) => x.tokenId === req.tokenId && x.secret === req.clientSecret);
      if (!p) throw new DomainError('UNAUTHENTICATED', 'UNAUTHORIZED', 'Invalid or missing API credentials');
      return {
        tokenId: p.tokenId,
        platform: {
          id: p.platformId,
          name: 'p',
          environment: p === sandbox ? common.Environment.SANDBOX : common.Environment.PRODUCTION,
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
    sandboxReceiveUma: record('sandboxReceiveUma', () => ({ transaction: TX, replayed: false })),
    approveIncomingPayment: record('approveIncomingPayment', () => ({ transaction: TX })),
    rejectIncomingPayment: record('rejectIncomingPayment', () => ({
      transaction: { ...TX, status: 'REJECTED', settledAt: undefined },
    })),
  });
  h = await startGateway(
    `127.0.0.1:${identityServer.port}`,
    { incoming: incomingRoutes },
    { PAYMENTS_GRPC_URL: `127.0.0.1:${paymentsServer.port}` },
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

const post = (url: string, payload?: unknown, headers: Record<string, string> = {}, who = sandbox) =>
  h.app.inject({
    method: 'POST',
    url: `${API}${url}`,
    headers: { authorization: basic(who.tokenId, who.secret), ...headers },
    ...(payload !== undefined ? { payload: payload as object } : {}),
  });

const RECEIVE = {
  senderUmaAddress: '$success.usd@sandbox.sluice.local',
  receiverUmaAddress: '$alice@bank.example',
  receivingCurrencyCode: 'USD',
  receivingCurrencyAmount: 1000,
};

describe('POST /sandbox/uma/receive', () => {
  it('returns the INCOMING transaction (200) and passes the Idempotency-Key as the request key', async () => {
    const res = await post('/sandbox/uma/receive', RECEIVE, { 'idempotency-key': 'uma-1' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      id: TX.id,
      type: 'INCOMING',
      status: 'COMPLETED',
      source: { sourceType: 'UMA_ADDRESS', umaAddress: RECEIVE.senderUmaAddress, currency: 'USD' },
      destination: { destinationType: 'ACCOUNT', accountId: INTERNAL },
      receivedAmount: { amount: 1000, currency: { code: 'USD', decimals: 2 } },
      settledAt: '2026-05-01T10:00:02.000Z',
    });
    expect(body).not.toHaveProperty('sentAmount');
    expect(calls).toEqual([
      {
        method: 'sandboxReceiveUma',
        req: {
          platformId: sandbox.platformId,
          environment: common.Environment.SANDBOX,
          requestKey: 'uma-1',
          senderUmaAddress: RECEIVE.senderUmaAddress,
          receiverUmaAddress: RECEIVE.receiverUmaAddress,
          receivingCurrencyCode: 'USD',
          receivingCurrencyAmount: 1000n,
        },
      },
    ]);
  });

  it('is sandbox only: 403 SANDBOX_ONLY for a production platform, payments never called', async () => {
    const res = await post('/sandbox/uma/receive', RECEIVE, {}, production);
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json()).toMatchObject({ code: 'SANDBOX_ONLY' });
    expect(calls).toEqual([]);
  });

  it.each([
    ['a missing receiverUmaAddress', { ...RECEIVE, receiverUmaAddress: undefined }, 'receiverUmaAddress'],
    ['a missing senderUmaAddress', { ...RECEIVE, senderUmaAddress: undefined }, 'senderUmaAddress'],
    ['amount 0', { ...RECEIVE, receivingCurrencyAmount: 0 }, 'receivingCurrencyAmount'],
    ['a decimal amount', { ...RECEIVE, receivingCurrencyAmount: 1.5 }, 'receivingCurrencyAmount'],
    ['a lower-case currency', { ...RECEIVE, receivingCurrencyCode: 'usd' }, 'receivingCurrencyCode'],
    ['an unknown field', { ...RECEIVE, customerId: CUSTOMER }, ''],
  ])('refuses %s with 400 INVALID_INPUT and never calls payments', async (_n, body, field) => {
    const res = await post('/sandbox/uma/receive', body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe('INVALID_INPUT');
    if (field) expect(JSON.stringify(res.json())).toContain(field);
    expect(calls).toEqual([]);
  });

  it('renders payments errors: unknown receiver 404, bad UMA address 400 naming the field', async () => {
    paymentsFail = new DomainError('NOT_FOUND', 'UMA_RECEIVER_NOT_FOUND', 'no such receiver', {
      field: 'receiverUmaAddress',
    });
    const r1 = await post('/sandbox/uma/receive', RECEIVE);
    expect(r1.statusCode).toBe(404);
    expect(r1.json()).toMatchObject({ code: 'UMA_RECEIVER_NOT_FOUND' });
    paymentsFail = new DomainError('INVALID_ARGUMENT', 'INVALID_INPUT', 'Invalid input', {
      errors: [{ field: 'senderUmaAddress', message: 'a UMA address starts with "$"' }],
    });
    const r2 = await post('/sandbox/uma/receive', RECEIVE);
    expect(r2.statusCode).toBe(400);
    expect(JSON.stringify(r2.json())).toContain('senderUmaAddress');
  });
});

describe('POST /transactions/{id}/approve and /reject', () => {
  it('approve without a body; receiverCustomerInfo is passed as JSON', async () => {
    const r1 = await post(`/transactions/${TX.id}/approve`);
    expect(r1.statusCode, r1.body).toBe(200);
    expect(r1.json()).toMatchObject({ id: TX.id, status: 'COMPLETED' });
    const r2 = await post(`/transactions/${TX.id}/approve`, { receiverCustomerInfo: { FULL_NAME: 'Alice' } });
    expect(r2.statusCode, r2.body).toBe(200);
    expect(calls).toEqual([
      { method: 'approveIncomingPayment', req: { platformId: sandbox.platformId, transactionId: TX.id } },
      {
        method: 'approveIncomingPayment',
        req: {
          platformId: sandbox.platformId,
          transactionId: TX.id,
          receiverCustomerInfoJson: '{"FULL_NAME":"Alice"}',
        },
      },
    ]);
  });

  it('reject passes the reason and returns the REJECTED transaction', async () => {
    const res = await post(`/transactions/${TX.id}/reject`, { reason: 'RESTRICTED_JURISDICTION' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'REJECTED' });
    expect(calls[0]).toEqual({
      method: 'rejectIncomingPayment',
      req: { platformId: sandbox.platformId, transactionId: TX.id, reason: 'RESTRICTED_JURISDICTION' },
    });
  });

  it('400 for a malformed id or an unknown body field, without calling payments', async () => {
    expect((await post('/transactions/nope/approve')).statusCode).toBe(400);
    expect((await post(`/transactions/${TX.id}/reject`, { because: 'x' })).statusCode).toBe(400);
    expect(calls).toEqual([]);
  });

  it('renders 409 TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL and 404 TRANSACTION_NOT_FOUND', async () => {
    paymentsFail = new DomainError('ABORTED', 'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL', 'not awaiting approval');
    const r1 = await post(`/transactions/${TX.id}/approve`);
    expect(r1.statusCode).toBe(409);
    expect(r1.json()).toMatchObject({ code: 'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL' });
    paymentsFail = new DomainError('NOT_FOUND', 'TRANSACTION_NOT_FOUND', 'not found');
    const r2 = await post(`/transactions/${TX.id}/reject`);
    expect(r2.statusCode).toBe(404);
  });
});
