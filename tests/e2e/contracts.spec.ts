/**
 * One definition per public resource, proven through the real processes: the
 * `data` of a webhook and the REST response of the same resource in the same
 * state are equal (libs/api: one schema and one mapper per resource, used by the
 * gateway and by the owning service's event publisher alike). Sampled over
 * internal accounts after funding and payments, and over transactions in
 * several kinds and final states: a completed and a bank-rejected transfer-out,
 * a completed transfer-in, a completed cross-currency quote payment (rate
 * details, exchange rate, payout rail) and a returned-then-refunded one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { eventually } from '@sluice/testing';
import { germanIban } from '../../apps/accounts/src/domain/funding-instructions.js';
import { apiClient, newCredential, startE2eStack, type Api, type E2eStack } from './support.js';

interface Delivery {
  type: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- compared whole against the REST body
  data: any;
}

describe('a webhook carries the resource exactly as the REST API returns it', () => {
  let e2e: E2eStack;
  let api: Api;
  let receiver: Server;
  const received: Delivery[] = [];
  const sandbox = newCredential();
  let customerId: string;
  let usdAccount: string;

  const call = async (method: string, path: string, body?: unknown) => {
    const r = await api(method, path, { body, headers: { 'idempotency-key': `k-${Math.random()}` } });
    expect(r.status, `${method} ${path}: ${r.text}`).toBeLessThan(300);
    return r.json;
  };

  async function externalAccount(currency: 'USD' | 'EUR', identifier: string): Promise<string> {
    const accountInfo =
      currency === 'USD'
        ? { accountType: 'USD_ACCOUNT', accountNumber: identifier, routingNumber: '021000021' }
        : { accountType: 'EUR_ACCOUNT', iban: germanIban('37040044', identifier) };
    const r = await call('POST', '/customers/external-accounts', {
      customerId,
      currency,
      accountInfo: {
        ...accountInfo,
        beneficiary: {
          beneficiaryType: 'INDIVIDUAL',
          fullName: 'Ada Lovelace',
          address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
        },
      },
    });
    return r.id;
  }

  /** The transaction once in `status` (REST), and the webhook of type `type` that announced that state. */
  async function settled(transactionId: string, status: string, type: string) {
    const rest = await eventually(async () => {
      const t = await call('GET', `/transactions/${encodeURIComponent(transactionId)}`);
      return t.status === status ? t : undefined;
    }, 30_000);
    const hook = await eventually(
      async () => received.find((d) => d.type === type && d.data.id === transactionId),
      30_000,
    );
    return { rest, hook: hook.data };
  }

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
    const port = typeof addr === 'object' && addr ? addr.port : 0;
    e2e = await startE2eStack('e2econtract', { sandbox }, { env: { SANDBOX_TIME_SCALE: '0.01' } });
    api = apiClient(e2e.stack, sandbox);
    await call('PATCH', '/config', {
      webhookEndpoint: `http://127.0.0.1:${port}/hooks`,
      supportedCurrencies: [{ currencyCode: 'USD' }, { currencyCode: 'EUR' }],
    });
    customerId = (
      await call('POST', '/customers', {
        customerType: 'INDIVIDUAL',
        platformCustomerId: 'contract-user',
        fullName: 'Ada Lovelace',
        region: 'US',
        currencies: ['USD'],
      })
    ).id;
    usdAccount = (
      await call('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=USD`)
    ).data[0].id;
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
    await new Promise((r) => receiver?.close(r));
  });

  it('InternalAccount: INTERNAL_ACCOUNT.BALANCE_UPDATED equals the listed account, after funding and after a payment', async () => {
    const account = async () =>
      (await call('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=USD`))
        .data[0];
    const latestHook = (amount: number) =>
      eventually(
        async () =>
          received.find(
            (d) =>
              d.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' &&
              d.data.id === usdAccount &&
              d.data.balance.amount === amount,
          ),
        30_000,
      );
    await call('POST', `/sandbox/internal-accounts/${encodeURIComponent(usdAccount)}/fund`, { amount: 100_000 });
    const funded = await account();
    expect(funded.balance.amount).toBe(100_000);
    expect((await latestHook(100_000)).data).toEqual(funded);

    const t = await call('POST', '/transfer-out', {
      source: { accountId: usdAccount },
      destination: { accountId: await externalAccount('USD', '99990000123') },
      amount: 2_500,
    });
    await settled(t.id, 'COMPLETED', 'OUTGOING_PAYMENT.COMPLETED');
    const paid = await eventually(async () => {
      const a = await account();
      return a.balance.amount === 97_500 ? a : undefined;
    }, 30_000);
    expect((await latestHook(97_500)).data).toEqual(paid);
  });

  it('Transaction: transfer-out COMPLETED and FAILED (rejected by the bank), transfer-in COMPLETED', async () => {
    const ok = await call('POST', '/transfer-out', {
      source: { accountId: usdAccount },
      destination: { accountId: await externalAccount('USD', '99990000200') },
      amount: 1_000,
      description: 'rent',
    });
    const completed = await settled(ok.id, 'COMPLETED', 'OUTGOING_PAYMENT.COMPLETED');
    expect(completed.hook).toEqual(completed.rest);

    const rejected = await call('POST', '/transfer-out', {
      source: { accountId: usdAccount },
      destination: { accountId: await externalAccount('USD', '99990000004') },
      amount: 1_000,
    });
    const failed = await settled(rejected.id, 'FAILED', 'OUTGOING_PAYMENT.FAILED');
    expect(failed.rest.failureReason).toBeDefined();
    expect(failed.hook).toEqual(failed.rest);

    const pull = await call('POST', '/transfer-in', {
      source: { accountId: await externalAccount('USD', '99990000300') },
      destination: { accountId: usdAccount },
      amount: 3_000,
    });
    const credited = await settled(pull.id, 'COMPLETED', 'INCOMING_PAYMENT.COMPLETED');
    expect(credited.hook).toEqual(credited.rest);
  });

  it('Transaction: a cross-currency quote payment COMPLETED, and one returned by the bank then REFUNDED', async () => {
    const pay = async (identifier: string) => {
      const q = await call('POST', '/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: usdAccount },
        destination: { destinationType: 'ACCOUNT', accountId: await externalAccount('EUR', identifier) },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 1_500,
      });
      return (await call('POST', `/quotes/${encodeURIComponent(q.id)}/execute`)).transactionId as string;
    };
    const done = await settled(await pay('0532013000'), 'COMPLETED', 'OUTGOING_PAYMENT.COMPLETED');
    expect(done.rest).toMatchObject({ destination: { paymentRail: expect.any(String) } });
    expect(done.rest.rateDetails).toBeDefined();
    expect(done.hook).toEqual(done.rest);

    // Sandbox 005: completes, is returned by the receiving bank, and the refund completes (REFUNDED).
    const refunded = await settled(await pay('0532013005'), 'REFUNDED', 'OUTGOING_PAYMENT.REFUND_COMPLETED');
    expect(refunded.rest.refund).toMatchObject({ status: 'COMPLETED' });
    expect(refunded.hook).toEqual(refunded.rest);
  });
});
