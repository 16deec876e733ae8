/**
 * End to end: the defects generated bad input found (issue 9, "Defects found by
 * generated bad input"), each proven fixed through the real processes
 * (gateway → payments / accounts / identity → Postgres):
 * - one request with a 50 kB+ string cannot stall payments for anyone: the
 *   gateway bounds every string, and a service error that echoes one travels
 *   bounded (a direct gRPC call proves the second layer);
 * - an amount is decided from the JSON text: `100.000000000000001` moves nothing;
 * - control characters and lone surrogates never reach Postgres, and a failed
 *   statement never reaches a log with its values;
 * - a body where none is taken, an encoded body, an unknown query parameter,
 *   the framework's own 414 / 431 / bad-URL answers: all in the error model;
 * - a list cursor only works for the platform, list and filters it came from.
 * Every refusal leaves the world (balances, list totals, the config) as it was.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { common, payments as paymentsPb } from '@sluice/contracts';
import { isDomainError, newId } from '@sluice/core';
import { createRpcClient } from '@sluice/rpc';
import { apiClient, newCredential, startE2eStack, type Api, type ApiResponse, type E2eStack } from './support.js';

const BIG = 'U'.repeat(60_000);

describe('bad input at the edge, through the real processes', () => {
  let e2e: E2eStack;
  let api: Api;
  let other: Api;
  const sandbox = newCredential();
  const production = newCredential();
  let alice: string;
  let aliceUsd: string;
  let aliceUsdExt: string;
  let aliceEurExt: string;
  let realtimeQuote: string;

  const ok = async (r: Promise<ApiResponse>) => {
    const res = await r;
    expect(res.status, res.text).toBeLessThan(300);
    return res.json;
  };

  /** 400 INVALID_INPUT naming `field`. */
  const refused = (res: ApiResponse, field: string) => {
    expect(res.status, res.text).toBe(400);
    expect(res.json).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
    expect(res.json.details.errors.map((e: { field: string }) => e.field), res.text).toContain(field);
  };

  /** What bad input could have moved: every balance, the list totals of both platforms, the config. */
  const world = async () => {
    const [customers, platform, transactions, prodTransactions, config] = await Promise.all([
      ok(api('GET', '/customers/internal-accounts?limit=100')),
      ok(api('GET', '/platform/internal-accounts?limit=100')),
      ok(api('GET', '/transactions?limit=1')),
      ok(other('GET', '/transactions?limit=1')),
      ok(api('GET', '/config')),
    ]);
    return {
      balances: [...customers.data, ...platform.data].map((a: any) => `${a.id} ${a.balance.amount}`),
      transactions: [transactions.totalCount, prodTransactions.totalCount],
      config,
    };
  };

  beforeAll(async () => {
    e2e = await startE2eStack('e2eedge', { sandbox, production }, { migrate: false });
    api = apiClient(e2e.stack, sandbox);
    other = apiClient(e2e.stack, production);
    await ok(api('PATCH', '/config', { body: { supportedCurrencies: [{ currencyCode: 'USD' }, { currencyCode: 'EUR' }] } }));
    alice = (
      await ok(
        api('POST', '/customers', {
          body: { customerType: 'INDIVIDUAL', platformCustomerId: 'edge-alice', fullName: 'Ada Lovelace', currencies: ['USD', 'EUR'] },
        }),
      )
    ).id;
    await ok(api('POST', '/customers', { body: { customerType: 'INDIVIDUAL', platformCustomerId: 'edge-bob', currencies: ['USD'] } }));
    const accounts = (await ok(api('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(alice)}`))).data;
    aliceUsd = accounts.find((a: any) => a.balance.currency.code === 'USD').id;
    await ok(api('POST', `/sandbox/internal-accounts/${encodeURIComponent(aliceUsd)}/fund`, { body: { amount: 100_000 } }));
    const beneficiary = { beneficiaryType: 'INDIVIDUAL', fullName: 'Ada Lovelace', address: { line1: '1 Main St', postalCode: '94105', country: 'US' } };
    aliceUsdExt = (
      await ok(
        api('POST', '/customers/external-accounts', {
          body: {
            customerId: alice,
            currency: 'USD',
            accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: '12345678789', routingNumber: '021000021', beneficiary },
          },
        }),
      )
    ).id;
    aliceEurExt = (
      await ok(
        api('POST', '/customers/external-accounts', {
          body: { customerId: alice, currency: 'EUR', accountInfo: { accountType: 'EUR_ACCOUNT', iban: 'DE89370400440532013000', beneficiary } },
        }),
      )
    ).id;
    realtimeQuote = (
      await ok(
        api('POST', '/quotes', {
          body: {
            source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', customerId: alice },
            destination: { destinationType: 'ACCOUNT', accountId: aliceEurExt },
            lockedCurrencySide: 'SENDING',
            lockedCurrencyAmount: 3_000,
          },
        }),
      )
    ).id;
  }, 180_000);

  afterAll(async () => {
    await e2e?.stop();
  });

  it('a 60 kB string cannot stall payments: refused at once, and other callers are served meanwhile', async () => {
    const before = await world();
    const quote = (over: Record<string, unknown>) => ({
      source: { sourceType: 'ACCOUNT', accountId: aliceUsd },
      destination: { destinationType: 'ACCOUNT', accountId: aliceEurExt },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 1_000,
      ...over,
    });
    const cases: [string, string, unknown, string][] = [
      ['POST', '/sandbox/send', { quoteId: realtimeQuote, currencyCode: BIG }, 'currencyCode'],
      ['POST', '/quotes', quote({ source: { sourceType: 'REALTIME_FUNDING', currency: BIG } }), 'source.currency'],
      [
        'POST',
        '/quotes',
        quote({ source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', cryptoNetwork: BIG } }),
        'source.cryptoNetwork',
      ],
      [
        'POST',
        '/quotes',
        quote({ destination: { destinationType: 'UMA_ADDRESS', umaAddress: '$success.eur@sandbox.sluice.local', currency: BIG } }),
        'destination.currency',
      ],
      ['POST', '/quotes', quote({ destination: { destinationType: 'ACCOUNT', accountId: BIG } }), 'destination.accountId'],
    ];
    for (const [method, path, body, field] of cases) {
      const started = Date.now();
      // Another platform's unrelated payments call, at the same moment.
      const [bad, unrelated] = await Promise.all([api(method, path, { body }), other('GET', '/transactions?limit=1')]);
      expect(Date.now() - started, `${path} ${field}`).toBeLessThan(3_000);
      refused(bad, field);
      expect(bad.text.length, 'the value is not echoed').toBeLessThan(2_000);
      expect(unrelated.status, unrelated.text).toBe(200);
    }

    // Behind the gateway: payments itself refusing a 60 kB value answers at once, bounded,
    // and the channel keeps serving (before the fix: a 5 s deadline, then the channel broken).
    const payments = createRpcClient(paymentsPb.PaymentsServiceClient, e2e.stack.grpc.payments!, {
      defaultDeadlineMs: 5_000,
    });
    try {
      const started = Date.now();
      const err = await payments
        .sandboxSend({
          platformId: e2e.stack.platforms.sandbox!.platformId,
          environment: common.Environment.SANDBOX,
          quoteId: realtimeQuote,
          currencyCode: BIG,
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(isDomainError(err), String(err)).toBe(true);
      expect((err as Error).message.length).toBeLessThanOrEqual(500);
      const again = await payments.getQuote({
        platformId: e2e.stack.platforms.sandbox!.platformId,
        quoteId: realtimeQuote,
      });
      expect(again.quote?.status).toBe('PENDING');
    } finally {
      payments.close();
    }
    expect((await api('GET', `/quotes/${encodeURIComponent(realtimeQuote)}`)).status).toBe(200);
    expect(await world()).toEqual(before);
  });

  it('an amount with a fraction or an exponent moves nothing, whatever JavaScript reads', async () => {
    const before = await world();
    const raw = (path: string, json: string) => api('POST', path, { raw: json });
    refused(await raw(`/sandbox/internal-accounts/${encodeURIComponent(aliceUsd)}/fund`, '{"amount":100.000000000000001}'), 'amount');
    refused(await raw(`/sandbox/internal-accounts/${encodeURIComponent(aliceUsd)}/fund`, '{"amount":1e2}'), 'amount');
    refused(
      await raw(
        '/transfer-out',
        `{"source":{"accountId":"${aliceUsd}"},"destination":{"accountId":"${aliceUsdExt}"},"amount":100.000000000000001}`,
      ),
      'amount',
    );
    const alicesUma = (await ok(api('GET', `/customers/${encodeURIComponent(alice)}`))).umaAddress;
    refused(
      await raw(
        '/sandbox/uma/receive',
        `{"senderUmaAddress":"$success.usd@sandbox.sluice.local","receiverUmaAddress":"${alicesUma}","receivingCurrencyCode":"USD","receivingCurrencyAmount":100.0}`,
      ),
      'receivingCurrencyAmount',
    );
    refused(
      await raw(
        '/quotes',
        `{"source":{"sourceType":"ACCOUNT","accountId":"${aliceUsd}"},"destination":{"destinationType":"ACCOUNT","accountId":"${aliceEurExt}"},"lockedCurrencySide":"SENDING","lockedCurrencyAmount":1000.0}`,
      ),
      'lockedCurrencyAmount',
    );
    expect(await world()).toEqual(before);
    // Written as an integer, the same amount moves.
    const funded = await raw(`/sandbox/internal-accounts/${encodeURIComponent(aliceUsd)}/fund`, '{"amount":100}');
    expect(funded.status, funded.text).toBe(200);
  });

  it('control characters and lone surrogates never reach Postgres; a failed statement never reaches a log', async () => {
    const before = await world();
    const transfer = (description: string) =>
      api('POST', '/transfer-out', {
        body: { source: { accountId: aliceUsd }, destination: { accountId: aliceUsdExt }, amount: 100, description },
      });
    refused(await transfer('rent \u0000'), 'description');
    refused(await transfer('tab\there'), 'description');
    refused(
      await api('POST', '/transfer-out', {
        raw: `{"source":{"accountId":"${aliceUsd}"},"destination":{"accountId":"${aliceUsdExt}"},"amount":100,"description":"\\ud800"}`,
      }),
      'description',
    );
    refused(
      await api('POST', '/quotes', {
        body: {
          source: { sourceType: 'ACCOUNT', accountId: aliceUsd },
          destination: { destinationType: 'ACCOUNT', accountId: aliceEurExt },
          lockedCurrencySide: 'SENDING',
          lockedCurrencyAmount: 1_000,
          description: 'x\u0000',
        },
      }),
      'description',
    );
    for (const filter of [
      'reference',
      'customerId',
      'platformCustomerId',
      'accountIdentifier',
      'senderAccountIdentifier',
      'receiverAccountIdentifier',
    ])
      refused(await api('GET', `/transactions?${filter}=%00`), filter);
    refused(await api('GET', '/customers?platformCustomerId=a%00'), 'platformCustomerId');
    refused(await api('GET', `/customers/${encodeURIComponent(alice)}%00`), 'customerId');
    expect(await world()).toEqual(before);

    // Behind the gateway, a NUL that reaches payments' SQL fails without the statement in its log.
    const marker = `secret-${newId('Request')}`;
    const payments = createRpcClient(paymentsPb.PaymentsServiceClient, e2e.stack.grpc.payments!, {
      defaultDeadlineMs: 5_000,
    });
    try {
      await payments
        .listTransactions({
          platformId: e2e.stack.platforms.sandbox!.platformId,
          reference: `${marker}\u0000`,
          sortOrder: paymentsPb.SortOrder.DESC,
        })
        .catch(() => undefined);
    } finally {
      payments.close();
    }
    await new Promise((r) => setTimeout(r, 300));
    const log = e2e.stack.logs('payments', 500).join('\n');
    expect(log).not.toContain(marker);
    expect(log).not.toMatch(/select .* from .*transactions/i);
  });

  it('bodies where none is taken, encoded bodies and unknown query parameters are refused', async () => {
    const before = await world();
    for (const raw of ['[]', '42', '{"force":true}', '['.repeat(200_000) + ']'.repeat(200_000)]) {
      const res = await api('POST', '/config/webhook-secret/rotate', { raw });
      expect(res.status, raw.slice(0, 20)).toBe(400);
      expect(res.json).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
    }
    const gzip = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(aliceUsd)}/fund`, {
      raw: '{"amount":100}',
      headers: { 'content-encoding': 'gzip' },
    });
    expect(gzip.status).toBe(415);
    expect(gzip.json).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    refused(await api('GET', '/config?include=secrets'), 'include');
    refused(await api('GET', `/quotes/${encodeURIComponent(realtimeQuote)}?expand=1`), 'expand');
    refused(await api('GET', `/customers/${encodeURIComponent(alice)}?x=1`), 'x');
    expect(await world()).toEqual(before);
  });

  it("the framework's own 414, 431 and bad-URL answers are in the error model", async () => {
    const long = await api('GET', `/quotes/${'q'.repeat(600)}`);
    expect(long.status).toBe(414);
    expect(long.json).toEqual({ status: 414, code: 'URI_TOO_LONG', message: expect.any(String) });
    const bad = await api('GET', '/quotes/%E0%A4%A');
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ status: 400, code: 'BAD_REQUEST', message: expect.any(String) });
    const url = new URL(`${e2e.stack.baseUrl}/config`);
    const huge = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        { host: url.hostname, port: url.port, path: url.pathname, headers: { 'x-filler': 'x'.repeat(40_000) } },
        (r) => {
          let body = '';
          r.on('data', (c) => (body += c));
          r.on('end', () => resolve({ status: r.statusCode!, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(huge.status).toBe(431);
    expect(JSON.parse(huge.body)).toEqual({ status: 431, code: 'REQUEST_HEADERS_TOO_LARGE', message: expect.any(String) });
  });

  it('a cursor only works for the platform, list and filters it came from', async () => {
    const page1 = await ok(api('GET', '/customers?limit=1'));
    expect(page1.hasMore).toBe(true);
    const cursor = encodeURIComponent(page1.nextCursor);
    const page2 = await ok(api('GET', `/customers?limit=1&cursor=${cursor}`));
    expect(page2.data[0].id).not.toBe(page1.data[0].id);
    refused(await api('GET', `/customers/external-accounts?cursor=${cursor}`), 'cursor');
    refused(await api('GET', `/transactions?cursor=${cursor}`), 'cursor');
    refused(await api('GET', `/customers?customerType=BUSINESS&cursor=${cursor}`), 'cursor');
    refused(await other('GET', `/customers?limit=1&cursor=${cursor}`), 'cursor');
    const [payload, tag] = (page1.nextCursor as string).split('.');
    const position = JSON.parse(Buffer.from(Buffer.from(payload!, 'base64url').toString(), 'base64url').toString());
    const edited = Buffer.from(
      Buffer.from(JSON.stringify({ ...position, k: '2000-01-01T00:00:00.000Z' })).toString('base64url'),
    ).toString('base64url');
    refused(await api('GET', `/customers?limit=1&cursor=${edited}.${tag}`), 'cursor');
  });
});
