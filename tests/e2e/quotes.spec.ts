/**
 * End to end: quotes through the real processes (gateway → payments → accounts),
 * USD → EUR to an external EUR account (a valid IBAN) and to a sandbox UMA
 * receiver, platform isolation, and execution: the balance debited exactly
 * totalSendingAmount once (20 concurrent executes), webhooks, a reconciled ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { eventually } from '@sluice/testing';
import { accounts as accountsPb } from '@sluice/contracts';
import { createRpcClient } from '@sluice/rpc';
import { apiClient, newCredential, startE2eStack, type Api, type E2eStack } from './support.js';

/** A German IBAN (mod-97 valid) whose account number is `account` (10 digits). */
function germanIban(account: string): string {
  const bban = `37040044${account}`;
  // Letters D=13, E=14; check digits = 98 − (bban + "DE00" as digits) mod 97.
  const numeric = `${bban}131400`;
  let rem = 0;
  for (const ch of numeric) rem = (rem * 10 + Number(ch)) % 97;
  return `DE${String(98 - rem).padStart(2, '0')}${bban}`;
}

describe('quotes through the real processes', () => {
  let e2e: E2eStack;
  let client: Api;
  let other: Api;
  const sandbox = newCredential();
  const production = newCredential();
  let customerId: string;
  let usdAccount: string;
  let eurExternal: string;
  let receiver: Server;
  const received: { type: string; data: any }[] = [];

  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    client(method, path, { body, headers });
  const balance = async () =>
    (
      await api(
        'GET',
        `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=USD`,
      )
    ).json.data[0].balance.amount as number;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const parsed = JSON.parse(body);
        received.push({ type: parsed.type, data: parsed.data });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const addr = receiver.address();
    const receiverUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/hooks`;
    // Sandbox settlement 1 s → 10 ms.
    e2e = await startE2eStack('e2equote', { sandbox, production }, { env: { SANDBOX_TIME_SCALE: '0.01' } });
    client = apiClient(e2e.stack, sandbox);
    other = apiClient(e2e.stack, production);
    const cfg = await api('PATCH', '/config', {
      webhookEndpoint: receiverUrl,
      supportedCurrencies: [{ currencyCode: 'USD' }, { currencyCode: 'EUR' }],
    });
    expect(cfg.status, cfg.text).toBe(200);
    const c = await api('POST', '/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'quote-user',
      fullName: 'Ada Lovelace',
      region: 'US',
      currencies: ['USD'],
    });
    expect(c.status, c.text).toBe(201);
    customerId = c.json.id;
    const accounts = await api(
      'GET',
      `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=USD`,
    );
    usdAccount = accounts.json.data[0].id;
    const ext = await api('POST', '/customers/external-accounts', {
      customerId,
      currency: 'EUR',
      accountInfo: {
        accountType: 'EUR_ACCOUNT',
        iban: germanIban('0532013000'),
        beneficiary: {
          beneficiaryType: 'INDIVIDUAL',
          fullName: 'Grace Hopper',
          address: { line1: '1 Hauptstr.', postalCode: '10115', country: 'DE' },
        },
      },
    });
    expect(ext.status, ext.text).toBe(201);
    eurExternal = ext.json.id;
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(usdAccount)}/fund`, {
      amount: 100_000,
    });
    expect(fund.status, fund.text).toBe(200);
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
    await new Promise((r) => receiver?.close(r));
  });

  it('executes USD → EUR once despite 20 concurrent executes: debited exactly totalSendingAmount, webhook, ledger reconciles', async () => {
    const q = await api('POST', '/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: usdAccount },
      destination: { destinationType: 'ACCOUNT', accountId: eurExternal },
      lockedCurrencySide: 'RECEIVING',
      lockedCurrencyAmount: 20_000,
    });
    expect(q.status, q.text).toBe(201);
    const total = q.json.totalSendingAmount as number;
    const id = encodeURIComponent(q.json.id);
    const first = await api('POST', `/quotes/${id}/execute`, undefined, { 'idempotency-key': 'exec-1' });
    expect(first.status, first.text).toBe(200);
    expect(first.json.transactionId).toMatch(/^Transaction:/);
    const more = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api('POST', `/quotes/${id}/execute`, undefined, { 'idempotency-key': `exec-c${i}` }),
      ),
    );
    for (const r of more) {
      expect(r.status, r.text).toBe(200);
      expect(r.json.transactionId).toBe(first.json.transactionId);
    }
    const done = await eventually(async () => {
      const r = await api('GET', `/quotes/${id}`);
      return r.json.status === 'COMPLETED' ? r.json : undefined;
    }, 30_000);
    expect(done.transactionId).toBe(first.json.transactionId);
    expect(await balance()).toBe(100_000 - total);
    const tx = await api('GET', `/transactions/${encodeURIComponent(first.json.transactionId)}`);
    expect(tx.json).toMatchObject({
      status: 'COMPLETED',
      quoteId: q.json.id,
      sentAmount: { amount: total, currency: { code: 'USD' } },
      receivedAmount: { amount: 20_000, currency: { code: 'EUR' } },
    });
    const hook = await eventually(
      async () =>
        received.find(
          (r) => r.type === 'OUTGOING_PAYMENT.COMPLETED' && r.data.id === first.json.transactionId,
        ),
      30_000,
    );
    expect(hook.data).toMatchObject({ quoteId: q.json.id, status: 'COMPLETED' });
    const ledger = createRpcClient(accountsPb.AccountsServiceClient, e2e.stack.grpc.accounts!, {
      defaultDeadlineMs: 10_000,
    });
    try {
      const rec = await ledger.reconcileLedger({ platformId: e2e.stack.platforms.sandbox!.platformId });
      expect(
        rec.consistent,
        JSON.stringify(rec, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
      ).toBe(true);
    } finally {
      ledger.close();
    }
  });

  it('sandbox outcomes by IBAN suffix: 002 and 004 fail with the funds released, 003 completes later, 005 is refused', async () => {
    const externalEnding = async (suffix: string) => {
      const r = await api('POST', '/customers/external-accounts', {
        customerId,
        currency: 'EUR',
        accountInfo: {
          accountType: 'EUR_ACCOUNT',
          iban: germanIban(`0532013${suffix}`),
          beneficiary: {
            beneficiaryType: 'INDIVIDUAL',
            fullName: 'Grace Hopper',
            address: { line1: '1 Hauptstr.', postalCode: '10115', country: 'DE' },
          },
        },
      });
      expect(r.status, r.text).toBe(201);
      return r.json.id as string;
    };
    const quoteTo = async (dst: string) => {
      const q = await api('POST', '/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: usdAccount },
        destination: { destinationType: 'ACCOUNT', accountId: dst },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 1_000,
      });
      expect(q.status, q.text).toBe(201);
      return q.json.id as string;
    };
    const settled = (id: string, status: string) =>
      eventually(async () => {
        const r = await api('GET', `/quotes/${encodeURIComponent(id)}`);
        return r.json.status === status ? r.json : undefined;
      }, 30_000);
    const before = await balance();
    const [q2, q3, q4, q5] = await Promise.all(
      ['002', '003', '004', '005'].map(async (sfx) => quoteTo(await externalEnding(sfx))),
    );
    for (const id of [q2, q3, q4]) {
      const r = await api('POST', `/quotes/${encodeURIComponent(id!)}/execute`);
      expect(r.status, r.text).toBe(200);
    }
    const refused = await api('POST', `/quotes/${encodeURIComponent(q5!)}/execute`);
    expect(refused.status).toBe(400);
    expect(refused.json.code).toBe('QUOTE_NOT_EXECUTABLE');
    const f2 = await settled(q2!, 'FAILED');
    const f4 = await settled(q4!, 'FAILED');
    const c3 = await settled(q3!, 'COMPLETED');
    const reasons = await Promise.all(
      [f2, f4].map(
        async (q) =>
          (await api('GET', `/transactions/${encodeURIComponent(q.transactionId)}`)).json.failureReason,
      ),
    );
    expect(reasons).toEqual(['QUOTE_EXECUTION_FAILED', 'COUNTERPARTY_POST_TX_FAILED']);
    expect(await balance()).toBe(before - c3.totalSendingAmount);
    await eventually(
      async () =>
        [f2, f4].every((q) =>
          received.some((r) => r.type === 'OUTGOING_PAYMENT.FAILED' && r.data.id === q.transactionId),
        ),
      30_000,
    );
  });

  it('quotes USD → EUR to an external account: exact amounts, fees, rate details, PENDING; GET reads it back', async () => {
    const r = await api('POST', '/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: usdAccount },
      destination: { destinationType: 'ACCOUNT', accountId: eurExternal },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10_000,
      purposeOfPayment: 'GIFT',
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({
      status: 'PENDING',
      source: { sourceType: 'ACCOUNT', accountId: usdAccount, customerId },
      destination: { destinationType: 'ACCOUNT', accountId: eurExternal, currency: 'EUR' },
      sendingCurrency: { code: 'USD', decimals: 2 },
      receivingCurrency: { code: 'EUR', decimals: 2 },
      totalSendingAmount: 10_000,
      feesIncluded: 40,
      totalReceivingAmount: 9_223,
      exchangeRate: 1.08,
      rateDetails: { gridApiFixedFee: 10, gridApiVariableFeeRate: 0.003, gridApiVariableFeeAmount: 30 },
    });
    expect(Date.parse(r.json.expiresAt) - Date.parse(r.json.createdAt)).toBe(120_000);
    const g = await api('GET', `/quotes/${encodeURIComponent(r.json.id)}`);
    expect(g.status, g.text).toBe(200);
    expect(g.json).toEqual(r.json);
    const foreign = await other('GET', `/quotes/${encodeURIComponent(r.json.id)}`);
    expect(foreign.status).toBe(404);
  });

  it('refuses a same-currency quote with a pointer to transfer-out', async () => {
    const usdExt = await api('POST', '/customers/external-accounts', {
      customerId,
      currency: 'USD',
      accountInfo: {
        accountType: 'USD_ACCOUNT',
        accountNumber: '12345678789',
        routingNumber: '021000021',
        beneficiary: {
          beneficiaryType: 'INDIVIDUAL',
          fullName: 'Ada Lovelace',
          address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
        },
      },
    });
    expect(usdExt.status, usdExt.text).toBe(201);
    const r = await api('POST', '/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: usdAccount },
      destination: { destinationType: 'ACCOUNT', accountId: usdExt.json.id },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10_000,
    });
    expect(r.status, r.text).toBe(400);
    expect(r.json.code).toBe('SAME_CURRENCY_QUOTE');
    expect(r.json.message).toContain('/transfer-out');
  });

  it('quotes a sandbox UMA receiver with its lookup, requiring the mandatory payer data', async () => {
    const lookup = await api(
      'GET',
      `/receiver/uma/${encodeURIComponent('$success.eur@sandbox.sluice.local')}`,
    );
    expect(lookup.status, lookup.text).toBe(200);
    const body = {
      lookupId: lookup.json.lookupId,
      source: { sourceType: 'ACCOUNT', accountId: usdAccount },
      destination: { destinationType: 'UMA_ADDRESS', umaAddress: '$success.eur@sandbox.sluice.local' },
      lockedCurrencySide: 'RECEIVING',
      lockedCurrencyAmount: 5_000,
    };
    const missing = await api('POST', '/quotes', body);
    expect(missing.status, missing.text).toBe(400);
    expect(missing.json.code).toBe('INVALID_INPUT');
    expect(JSON.stringify(missing.json.details)).toContain('senderCustomerInfo.FULL_NAME');
    const ok = await api('POST', '/quotes', { ...body, senderCustomerInfo: { FULL_NAME: 'Ada Lovelace' } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json).toMatchObject({
      totalReceivingAmount: 5_000,
      destination: { destinationType: 'UMA_ADDRESS', currency: 'EUR' },
      lookupId: lookup.json.lookupId,
    });
    const noLookup = await api('POST', '/quotes', { ...body, lookupId: undefined });
    expect(noLookup.status).toBe(400);
    expect(JSON.stringify(noLookup.json.details)).toContain('lookupId');
  });
});
