import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { common, identity, payments, walletAuth } from '@sluice/contracts';
import { DomainError, newId } from '@sluice/core';
import { createLogger } from '@sluice/logging';
import { implement, startRpcServer, type RpcServer } from '@sluice/rpc';
import { API, startGateway, type Harness } from '../../test/support/harness.js';
import { basic } from '../../test/support/fake-identity.js';
import quotesRoutes from './quotes.routes.js';

// Route tests for quotes: the real gateway core, fake identity and payments gRPC servers
// (real gRPC and error transport) that record what they receive.

const logger = createLogger('fake', 'silent');
const sandbox = { tokenId: newId('Token'), secret: 's1', platformId: newId('Platform') };
const auth = basic(sandbox.tokenId, sandbox.secret);
const INTERNAL = newId('InternalAccount');
const EXTERNAL = newId('ExternalAccount');
const CUSTOMER = newId('Customer');
const LOOKUP = newId('Lookup');
const TX_ID = newId('Transaction');

const QUOTE: payments.Quote = {
  id: newId('Quote'),
  platformId: sandbox.platformId,
  status: 'PENDING',
  source: { kind: 'ACCOUNT', accountId: INTERNAL, currency: 'USD' },
  destination: { kind: 'ACCOUNT', accountId: EXTERNAL, currency: 'EUR' },
  customerId: CUSTOMER,
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: 10_000n,
  totalSendingAmount: 10_000n,
  totalReceivingAmount: 9_223n,
  exchangeRate: '1.08',
  feesIncluded: 40n,
  rateDetails: {
    counterpartyMultiplier: '0.0000925925925926',
    counterpartyFixedFee: 0n,
    gridApiMultiplier: '0.0000996',
    gridApiFixedFee: 10n,
    gridApiVariableFeeRate: '0.003',
    gridApiVariableFeeAmount: 30n,
  },
  description: 'Invoice 7',
  purposeOfPayment: 'GIFT',
  counterpartyInformation: {},
  paymentInstructions: [],
  createdAt: new Date('2026-05-01T10:00:00.000Z'),
  expiresAt: new Date('2026-05-01T10:02:00.000Z'),
  updatedAt: new Date('2026-05-01T10:00:00.000Z'),
};

/** A REALTIME_FUNDING quote: no source account, payment instructions, its transaction from the start. */
const RTF_QUOTE: payments.Quote = {
  ...QUOTE,
  id: newId('Quote'),
  source: { kind: 'REALTIME_FUNDING', currency: 'USD' },
  transactionId: TX_ID,
  paymentInstructions: [
    {
      accountOrWalletInfo: {
        accountType: 'USD_ACCOUNT',
        accountNumber: '900000000001',
        routingNumber: '110000000',
        paymentRails: ['RTP', 'FEDNOW'],
        bankName: 'Sluice Sandbox Bank',
        reference: 'SLC-ABCDEFGHJKLMNPQR',
      },
      instructionsNotes: 'Pay with the reference',
      isPlatformAccount: true,
    },
  ],
};

const TX: payments.Transaction = {
  id: TX_ID,
  platformId: sandbox.platformId,
  type: 'OUTGOING',
  status: 'PROCESSING',
  source: { kind: 'REALTIME_FUNDING', currency: 'USD' },
  destination: { kind: 'ACCOUNT', accountId: EXTERNAL, currency: 'EUR' },
  customerId: CUSTOMER,
  platformCustomerId: 'pc-1',
  sentAmount: 10_000n,
  receivedAmount: 9_223n,
  fees: 40n,
  exchangeRate: '1.08',
  reference: 'SLC-ABCDEFGHJKLMNPQR',
  counterpartyInformation: {},
  quoteId: RTF_QUOTE.id,
  rateDetails: QUOTE.rateDetails!,
  paymentInstructions: RTF_QUOTE.paymentInstructions,
  createdAt: new Date('2026-05-01T10:00:00.000Z'),
  updatedAt: new Date('2026-05-01T10:00:01.000Z'),
};

type Call = { method: string; req: Record<string, unknown> };
const calls: Call[] = [];
let paymentsFail: Error | undefined;
/** What payments' ExecuteQuote answers (default: the executed quote). */
let executeAnswer: (() => unknown) | undefined;
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
    createQuote: record('createQuote', () => ({
      quote: calls.at(-1)?.req.sourceKind === 'REALTIME_FUNDING' ? RTF_QUOTE : QUOTE,
    })),
    sandboxSend: record('sandboxSend', () => ({ transaction: TX })),
    getQuote: record('getQuote', () => ({ quote: QUOTE })),
    executeQuote: record(
      'executeQuote',
      () => executeAnswer?.() ?? { quote: { ...QUOTE, status: 'PROCESSING', transactionId: TX_ID } },
    ),
  });
  h = await startGateway(
    `127.0.0.1:${identityServer.port}`,
    { quotes: quotesRoutes },
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
  executeAnswer = undefined;
  paymentsFail = undefined;
});

const post = (url: string, payload: unknown) =>
  h.app.inject({
    method: 'POST',
    url: `${API}${url}`,
    headers: { authorization: auth },
    payload: payload as object,
  });
const get = (url: string) =>
  h.app.inject({ method: 'GET', url: `${API}${url}`, headers: { authorization: auth } });

const EUR = { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 };
const QUOTE_JSON = {
  id: QUOTE.id,
  status: 'PENDING',
  createdAt: '2026-05-01T10:00:00.000Z',
  expiresAt: '2026-05-01T10:02:00.000Z',
  source: { sourceType: 'ACCOUNT', accountId: INTERNAL, customerId: CUSTOMER },
  destination: { destinationType: 'ACCOUNT', accountId: EXTERNAL, currency: 'EUR' },
  totalSendingAmount: 10000,
  totalReceivingAmount: 9223,
  exchangeRate: 1.08,
  feesIncluded: 40,
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: 10000,
  description: 'Invoice 7',
  purposeOfPayment: 'GIFT',
  counterpartyInformation: {},
  rateDetails: {
    counterpartyMultiplier: 0.0000925925925926,
    counterpartyFixedFee: 0,
    gridApiMultiplier: 0.0000996,
    gridApiFixedFee: 10,
    gridApiVariableFeeRate: 0.003,
    gridApiVariableFeeAmount: 30,
  },
};

describe('POST /quotes', () => {
  it('creates the quote (201, public Quote) and forwards every field', async () => {
    const res = await post('/quotes', {
      lookupId: LOOKUP,
      source: { sourceType: 'ACCOUNT', accountId: INTERNAL, customerId: CUSTOMER },
      destination: {
        destinationType: 'UMA_ADDRESS',
        umaAddress: '$success.eur@sandbox.sluice.local',
        currency: 'EUR',
      },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10000,
      description: 'Invoice 7',
      purposeOfPayment: 'GIFT',
      senderCustomerInfo: { FULL_NAME: 'Ada L', ADDRESS: { country: 'FR' } },
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject(QUOTE_JSON);
    expect(body.sendingCurrency).toMatchObject({ code: 'USD', decimals: 2 });
    expect(body.receivingCurrency).toMatchObject(EUR);
    expect(calls).toEqual([
      {
        method: 'createQuote',
        req: {
          platformId: sandbox.platformId,
          environment: common.Environment.SANDBOX,
          sourceKind: 'ACCOUNT',
          sourceAccountId: INTERNAL,
          sourceCustomerId: CUSTOMER,
          destinationKind: 'UMA_ADDRESS',
          destinationUmaAddress: '$success.eur@sandbox.sluice.local',
          destinationCurrency: 'EUR',
          lockedCurrencySide: 'SENDING',
          lockedCurrencyAmount: 10000n,
          lookupId: LOOKUP,
          immediatelyExecute: false,
          description: 'Invoice 7',
          purposeOfPayment: 'GIFT',
          senderCustomerInfoJson: JSON.stringify({ FULL_NAME: 'Ada L', ADDRESS: { country: 'FR' } }),
        },
      },
    ]);
  });

  const ok = {
    source: { sourceType: 'ACCOUNT', accountId: INTERNAL },
    destination: { destinationType: 'ACCOUNT', accountId: EXTERNAL },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 100,
  };
  it.each<[string, Record<string, unknown>]>([
    ['a missing destination', { ...ok, destination: undefined }],
    ['an unknown source type', { ...ok, source: { sourceType: 'CARD', currency: 'USD' } }],
    [
      'an unknown source field',
      { ...ok, source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', iban: 'DE00' } },
    ],
    ['a malformed source account', { ...ok, source: { sourceType: 'ACCOUNT', accountId: 'x' } }],
    ['an unknown locked side', { ...ok, lockedCurrencySide: 'BOTH' }],
    ['amount 0', { ...ok, lockedCurrencyAmount: 0 }],
    ['an amount over 9e15', { ...ok, lockedCurrencyAmount: 9_000_000_000_000_001 }],
    ['a decimal amount', { ...ok, lockedCurrencyAmount: 1.5 }],
    ['an unknown purpose', { ...ok, purposeOfPayment: 'FUN' }],
    ['an unknown field', { ...ok, fee: 1 }],
  ])('refuses %s with 400 and never calls payments', async (_n, body) => {
    const res = await post('/quotes', body);
    expect(res.statusCode, res.body).toBe(400);
    expect(calls).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    [
      'an ACCOUNT source with a currency',
      { ...ok, source: { sourceType: 'ACCOUNT', accountId: INTERNAL, currency: 'EUR' } },
      ['source.currency'],
    ],
    [
      'a REALTIME_FUNDING source with an account',
      { ...ok, source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', accountId: INTERNAL } },
      ['source.accountId'],
    ],
    [
      'an ACCOUNT destination with a UMA address and a currency',
      {
        ...ok,
        destination: {
          destinationType: 'ACCOUNT',
          accountId: EXTERNAL,
          umaAddress: '$a@b.c',
          currency: 'MXN',
        },
      },
      ['destination.umaAddress', 'destination.currency'],
    ],
    [
      'a UMA destination with a payment rail',
      {
        ...ok,
        destination: { destinationType: 'UMA_ADDRESS', umaAddress: '$a@b.c', paymentRail: 'ACH' },
      },
      ['destination.paymentRail'],
    ],
    [
      'an unknown payment rail',
      {
        ...ok,
        destination: { destinationType: 'ACCOUNT', accountId: EXTERNAL, paymentRail: 'CARRIER_PIGEON' },
      },
      ['destination.paymentRail'],
    ],
  ])('refuses %s (fields of another type are not ignored), naming each', async (_n, body, fields) => {
    const res = await post('/quotes', body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe('INVALID_INPUT');
    for (const f of fields) expect(JSON.stringify(res.json().details), f).toContain(`"${f}"`);
    expect(calls).toEqual([]);
  });

  it('forwards destination.paymentRail and shows the rail of the quote', async () => {
    const res = await post('/quotes', {
      ...ok,
      destination: { destinationType: 'ACCOUNT', accountId: EXTERNAL, paymentRail: 'SEPA' },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(calls[0]!.req).toMatchObject({ destinationAccountId: EXTERNAL, destinationPaymentRail: 'SEPA' });
  });

  it('creates a REALTIME_FUNDING quote: forwards the currency and customer, renders paymentInstructions and transactionId', async () => {
    const res = await post('/quotes', {
      source: {
        sourceType: 'REALTIME_FUNDING',
        currency: 'USD',
        customerId: CUSTOMER,
        cryptoNetwork: 'SOLANA',
      },
      destination: { destinationType: 'ACCOUNT', accountId: EXTERNAL },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10000,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(calls[0]!.req).toMatchObject({
      sourceKind: 'REALTIME_FUNDING',
      sourceAccountId: '',
      sourceCurrency: 'USD',
      sourceCustomerId: CUSTOMER,
    });
    const body = res.json();
    expect(body.source).toEqual({ sourceType: 'REALTIME_FUNDING', customerId: CUSTOMER, currency: 'USD' });
    expect(body.transactionId).toBe(TX_ID);
    expect(body.paymentInstructions).toEqual([
      {
        accountOrWalletInfo: {
          accountType: 'USD_ACCOUNT',
          accountNumber: '900000000001',
          routingNumber: '110000000',
          paymentRails: ['RTP', 'FEDNOW'],
          bankName: 'Sluice Sandbox Bank',
          reference: 'SLC-ABCDEFGHJKLMNPQR',
        },
        instructionsNotes: 'Pay with the reference',
        isPlatformAccount: true,
      },
    ]);
  });

  it('renders payments errors: SAME_CURRENCY_QUOTE 400, LOOKUP_REQUEST_NOT_FOUND 404, LOOKUP_EXPIRED 400', async () => {
    paymentsFail = new DomainError('INVALID_ARGUMENT', 'SAME_CURRENCY_QUOTE', 'use /transfer-out');
    const r1 = await post('/quotes', ok);
    expect(r1.statusCode).toBe(400);
    expect(r1.json()).toMatchObject({ code: 'SAME_CURRENCY_QUOTE', message: 'use /transfer-out' });
    paymentsFail = new DomainError('NOT_FOUND', 'LOOKUP_REQUEST_NOT_FOUND', 'Lookup not found');
    expect((await post('/quotes', ok)).statusCode).toBe(404);
    paymentsFail = new DomainError('FAILED_PRECONDITION', 'LOOKUP_EXPIRED', 'expired');
    expect((await post('/quotes', ok)).statusCode).toBe(400);
  });
});

describe('GET /quotes/{quoteId}', () => {
  it('returns the quote of the calling platform', async () => {
    const res = await get(`/quotes/${QUOTE.id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject(QUOTE_JSON);
    expect(calls).toEqual([
      { method: 'getQuote', req: { platformId: sandbox.platformId, quoteId: QUOTE.id } },
    ]);
  });

  it('404 for another platform’s quote; 400 for a malformed id without calling payments', async () => {
    paymentsFail = new DomainError('NOT_FOUND', 'QUOTE_NOT_FOUND', 'Quote not found');
    const r1 = await get(`/quotes/${newId('Quote')}`);
    expect(r1.statusCode).toBe(404);
    expect(r1.json()).toMatchObject({ code: 'QUOTE_NOT_FOUND' });
    calls.length = 0;
    expect((await get('/quotes/Quote:nope')).statusCode).toBe(400);
    expect(calls).toEqual([]);
  });
});

describe('POST /quotes/{quoteId}/execute', () => {
  it('executes the quote of the calling platform and returns it with its transactionId', async () => {
    const res = await post(`/quotes/${QUOTE.id}/execute`, {});
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ ...QUOTE_JSON, status: 'PROCESSING', transactionId: TX_ID });
    expect(calls).toEqual([
      {
        method: 'executeQuote',
        req: { platformId: sandbox.platformId, environment: common.Environment.SANDBOX, quoteId: QUOTE.id },
      },
    ]);
  });

  it('answers 202 with the signing challenge when payments asks for the wallet signature, and forwards the signed retry', async () => {
    const expiresAt = new Date(Date.now() + 300_000);
    const requestId = newId('Request');
    executeAnswer = () => ({
      signingChallenge: {
        payloadToSign: '{"requestId":"x"}',
        requestId,
        expiresAt,
        credentialType: walletAuth.AuthMethodType.UNSPECIFIED,
      },
    });
    const step1 = await h.app.inject({
      method: 'POST',
      url: `${API}/quotes/${QUOTE.id}/execute`,
      headers: { authorization: auth, 'idempotency-key': 'exec-wallet-1' },
    });
    expect(step1.statusCode, step1.body).toBe(202);
    expect(step1.json()).toEqual({
      payloadToSign: '{"requestId":"x"}',
      requestId,
      expiresAt: expiresAt.toISOString(),
    });
    // Step 2 with the same Idempotency-Key reaches payments (a 202 is never replayed) with both headers.
    executeAnswer = undefined;
    const step2 = await h.app.inject({
      method: 'POST',
      url: `${API}/quotes/${QUOTE.id}/execute`,
      headers: {
        authorization: auth,
        'idempotency-key': 'exec-wallet-1',
        'service-wallet-signature': 'stamp',
        'request-id': requestId,
      },
    });
    expect(step2.statusCode, step2.body).toBe(200);
    expect(step2.json()).toMatchObject({ status: 'PROCESSING', transactionId: TX_ID });
    expect(calls.map((c) => c.req)).toEqual([
      { platformId: sandbox.platformId, environment: common.Environment.SANDBOX, quoteId: QUOTE.id },
      {
        platformId: sandbox.platformId,
        environment: common.Environment.SANDBOX,
        quoteId: QUOTE.id,
        walletSignature: 'stamp',
        signingRequestId: requestId,
      },
    ]);
  });

  it('takes no body: none or {} executes, any field is 400 and payments is never called', async () => {
    const none = await h.app.inject({
      method: 'POST',
      url: `${API}/quotes/${QUOTE.id}/execute`,
      headers: { authorization: auth },
    });
    expect(none.statusCode, none.body).toBe(200);
    calls.length = 0;
    const extra = await post(`/quotes/${QUOTE.id}/execute`, { amount: 1 });
    expect(extra.statusCode, extra.body).toBe(400);
    expect(extra.json().code).toBe('INVALID_INPUT');
    expect(calls).toEqual([]);
  });

  it('renders QUOTE_EXPIRED as 409, INSUFFICIENT_FUNDS as 400, QUOTE_NOT_FOUND as 404', async () => {
    paymentsFail = new DomainError('ABORTED', 'QUOTE_EXPIRED', 'expired');
    const r1 = await post(`/quotes/${QUOTE.id}/execute`, {});
    expect(r1.statusCode).toBe(409);
    expect(r1.json()).toMatchObject({ code: 'QUOTE_EXPIRED' });
    paymentsFail = new DomainError('FAILED_PRECONDITION', 'INSUFFICIENT_FUNDS', 'short');
    expect((await post(`/quotes/${QUOTE.id}/execute`, {})).statusCode).toBe(400);
    paymentsFail = new DomainError('NOT_FOUND', 'QUOTE_NOT_FOUND', 'nope');
    expect((await post(`/quotes/${newId('Quote')}/execute`, {})).statusCode).toBe(404);
  });
});

describe('POST /sandbox/send', () => {
  it('forwards the payment of a quote’s instructions and returns its transaction', async () => {
    const res = await post('/sandbox/send', {
      quoteId: RTF_QUOTE.id,
      currencyCode: 'USD',
      currencyAmount: 10000,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(calls).toEqual([
      {
        method: 'sandboxSend',
        req: {
          platformId: sandbox.platformId,
          environment: common.Environment.SANDBOX,
          quoteId: RTF_QUOTE.id,
          currencyCode: 'USD',
          currencyAmount: 10000n,
        },
      },
    ]);
    expect(res.json()).toMatchObject({
      id: TX_ID,
      type: 'OUTGOING',
      status: 'PROCESSING',
      source: { sourceType: 'REALTIME_FUNDING', customerId: CUSTOMER, currency: 'USD' },
      quoteId: RTF_QUOTE.id,
      exchangeRate: 1.08,
      rateDetails: { gridApiFixedFee: 10, gridApiVariableFeeRate: 0.003 },
    });
    // The reference OutgoingTransaction: a REALTIME_FUNDING payment carries its paymentInstructions.
    expect(RTF_QUOTE.paymentInstructions.length).toBeGreaterThan(0);
    expect(res.json().paymentInstructions).toHaveLength(RTF_QUOTE.paymentInstructions.length);
    expect(res.json().paymentInstructions[0]).toMatchObject({
      accountOrWalletInfo: { accountType: RTF_QUOTE.paymentInstructions[0]!.accountOrWalletInfo!.accountType },
      isPlatformAccount: RTF_QUOTE.paymentInstructions[0]!.isPlatformAccount,
    });
  });

  it.each<[string, Record<string, unknown>]>([
    ['a missing quoteId', { currencyCode: 'USD' }],
    ['a malformed quoteId', { quoteId: 'Quote:x', currencyCode: 'USD' }],
    ['a missing currencyCode', { quoteId: RTF_QUOTE.id }],
    ['amount 0', { quoteId: RTF_QUOTE.id, currencyCode: 'USD', currencyAmount: 0 }],
    ['an unknown field', { quoteId: RTF_QUOTE.id, currencyCode: 'USD', memo: 'x' }],
  ])('refuses %s with 400 INVALID_INPUT and never calls payments', async (_n, body) => {
    const res = await post('/sandbox/send', body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ code: 'INVALID_INPUT' });
    expect(calls).toEqual([]);
  });

  it('renders QUOTE_EXPIRED as 409 and QUOTE_NOT_FOUND as 404', async () => {
    paymentsFail = new DomainError('ABORTED', 'QUOTE_EXPIRED', 'expired');
    const r1 = await post('/sandbox/send', { quoteId: RTF_QUOTE.id, currencyCode: 'USD' });
    expect(r1.statusCode).toBe(409);
    expect(r1.json()).toMatchObject({ code: 'QUOTE_EXPIRED' });
    paymentsFail = new DomainError('NOT_FOUND', 'QUOTE_NOT_FOUND', 'nope');
    expect((await post('/sandbox/send', { quoteId: newId('Quote'), currencyCode: 'USD' })).statusCode).toBe(
      404,
    );
  });
});
