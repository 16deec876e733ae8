import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { common, payments as pb } from '@sluice/contracts';
import { DomainError, newId } from '@sluice/core';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import { startService, type RunningService } from '@sluice/runtime';
import {
  createTestDatabase,
  dropStreams,
  eventually,
  natsUrl,
  testPrefix,
  type TestDatabase,
} from '@sluice/testing';
import {
  definePaymentsService,
  type ExternalAccountInfo,
  type PaymentsConfig,
  type PaymentsGraph,
} from '../src/index.js';
import { FakeAccounts } from './support/fake-accounts.js';
import { FakeCustomers } from './support/fake-customers.js';
import { FakeLedger } from './support/fake-ledger.js';
import { FakeWalletSignatures } from './support/fake-wallet-signatures.js';

// Quotes over real gRPC and Postgres; accounts, ledger and identity are in-memory fakes.

const SANDBOX = common.Environment.SANDBOX;
const platformId = newId('Platform');
const otherPlatformId = newId('Platform');
const customerId = newId('Customer');
const otherCustomerId = newId('Customer');
const UMA_DOMAIN = 'sandbox.sluice.local';

const accountsFake = new FakeAccounts();
const { internal, external, embeddedWallets } = accountsFake;
const ledgerFake = new FakeLedger();
const customersFake = new FakeCustomers(
  new Map([
    [customerId, { platformCustomerId: 'pc-1' }],
    [otherCustomerId, { platformCustomerId: 'pc-1' }],
  ]),
);
const walletSignaturesFake = new FakeWalletSignatures();

function addInternal(
  currency = 'USD',
  owner: string | null = customerId,
  p = platformId,
  balance = 1_000_000n,
) {
  const id = newId('InternalAccount');
  internal.set(id, { id, currency, platformId: p, ...(owner ? { customerId: owner } : {}) });
  ledgerFake.posted.set(id, balance);
  return id;
}
function addExternal(
  currency = 'EUR',
  owner: string | null = customerId,
  status: ExternalAccountInfo['status'] = 'ACTIVE',
  identifier = 'DE89370400440532013000',
) {
  const id = newId('ExternalAccount');
  external.set(id, {
    id,
    currency,
    platformId,
    status,
    accountType: `${currency}_ACCOUNT`,
    primaryIdentifier: identifier,
    ...(owner ? { customerId: owner } : {}),
  });
  return id;
}

let db: TestDatabase;
let prefix: string;
let running: RunningService<PaymentsConfig, PaymentsGraph>;
let client: PromiseClient<pb.PaymentsServiceClient>;
let sql: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase('quotes');
  prefix = testPrefix('quotes');
  running = (await startService(
    definePaymentsService({
      accounts: accountsFake,
      ledger: ledgerFake,
      customers: customersFake,
      walletSignatures: walletSignaturesFake,
    }),
    {
      DATABASE_URL: db.url,
      NATS_URL: await natsUrl(),
      EVENT_SUBJECT_PREFIX: prefix,
      GRPC_PORT: '0',
      JOB_POLL_MS: '20',
      // Sandbox settlement 1 s → 10 ms.
      SANDBOX_TIME_SCALE: '0.01',
      SANDBOX_UMA_DOMAIN: UMA_DOMAIN,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    },
  )) as never;
  client = createRpcClient(pb.PaymentsServiceClient, `127.0.0.1:${running.port}`, {
    defaultDeadlineMs: 5000,
  });
  sql = new pg.Pool({ connectionString: db.url, max: 2 });
});

afterAll(async () => {
  client?.close();
  await running?.stop();
  await sql?.end();
  await dropStreams(await natsUrl(), prefix);
  await db?.drop();
});

async function rejection(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (e) {
    return e as DomainError;
  }
  throw new Error('expected a rejection');
}
const fields = (e: DomainError) => (e.details!.errors as { field: string }[]).map((x) => x.field);
const quoteCount = async () =>
  Number((await sql.query('SELECT count(*) AS n FROM payments.quotes')).rows[0].n);

function base(over: Partial<pb.CreateQuoteRequest> = {}): pb.CreateQuoteRequest {
  return {
    platformId,
    environment: SANDBOX,
    sourceKind: 'ACCOUNT',
    sourceAccountId: over.sourceAccountId ?? addInternal('USD'),
    destinationKind: 'ACCOUNT',
    destinationAccountId: over.destinationAccountId ?? addExternal('EUR'),
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 10_000n,
    immediatelyExecute: false,
    senderCustomerInfoJson: '',
    ...over,
  };
}

describe('CreateQuote / GetQuote', () => {
  it('locks SENDING amounts exactly: fees included, rate details, exchange rate, expiry, PENDING', async () => {
    const { quote } = await client.createQuote(
      base({ description: 'Invoice 7', purposeOfPayment: 'GOODS_OR_SERVICES' }),
    );
    const q = quote!;
    expect(q.id).toMatch(/^Quote:/);
    expect(q.status).toBe('PENDING');
    // 10000 cents: variable fee floor(10000 × 0.003) = 30, fixed 10 → fees 40; 9960 converted at 1.08 USD/EUR,
    // rounded up for the customer: ceil(9960 / 1.08) = 9223 EUR cents.
    expect(q.totalSendingAmount).toBe(10_000n);
    expect(q.feesIncluded).toBe(40n);
    expect(q.totalReceivingAmount).toBe(9_223n);
    expect(q.exchangeRate).toBe('1.08');
    expect(q.rateDetails).toMatchObject({
      gridApiFixedFee: 10n,
      gridApiVariableFeeRate: '0.003',
      gridApiVariableFeeAmount: 30n,
      counterpartyFixedFee: 0n,
    });
    expect(q.source).toMatchObject({ kind: 'ACCOUNT', currency: 'USD' });
    expect(q.destination).toMatchObject({ kind: 'ACCOUNT', currency: 'EUR' });
    expect(q.customerId).toBe(customerId);
    expect(q.description).toBe('Invoice 7');
    expect(q.purposeOfPayment).toBe('GOODS_OR_SERVICES');
    expect(q.expiresAt!.getTime() - q.createdAt!.getTime()).toBe(120_000);
    const { quote: again } = await client.getQuote({ platformId, quoteId: q.id });
    expect(again).toEqual(q);
  });

  it('locks RECEIVING amounts: the receiver gets exactly the amount, the sender pays the smallest total', async () => {
    const { quote } = await client.createQuote(
      base({ lockedCurrencySide: 'RECEIVING', lockedCurrencyAmount: 10_000n }),
    );
    const q = quote!;
    expect(q.totalReceivingAmount).toBe(10_000n);
    // 10000 EUR cents = 10800 USD cents converted; total T is the smallest with T − 10 − floor(0.003 T) = 10800.
    const T = q.totalSendingAmount;
    expect(T - 10n - (T * 3n) / 1000n).toBe(10_800n);
    expect(T - 1n - 10n - ((T - 1n) * 3n) / 1000n).toBeLessThan(10_800n);
    expect(q.feesIncluded).toBe(T - 10_800n);
  });

  it('answers QUOTE_NOT_FOUND for another platform’s and unknown quotes', async () => {
    const { quote } = await client.createQuote(base());
    expect((await rejection(client.getQuote({ platformId: otherPlatformId, quoteId: quote!.id }))).code).toBe(
      'QUOTE_NOT_FOUND',
    );
    expect((await rejection(client.getQuote({ platformId, quoteId: newId('Quote') }))).code).toBe(
      'QUOTE_NOT_FOUND',
    );
  });

  it('refuses same-currency quotes, pointing to transfer-in/out, and creates nothing', async () => {
    const before = await quoteCount();
    const e = await rejection(client.createQuote(base({ destinationAccountId: addExternal('USD') })));
    expect(e.code).toBe('SAME_CURRENCY_QUOTE');
    expect(e.message).toContain('/transfer-out');
    expect(await quoteCount()).toBe(before);
  });

  it.each<[string, Partial<pb.CreateQuoteRequest>, string]>([
    ['a malformed source id', { sourceAccountId: 'InternalAccount:nope' }, 'source.accountId'],
    ['a malformed source customer', { sourceCustomerId: 'x' }, 'source.customerId'],
    ['an unknown destination type', { destinationKind: 'CARD' }, 'destination.destinationType'],
    [
      'a destination that is not an account id',
      { destinationAccountId: newId('Customer') },
      'destination.accountId',
    ],
    [
      'a bad UMA address',
      { destinationKind: 'UMA_ADDRESS', destinationUmaAddress: 'bob' },
      'destination.umaAddress',
    ],
    ['an unknown locked side', { lockedCurrencySide: 'BOTH' }, 'lockedCurrencySide'],
    ['a zero amount', { lockedCurrencyAmount: 0n }, 'lockedCurrencyAmount'],
    ['an amount over the maximum', { lockedCurrencyAmount: 9_000_000_000_000_001n }, 'lockedCurrencyAmount'],
    ['a malformed lookup id', { lookupId: 'Lookup:1' }, 'lookupId'],
    ['an unknown purpose', { purposeOfPayment: 'FUN' }, 'purposeOfPayment'],
    ['non-object payer data', { senderCustomerInfoJson: '[1]' }, 'senderCustomerInfo'],
    ['an unknown source type', { sourceKind: 'CARD' }, 'source.sourceType'],
    [
      'real-time funding without a currency',
      { sourceKind: 'REALTIME_FUNDING', sourceAccountId: '' },
      'source.currency',
    ],
    [
      'real-time funding in an unknown currency',
      { sourceKind: 'REALTIME_FUNDING', sourceAccountId: '', sourceCurrency: 'XYZ' },
      'source.currency',
    ],
    [
      'immediate execution of a real-time-funded quote',
      {
        sourceKind: 'REALTIME_FUNDING',
        sourceAccountId: '',
        sourceCurrency: 'USD',
        immediatelyExecute: true,
      },
      'immediatelyExecute',
    ],
    [
      'a UMA destination without lookupId',
      { destinationKind: 'UMA_ADDRESS', destinationUmaAddress: `$success.eur@${UMA_DOMAIN}` },
      'lookupId',
    ],
    [
      'a source customer who does not own the account',
      { sourceCustomerId: otherCustomerId },
      'source.customerId',
    ],
    [
      'an external account of another customer',
      { destinationAccountId: addExternal('EUR', otherCustomerId) },
      'destination.accountId',
    ],
  ])('%s → INVALID_INPUT naming the field, nothing created', async (_n, patch, field) => {
    const before = await quoteCount();
    const e = await rejection(client.createQuote(base(patch)));
    expect(e.code).toBe('INVALID_INPUT');
    expect(fields(e)).toContain(field);
    expect(await quoteCount()).toBe(before);
  });

  it('passes account errors through and refuses inactive destinations and tiny amounts', async () => {
    expect(
      (await rejection(client.createQuote(base({ sourceAccountId: newId('InternalAccount') })))).code,
    ).toBe('INTERNAL_ACCOUNT_NOT_FOUND');
    expect(
      (
        await rejection(
          client.createQuote(base({ sourceAccountId: addInternal('USD', customerId, otherPlatformId) })),
        )
      ).code,
    ).toBe('INTERNAL_ACCOUNT_NOT_FOUND');
    expect(
      (await rejection(client.createQuote(base({ destinationAccountId: newId('ExternalAccount') })))).code,
    ).toBe('EXTERNAL_ACCOUNT_NOT_FOUND');
    expect(
      (
        await rejection(
          client.createQuote(base({ destinationAccountId: addExternal('EUR', customerId, 'PENDING') })),
        )
      ).code,
    ).toBe('EXTERNAL_ACCOUNT_NOT_USABLE');
    // 50 cents: under the 1.00 minimum.
    expect((await rejection(client.createQuote(base({ lockedCurrencyAmount: 50n })))).code).toBe(
      'AMOUNT_OUT_OF_RANGE',
    );
  });

  it('pays an internal account of another currency', async () => {
    const dest = addInternal('MXN', otherCustomerId);
    const { quote } = await client.createQuote(base({ destinationAccountId: dest }));
    expect(quote!.destination).toMatchObject({ kind: 'ACCOUNT', accountId: dest, currency: 'MXN' });
  });
});

describe('UMA destinations', () => {
  const lookup = async (receiver: string) =>
    (
      await client.lookupUmaReceiver({
        platformId,
        environment: SANDBOX,
        receiverUmaAddress: `$${receiver}@${UMA_DOMAIN}`,
        sendingCurrency: 'USD',
      })
    ).lookup!;
  const uma = (receiver: string, over: Partial<pb.CreateQuoteRequest>) =>
    base({ destinationKind: 'UMA_ADDRESS', destinationUmaAddress: `$${receiver}@${UMA_DOMAIN}`, ...over });

  it('requires every mandatory payer-data field of the lookup, naming the missing ones', async () => {
    const l = await lookup('success.eur');
    const e = await rejection(client.createQuote(uma('success.eur', { lookupId: l.id })));
    expect(e.code).toBe('INVALID_INPUT');
    expect(fields(e)).toEqual(['senderCustomerInfo.FULL_NAME']);
    const { quote } = await client.createQuote(
      uma('success.eur', { lookupId: l.id, senderCustomerInfoJson: JSON.stringify({ FULL_NAME: 'Ada L' }) }),
    );
    expect(quote!.destination).toMatchObject({ kind: 'UMA_ADDRESS', currency: 'EUR' });
    expect(quote!.destination!.umaAddress).toBe(`$success.eur@${UMA_DOMAIN}`);
    expect(quote!.lookupId).toBe(l.id);
    expect(quote!.totalReceivingAmount).toBe(9_223n);
  });

  it('refuses a mandatory payer-data field given as no usable value (a number, an array, an empty object)', async () => {
    const l = await lookup('success.eur');
    for (const bad of [5, ['Ada'], {}, true]) {
      const e = await rejection(
        client.createQuote(
          uma('success.eur', { lookupId: l.id, senderCustomerInfoJson: JSON.stringify({ FULL_NAME: bad }) }),
        ),
      );
      expect(e.code).toBe('INVALID_INPUT');
      expect(fields(e)).toEqual(['senderCustomerInfo.FULL_NAME']);
      expect((e.details!.errors as { message: string }[])[0]!.message).toMatch(/non-blank string/);
    }
  });

  it("destination.paymentRail: one of the account type's rails, the default when absent; refused for internal accounts and other types", async () => {
    const eur = addExternal('EUR');
    const byDefault = (await client.createQuote(base({ destinationAccountId: eur }))).quote!;
    expect(byDefault.destination).toMatchObject({
      kind: 'ACCOUNT',
      accountId: eur,
      paymentRail: 'SEPA_INSTANT',
    });
    const sepa = (
      await client.createQuote(base({ destinationAccountId: eur, destinationPaymentRail: 'SEPA' }))
    ).quote!;
    expect(sepa.destination!.paymentRail).toBe('SEPA');
    expect((await client.getQuote({ platformId, quoteId: sepa.id })).quote!.destination!.paymentRail).toBe(
      'SEPA',
    );
    const before = await quoteCount();
    const ach = await rejection(
      client.createQuote(base({ destinationAccountId: eur, destinationPaymentRail: 'ACH' })),
    );
    expect(ach.code).toBe('INVALID_INPUT');
    expect(fields(ach)).toEqual(['destination.paymentRail']);
    expect((ach.details!.errors as { message: string }[])[0]!.message).toContain('SEPA_INSTANT, SEPA');
    const unknown = await rejection(
      client.createQuote(base({ destinationAccountId: eur, destinationPaymentRail: 'TELEGRAPH' })),
    );
    expect(fields(unknown)).toEqual(['destination.paymentRail']);
    const internal = await rejection(
      client.createQuote(
        base({ destinationAccountId: addInternal('EUR', otherCustomerId), destinationPaymentRail: 'SEPA' }),
      ),
    );
    expect(fields(internal)).toEqual(['destination.paymentRail']);
    expect(await quoteCount()).toBe(before);
  });

  it('names every missing field (compliance receiver needs BIRTH_DATE too)', async () => {
    const l = await lookup('fail.compliance.usd');
    const e = await rejection(
      client.createQuote(uma('fail.compliance.usd', { lookupId: l.id, sourceAccountId: addInternal('EUR') })),
    );
    expect(fields(e).sort()).toEqual(['senderCustomerInfo.BIRTH_DATE', 'senderCustomerInfo.FULL_NAME']);
  });

  it('refuses unknown, expired and mismatched lookups, and currencies the receiver does not take', async () => {
    const info = JSON.stringify({ FULL_NAME: 'Ada L' });
    expect(
      (
        await rejection(
          client.createQuote(uma('success.eur', { lookupId: newId('Lookup'), senderCustomerInfoJson: info })),
        )
      ).code,
    ).toBe('LOOKUP_REQUEST_NOT_FOUND');
    const other = await lookup('success.mxn');
    const mismatch = await rejection(
      client.createQuote(uma('success.eur', { lookupId: other.id, senderCustomerInfoJson: info })),
    );
    expect(mismatch.code).toBe('INVALID_INPUT');
    expect(fields(mismatch)).toEqual(['lookupId']);
    const eur = await lookup('success.eur');
    const wrongCurrency = await rejection(
      client.createQuote(
        uma('success.eur', { lookupId: eur.id, destinationCurrency: 'GBP', senderCustomerInfoJson: info }),
      ),
    );
    expect(wrongCurrency.code).toBe('UNSUPPORTED_CURRENCY');
    await sql.query(
      `UPDATE payments.receiver_lookups SET created_at = now() - interval '2 hours', expires_at = now() - interval '1 hour' WHERE id = $1`,
      [eur.id],
    );
    expect(
      (
        await rejection(
          client.createQuote(uma('success.eur', { lookupId: eur.id, senderCustomerInfoJson: info })),
        )
      ).code,
    ).toBe('LOOKUP_EXPIRED');
  });
});

describe('expiry', () => {
  it('the durable expiry job marks a PENDING quote EXPIRED once past expiresAt', async () => {
    const { quote } = await client.createQuote(base());
    const id = quote!.id;
    await sql.query(
      `UPDATE payments.quotes SET created_at = now() - interval '10 minutes', expires_at = now() - interval '1 minute' WHERE id = $1`,
      [id],
    );
    await sql.query(`UPDATE payments.scheduled_jobs SET run_at = now() WHERE id = $1`, [
      `quote.expire:${id}`,
    ]);
    await eventually(async () => {
      const { rows } = await sql.query('SELECT status FROM payments.quotes WHERE id = $1', [id]);
      return rows[0].status === 'EXPIRED';
    });
    expect((await client.getQuote({ platformId, quoteId: id })).quote!.status).toBe('EXPIRED');
  });

  it('the job leaves a quote that is not yet expired PENDING; a read past expiry shows EXPIRED', async () => {
    const { quote } = await client.createQuote(base());
    const id = quote!.id;
    await sql.query(`UPDATE payments.scheduled_jobs SET run_at = now() WHERE id = $1`, [
      `quote.expire:${id}`,
    ]);
    await eventually(async () => {
      const { rows } = await sql.query('SELECT done_at FROM payments.scheduled_jobs WHERE id = $1', [
        `quote.expire:${id}`,
      ]);
      return rows[0].done_at !== null;
    });
    expect((await client.getQuote({ platformId, quoteId: id })).quote!.status).toBe('PENDING');
    await sql.query(
      `UPDATE payments.quotes SET created_at = now() - interval '10 minutes', expires_at = now() - interval '1 second' WHERE id = $1`,
      [id],
    );
    expect((await client.getQuote({ platformId, quoteId: id })).quote!.status).toBe('EXPIRED');
  });
});

describe('ExecuteQuote', () => {
  const exec = (quoteId: string) => client.executeQuote({ platformId, environment: SANDBOX, quoteId });
  const quoteStatus = (quoteId: string, status: string) =>
    eventually(async () => {
      const { quote } = await client.getQuote({ platformId, quoteId });
      return quote!.status === status ? quote! : undefined;
    });
  const outboxTypes = async (transactionId: string) =>
    (
      await sql.query(
        `SELECT type FROM payments.outbox WHERE envelope->'data'->>'id' = $1 ORDER BY occurred_at, id`,
        [transactionId],
      )
    ).rows.map((r) => r.type as string);

  it('holds totalSendingAmount, creates the transaction, settles through the rail: COMPLETED, debited once', async () => {
    const src = addInternal('USD', customerId, platformId, 50_000n);
    const { quote } = await client.createQuote(base({ sourceAccountId: src, description: 'rent' }));
    const executed = (await exec(quote!.id)).quote!;
    expect(executed.transactionId).toMatch(/^Transaction:/);
    expect(['PROCESSING', 'COMPLETED']).toContain(executed.status);
    const done = await quoteStatus(quote!.id, 'COMPLETED');
    expect(done.transactionId).toBe(executed.transactionId);
    expect(ledgerFake.posted.get(src)).toBe(40_000n);
    expect(ledgerFake.available(src)).toBe(40_000n);
    const { transaction } = await client.getTransaction({
      platformId,
      transactionId: executed.transactionId!,
    });
    expect(transaction).toMatchObject({
      type: 'OUTGOING',
      status: 'COMPLETED',
      quoteId: quote!.id,
      sentAmount: 10_000n,
      receivedAmount: 9_223n,
      fees: 40n,
      customerId,
      platformCustomerId: 'pc-1',
      description: 'rent',
    });
    expect(transaction!.source).toMatchObject({ accountId: src, currency: 'USD' });
    expect(transaction!.destination).toMatchObject({ currency: 'EUR' });
    expect(await outboxTypes(executed.transactionId!)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.COMPLETED',
    ]);
    // Executing again returns the quote as it is and moves nothing.
    const again = (await exec(quote!.id)).quote!;
    expect(again).toMatchObject({ status: 'COMPLETED', transactionId: executed.transactionId });
    expect(ledgerFake.posted.get(src)).toBe(40_000n);
    expect(ledgerFake.holdsOf(src)).toHaveLength(1);
  });

  it('the quote row follows its transaction to COMPLETED / FAILED without any read (same database transaction)', async () => {
    const src = addInternal('USD', customerId, platformId, 50_000n);
    const ok = (await client.createQuote(base({ sourceAccountId: src }))).quote!;
    const bad = (
      await client.createQuote(
        base({
          sourceAccountId: src,
          destinationAccountId: addExternal('EUR', customerId, 'ACTIVE', 'DE00370400440532013004'),
        }),
      )
    ).quote!;
    await exec(ok.id);
    await exec(bad.id);
    const rowStatus = async (id: string) =>
      (await sql.query('SELECT status FROM payments.quotes WHERE id = $1', [id])).rows[0].status as string;
    await eventually(
      async () => (await rowStatus(ok.id)) === 'COMPLETED' && (await rowStatus(bad.id)) === 'FAILED',
    );
  });

  it('20 concurrent executes of one quote move money once (one hold, one transaction)', async () => {
    const src = addInternal('USD', customerId, platformId, 50_000n);
    const { quote } = await client.createQuote(base({ sourceAccountId: src }));
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => exec(quote!.id)));
    const ok = results.filter((r) => r.status === 'fulfilled').map((r) => r.value.quote!);
    expect(ok).toHaveLength(20);
    expect(new Set(ok.map((q) => q.transactionId)).size).toBe(1);
    await quoteStatus(quote!.id, 'COMPLETED');
    expect(ledgerFake.holdsOf(src)).toHaveLength(1);
    expect(ledgerFake.posted.get(src)).toBe(40_000n);
    const { rows } = await sql.query(
      'SELECT count(*)::int AS n FROM payments.transactions WHERE quote_id = $1',
      [quote!.id],
    );
    expect(rows[0].n).toBe(1);
  });

  it('a quote is created with its transaction PENDING; INSUFFICIENT_FUNDS leaves both PENDING; it executes once funded, carrying that transaction', async () => {
    const src = addInternal('USD', customerId, platformId, 5_000n);
    const { quote } = await client.createQuote(base({ sourceAccountId: src }));
    // The specification: PENDING = "Quote has been created".
    const created = (await client.getTransaction({ platformId, transactionId: quote!.transactionId! })).transaction!;
    expect(created).toMatchObject({ status: 'PENDING', type: 'OUTGOING', quoteId: quote!.id, customerId, platformCustomerId: 'pc-1' });
    const e = await rejection(exec(quote!.id));
    expect(e.code).toBe('INSUFFICIENT_FUNDS');
    const after = (await client.getQuote({ platformId, quoteId: quote!.id })).quote!;
    expect(after.status).toBe('PENDING');
    expect(after.transactionId).toBe(quote!.transactionId);
    expect((await client.getTransaction({ platformId, transactionId: quote!.transactionId! })).transaction!.status).toBe('PENDING');
    ledgerFake.posted.set(src, 20_000n);
    const executed = (await exec(quote!.id)).quote!;
    expect(executed.transactionId).toBe(quote!.transactionId);
    await quoteStatus(quote!.id, 'COMPLETED');
    expect((await client.getTransaction({ platformId, transactionId: quote!.transactionId! })).transaction!.status).toBe('COMPLETED');
    expect(ledgerFake.posted.get(src)).toBe(10_000n);
    const { rows } = await sql.query('SELECT count(*)::int AS n FROM payments.transactions WHERE quote_id = $1', [quote!.id]);
    expect(rows[0].n).toBe(1);
  });

  it('an expired quote answers QUOTE_EXPIRED, becomes EXPIRED and holds nothing', async () => {
    const src = addInternal('USD');
    const { quote } = await client.createQuote(base({ sourceAccountId: src }));
    await sql.query(
      `UPDATE payments.quotes SET created_at = now() - interval '10 minutes', expires_at = now() - interval '1 second' WHERE id = $1`,
      [quote!.id],
    );
    expect((await rejection(exec(quote!.id))).code).toBe('QUOTE_EXPIRED');
    expect((await client.getQuote({ platformId, quoteId: quote!.id })).quote!.status).toBe('EXPIRED');
    expect((await rejection(exec(quote!.id))).code).toBe('QUOTE_EXPIRED');
    expect(ledgerFake.available(src)).toBe(1_000_000n);
    // Its transaction, PENDING since the quote was created, expired with it.
    const { transaction } = await client.getTransaction({ platformId, transactionId: quote!.transactionId! });
    expect(transaction).toMatchObject({ status: 'EXPIRED', failureReason: 'QUOTE_EXPIRED' });
  });

  it('a rail failure (sandbox 004) fails the quote and voids the hold', async () => {
    const src = addInternal('USD', customerId, platformId, 50_000n);
    const dst = addExternal('EUR', customerId, 'ACTIVE', 'DE00370400440532013004');
    const { quote } = await client.createQuote(base({ sourceAccountId: src, destinationAccountId: dst }));
    await exec(quote!.id);
    const failed = await quoteStatus(quote!.id, 'FAILED');
    const { transaction } = await client.getTransaction({ platformId, transactionId: failed.transactionId! });
    expect(transaction!.status).toBe('FAILED');
    expect(transaction!.failureReason).toBeTruthy();
    expect(ledgerFake.posted.get(src)).toBe(50_000n);
    expect(ledgerFake.available(src)).toBe(50_000n);
  });

  const ibanEnding = (suffix: string) => `DE00370400440532013${suffix}`;

  it('sandbox 002: execution failed at submission → FAILED (QUOTE_EXECUTION_FAILED), hold voided', async () => {
    const src = addInternal('USD', customerId, platformId, 50_000n);
    const dst = addExternal('EUR', customerId, 'ACTIVE', ibanEnding('002'));
    const { quote } = await client.createQuote(base({ sourceAccountId: src, destinationAccountId: dst }));
    const executed = (await exec(quote!.id)).quote!;
    expect(executed.status).toBe('FAILED');
    const { transaction } = await client.getTransaction({
      platformId,
      transactionId: executed.transactionId!,
    });
    expect(transaction).toMatchObject({ status: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED' });
    expect(ledgerFake.holdsOf(src).map(([, h]) => h.state)).toEqual(['VOIDED']);
    expect(ledgerFake.available(src)).toBe(50_000n);
    expect(await outboxTypes(executed.transactionId!)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.FAILED',
    ]);
  });

  it('sandbox 003: stays PROCESSING about 6 minutes (× time scale), then COMPLETED', async () => {
    const src = addInternal('USD', customerId, platformId, 50_000n);
    const dst = addExternal('EUR', customerId, 'ACTIVE', ibanEnding('003'));
    const { quote } = await client.createQuote(base({ sourceAccountId: src, destinationAccountId: dst }));
    const started = Date.now();
    await exec(quote!.id);
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await client.getQuote({ platformId, quoteId: quote!.id })).quote!.status).toBe('PROCESSING');
    await quoteStatus(quote!.id, 'COMPLETED');
    // 360 s × 0.01 = 3.6 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
    expect(ledgerFake.posted.get(src)).toBe(40_000n);
  });

  it('sandbox 004: counterparty delivery failed → FAILED (OFFRAMP_FAILED), hold voided', async () => {
    const src = addInternal('USD', customerId, platformId, 50_000n);
    const dst = addExternal('EUR', customerId, 'ACTIVE', ibanEnding('004'));
    const { quote } = await client.createQuote(base({ sourceAccountId: src, destinationAccountId: dst }));
    await exec(quote!.id);
    const failed = await quoteStatus(quote!.id, 'FAILED');
    const { transaction } = await client.getTransaction({ platformId, transactionId: failed.transactionId! });
    expect(transaction).toMatchObject({
      status: 'FAILED',
      failureReason: 'OFFRAMP_FAILED',
      failureDetail: 'REJECTED_BY_BANK',
    });
    expect(transaction!.refund).toBeUndefined();
    expect(ledgerFake.available(src)).toBe(50_000n);
    expect(ledgerFake.posted.get(src)).toBe(50_000n);
  });

  const txOf = async (quoteId: string, status: string) =>
    eventually(async () => {
      const { quote } = await client.getQuote({ platformId, quoteId });
      if (!quote!.transactionId) return undefined;
      const { transaction } = await client.getTransaction({
        platformId,
        transactionId: quote!.transactionId,
      });
      return transaction!.status === status ? transaction! : undefined;
    });

  it('a completed payout books the conversion: source −T, FEES +F, FX +C / −R, SETTLEMENT +R, CLEARING back to 0', async () => {
    const src = addInternal('USD', customerId, platformId, 50_000n);
    const { quote } = await client.createQuote(base({ sourceAccountId: src }));
    const fees = ledgerFake.system('FEES', 'USD');
    const fxUsd = ledgerFake.system('FX', 'USD');
    const fxEur = ledgerFake.system('FX', 'EUR');
    const settled = ledgerFake.system('SETTLEMENT', 'EUR');
    const clearing = ledgerFake.system('CLEARING', 'USD');
    await exec(quote!.id);
    const t = await txOf(quote!.id, 'COMPLETED');
    expect(ledgerFake.posted.get(src)).toBe(40_000n);
    expect(ledgerFake.system('FEES', 'USD') - fees).toBe(40n);
    expect(ledgerFake.system('FX', 'USD') - fxUsd).toBe(9_960n);
    expect(ledgerFake.system('FX', 'EUR') - fxEur).toBe(-9_223n);
    expect(ledgerFake.system('SETTLEMENT', 'EUR') - settled).toBe(9_223n);
    expect(ledgerFake.system('CLEARING', 'USD')).toBe(clearing);
    expect(t.exchangeRate).toBe('1.08');
    expect(t.rateDetails).toMatchObject({ gridApiFixedFee: 10n, gridApiVariableFeeAmount: 30n });
  });

  it('sandbox 005: COMPLETED, then returned by the receiving bank → FAILED (OFFRAMP_FAILED), then REFUNDED in full', async () => {
    const src = addInternal('USD', customerId, platformId, 50_000n);
    const dst = addExternal('EUR', customerId, 'ACTIVE', ibanEnding('005'));
    const { quote } = await client.createQuote(base({ sourceAccountId: src, destinationAccountId: dst }));
    await exec(quote!.id);
    const completed = await txOf(quote!.id, 'COMPLETED');
    const refunded = await txOf(quote!.id, 'REFUNDED');
    expect(refunded).toMatchObject({
      failureReason: 'OFFRAMP_FAILED',
      failureDetail: 'RETURNED_BY_BANK',
      refund: {
        status: 'COMPLETED',
        reason: 'TRANSACTION_FAILED',
        reference: `${completed.reference}-REFUND`,
      },
    });
    expect(refunded.refund!.settledAt).toBeInstanceOf(Date);
    // Fees included: the customer gets every cent back.
    expect(ledgerFake.posted.get(src)).toBe(50_000n);
    expect(ledgerFake.available(src)).toBe(50_000n);
    expect((await client.getQuote({ platformId, quoteId: quote!.id })).quote!.status).toBe('FAILED');
    expect(await outboxTypes(completed.id)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.COMPLETED',
      'OUTGOING_PAYMENT.FAILED',
      'OUTGOING_PAYMENT.REFUND_PENDING',
      'OUTGOING_PAYMENT.REFUND_COMPLETED',
    ]);
  });

  it('sandbox 006: cancelled by the user → FAILED (QUOTE_EXECUTION_FAILED, USER_CANCELLED), refund USER_CANCELLATION → REFUNDED', async () => {
    const src = addInternal('USD', customerId, platformId, 50_000n);
    const dst = addExternal('EUR', customerId, 'ACTIVE', ibanEnding('006'));
    const { quote } = await client.createQuote(base({ sourceAccountId: src, destinationAccountId: dst }));
    await exec(quote!.id);
    const refunded = await txOf(quote!.id, 'REFUNDED');
    expect(refunded).toMatchObject({
      failureReason: 'QUOTE_EXECUTION_FAILED',
      failureDetail: 'USER_CANCELLED',
      refund: { status: 'COMPLETED', reason: 'USER_CANCELLATION' },
    });
    expect(ledgerFake.posted.get(src)).toBe(50_000n);
    expect(await outboxTypes(refunded.id)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.FAILED',
      'OUTGOING_PAYMENT.REFUND_PENDING',
      'OUTGOING_PAYMENT.REFUND_COMPLETED',
    ]);
  });

  it('sandbox 007: payout and refund failed → FAILED with a FAILED refund; the money waits in CLEARING', async () => {
    const src = addInternal('USD', customerId, platformId, 50_000n);
    const dst = addExternal('EUR', customerId, 'ACTIVE', ibanEnding('007'));
    const { quote } = await client.createQuote(base({ sourceAccountId: src, destinationAccountId: dst }));
    const clearing = ledgerFake.system('CLEARING', 'USD');
    await exec(quote!.id);
    const t = await eventually(async () => {
      const tx = await txOf(quote!.id, 'FAILED');
      return tx.refund?.status === 'FAILED' ? tx : undefined;
    });
    expect(t).toMatchObject({
      failureReason: 'OFFRAMP_FAILED',
      failureDetail: 'PAYOUT_FAILED',
      refund: { status: 'FAILED', reason: 'TRANSACTION_FAILED' },
    });
    expect(ledgerFake.posted.get(src)).toBe(40_000n);
    expect(ledgerFake.system('CLEARING', 'USD') - clearing).toBe(10_000n);
    expect(await outboxTypes(t.id)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.FAILED',
      'OUTGOING_PAYMENT.REFUND_PENDING',
      'OUTGOING_PAYMENT.REFUND_FAILED',
    ]);
  });

  it('immediatelyExecute executes at creation', async () => {
    const src = addInternal('USD', customerId, platformId, 50_000n);
    const { quote } = await client.createQuote(base({ sourceAccountId: src, immediatelyExecute: true }));
    expect(quote!.transactionId).toMatch(/^Transaction:/);
    await quoteStatus(quote!.id, 'COMPLETED');
    expect(ledgerFake.posted.get(src)).toBe(40_000n);
  });

  it('immediatelyExecute without funds: the error names the quote, which stays PENDING', async () => {
    const src = addInternal('USD', customerId, platformId, 100n);
    const e = await rejection(client.createQuote(base({ sourceAccountId: src, immediatelyExecute: true })));
    expect(e.code).toBe('INSUFFICIENT_FUNDS');
    const quoteId = e.details!.quoteId as string;
    expect((await client.getQuote({ platformId, quoteId })).quote!.status).toBe('PENDING');
  });

  it('production platforms have no rail yet: RAIL_UNAVAILABLE, nothing held', async () => {
    const src = addInternal('USD');
    const { quote } = await client.createQuote(base({ sourceAccountId: src }));
    const e = await rejection(
      client.executeQuote({ platformId, environment: common.Environment.PRODUCTION, quoteId: quote!.id }),
    );
    expect(e.code).toBe('RAIL_UNAVAILABLE');
    expect(ledgerFake.holdsOf(src)).toHaveLength(0);
  });

  it('the expiry releases a hold left by an execute that lost the claim to the expiry', async () => {
    const src = addInternal('USD', customerId, platformId, 50_000n);
    const { quote } = await client.createQuote(base({ sourceAccountId: src }));
    const holdId = `quote:${quote!.id.slice('Quote:'.length)}`;
    await ledgerFake.placeHold({
      platformId,
      holdId,
      accountId: src,
      amount: 10_000n,
      currency: 'USD',
      kind: 'QUOTE_EXECUTION',
    });
    expect(ledgerFake.available(src)).toBe(40_000n);
    await sql.query(
      `UPDATE payments.quotes SET created_at = now() - interval '10 minutes', expires_at = now() - interval '1 second' WHERE id = $1`,
      [quote!.id],
    );
    await sql.query(`UPDATE payments.scheduled_jobs SET run_at = now() WHERE id = $1`, [
      `quote.expire:${quote!.id}`,
    ]);
    await eventually(async () => ledgerFake.holds.get(holdId)!.state === 'VOIDED');
    expect(ledgerFake.available(src)).toBe(50_000n);
    expect((await rejection(exec(quote!.id))).code).toBe('QUOTE_EXPIRED');
  });

  it('EMBEDDED_WALLET sources: payloadToSign on the quote; execute only with a valid, unused wallet signature', async () => {
    const wallet = addInternal('USD', customerId, platformId, 50_000n);
    embeddedWallets.add(wallet);
    const { quote } = await client.createQuote(base({ sourceAccountId: wallet }));
    const requestId = quote!.signingRequestId!;
    expect(requestId).toMatch(/^Request:/);
    expect(walletSignaturesFake.requests.get(requestId)).toMatchObject({
      accountId: wallet,
      bodyJson: JSON.stringify({ quoteId: quote!.id }),
    });
    expect(quote!.payloadToSign).toBe(
      JSON.stringify({ requestId, accountId: wallet, bodyJson: JSON.stringify({ quoteId: quote!.id }) }),
    );
    // GET returns the same challenge (stored on the quote).
    expect((await client.getQuote({ platformId, quoteId: quote!.id })).quote!.payloadToSign).toBe(
      quote!.payloadToSign,
    );
    const stillPending = async () => {
      expect(ledgerFake.holdsOf(wallet)).toHaveLength(0);
      expect((await client.getQuote({ platformId, quoteId: quote!.id })).quote!.status).toBe('PENDING');
    };
    // No signature headers: the signed retry's step 1 — a fresh signing request for this execution
    // (bound to the wallet and the execute body), no quote, nothing held.
    const step1 = await exec(quote!.id);
    expect(step1.quote).toBeUndefined();
    const fresh = step1.signingChallenge!;
    expect(fresh.requestId).toMatch(/^Request:/);
    expect(fresh.requestId).not.toBe(requestId);
    expect(fresh.expiresAt!.getTime()).toBeGreaterThan(Date.now());
    expect(walletSignaturesFake.requests.get(fresh.requestId)).toMatchObject({
      accountId: wallet,
      bodyJson: JSON.stringify({ quoteId: quote!.id }),
      used: false,
    });
    expect(fresh.payloadToSign).toBe(
      JSON.stringify({
        requestId: fresh.requestId,
        accountId: wallet,
        bodyJson: JSON.stringify({ quoteId: quote!.id }),
      }),
    );
    await stillPending();
    // Request-Id without a signature: wallet-auth's 401, nothing held.
    const missing = await rejection(
      client.executeQuote({
        platformId,
        environment: SANDBOX,
        quoteId: quote!.id,
        signingRequestId: requestId,
      }),
    );
    expect(missing.kind).toBe('UNAUTHENTICATED');
    expect(missing.code).toBe('WALLET_SIGNATURE_MISSING');
    await stillPending();
    // A wrong stamp: wallet-auth's 401 passes through, nothing held.
    const signedExec = (signature: string, id?: string) =>
      client.executeQuote({
        platformId,
        environment: SANDBOX,
        quoteId: quote!.id,
        walletSignature: signature,
        ...(id ? { signingRequestId: id } : {}),
      });
    expect((await rejection(signedExec('stamp:forged'))).code).toBe('WALLET_SIGNATURE_INVALID');
    await stillPending();
    // A malformed Request-Id: 400 naming the header.
    const bad = await rejection(signedExec(`stamp:${requestId}`, 'Request:x'));
    expect(bad.code).toBe('INVALID_INPUT');
    expect(fields(bad)).toEqual(['Request-Id']);
    await stillPending();
    // The valid stamp (Request-Id defaults to the quote's request): executes once.
    const done = (await signedExec(`stamp:${requestId}`)).quote!;
    expect(done.status).not.toBe('PENDING');
    expect(done.transactionId).toMatch(/^Transaction:/);
    const holds = ledgerFake.holdsOf(wallet);
    expect(holds).toHaveLength(1);
    expect(holds[0]![1].amount).toBe(quote!.totalSendingAmount);
    // The same stamp again: the executed quote is returned; no second verification, no second movement.
    const calls = walletSignaturesFake.verifyCalls;
    const again = (await signedExec(`stamp:${requestId}`, requestId)).quote!;
    expect(again.transactionId).toBe(done.transactionId);
    expect(walletSignaturesFake.verifyCalls).toBe(calls);
    expect(ledgerFake.holdsOf(wallet)).toHaveLength(1);
    // A consumed signature replayed on another quote: 401 SIGNING_REQUEST_REUSED, nothing held.
    const { quote: second } = await client.createQuote(base({ sourceAccountId: wallet }));
    const reused = await rejection(
      client.executeQuote({
        platformId,
        environment: SANDBOX,
        quoteId: second!.id,
        walletSignature: `stamp:${requestId}`,
        signingRequestId: requestId,
      }),
    );
    expect(reused.kind).toBe('UNAUTHENTICATED');
    expect(reused.code).toBe('SIGNING_REQUEST_REUSED');
    expect(ledgerFake.holdsOf(wallet)).toHaveLength(1);
    expect((await client.getQuote({ platformId, quoteId: second!.id })).quote!.status).toBe('PENDING');
    const before = await quoteCount();
    const i = await rejection(
      client.createQuote(base({ sourceAccountId: wallet, immediatelyExecute: true })),
    );
    expect(i.code).toBe('INVALID_INPUT');
    expect(fields(i)).toEqual(['immediatelyExecute']);
    expect(await quoteCount()).toBe(before);
  });

  it('EMBEDDED_WALLET: a signed execute refused for funds used its request; a fresh challenge (202) signs the execute once funded', async () => {
    const wallet = addInternal('USD', customerId, platformId, 5_000n);
    embeddedWallets.add(wallet);
    const { quote } = await client.createQuote(base({ sourceAccountId: wallet }));
    const first = quote!.signingRequestId!;
    const signedExec = (requestId: string) =>
      client.executeQuote({
        platformId,
        environment: SANDBOX,
        quoteId: quote!.id,
        walletSignature: `stamp:${requestId}`,
        signingRequestId: requestId,
      });
    // 10000 cents against 5000: the signature is good, the hold is refused, the request is spent.
    expect((await rejection(signedExec(first))).code).toBe('INSUFFICIENT_FUNDS');
    expect(walletSignaturesFake.requests.get(first)!.used).toBe(true);
    expect(ledgerFake.holdsOf(wallet)).toHaveLength(0);
    expect((await rejection(signedExec(first))).code).toBe('SIGNING_REQUEST_REUSED');
    // The customer tops up; the client asks for a fresh request by executing without headers.
    ledgerFake.posted.set(wallet, 50_000n);
    const { signingChallenge } = await exec(quote!.id);
    expect(signingChallenge!.requestId).not.toBe(first);
    const done = (await signedExec(signingChallenge!.requestId)).quote!;
    expect(done.status).not.toBe('PENDING');
    expect(done.transactionId).toMatch(/^Transaction:/);
    expect(ledgerFake.holdsOf(wallet)).toHaveLength(1);
    expect(ledgerFake.holdsOf(wallet)[0]![1].amount).toBe(quote!.totalSendingAmount);
    // Executed: an unsigned execute now returns the quote as it is (no challenge, nothing moves).
    const after = await exec(quote!.id);
    expect(after.signingChallenge).toBeUndefined();
    expect(after.quote!.transactionId).toBe(done.transactionId);
    expect(ledgerFake.holdsOf(wallet)).toHaveLength(1);
  });

  it('an internal-account destination is booked at once: COMPLETED in the response, credited in the receiving currency', async () => {
    const src = addInternal('USD', customerId, platformId, 50_000n);
    const dest = addInternal('EUR', otherCustomerId, platformId, 0n);
    const { quote } = await client.createQuote(base({ sourceAccountId: src, destinationAccountId: dest }));
    const done = (await exec(quote!.id)).quote!;
    expect(done.status).toBe('COMPLETED');
    expect(ledgerFake.posted.get(src)).toBe(40_000n);
    expect(ledgerFake.posted.get(dest)).toBe(9_223n);
    const { transaction } = await client.getTransaction({ platformId, transactionId: done.transactionId! });
    expect(transaction).toMatchObject({ status: 'COMPLETED', receivedAmount: 9_223n });
    expect(transaction!.settledAt).toBeInstanceOf(Date);
    expect(await outboxTypes(done.transactionId!)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.COMPLETED',
    ]);
    // Again: nothing moves twice.
    await exec(quote!.id);
    expect(ledgerFake.posted.get(dest)).toBe(9_223n);
  });

  it('answers QUOTE_NOT_FOUND for unknown and another platform’s quotes, INVALID_INPUT for a malformed id', async () => {
    const { quote } = await client.createQuote(base());
    expect((await rejection(exec(newId('Quote')))).code).toBe('QUOTE_NOT_FOUND');
    expect(
      (
        await rejection(
          client.executeQuote({ platformId: otherPlatformId, environment: SANDBOX, quoteId: quote!.id }),
        )
      ).code,
    ).toBe('QUOTE_NOT_FOUND');
    const bad = await rejection(
      client.executeQuote({ platformId, environment: SANDBOX, quoteId: 'Quote:x' }),
    );
    expect(bad.code).toBe('INVALID_INPUT');
    expect(fields(bad)).toEqual(['quoteId']);
  });
});

describe('UMA payouts', () => {
  const info = JSON.stringify({ FULL_NAME: 'Ada L', BIRTH_DATE: '1990-01-01' });
  const umaQuote = async (receiver: string, src: string) => {
    const { lookup } = await client.lookupUmaReceiver({
      platformId,
      environment: SANDBOX,
      receiverUmaAddress: `$${receiver}@${UMA_DOMAIN}`,
      sendingCurrency: 'EUR',
    });
    return (
      await client.createQuote(
        base({
          sourceAccountId: src,
          destinationKind: 'UMA_ADDRESS',
          destinationUmaAddress: `$${receiver}@${UMA_DOMAIN}`,
          lookupId: lookup!.id,
          senderCustomerInfoJson: info,
        }),
      )
    ).quote!;
  };
  const exec = (quoteId: string) => client.executeQuote({ platformId, environment: SANDBOX, quoteId });
  const settled = (quoteId: string, status: string) =>
    eventually(async () => {
      const { quote } = await client.getQuote({ platformId, quoteId });
      return quote!.status === status ? quote! : undefined;
    });

  it('$success.usd: COMPLETED after about 1 s, the dollars delivered to SETTLEMENT', async () => {
    const src = addInternal('EUR', customerId, platformId, 50_000n);
    const q = await umaQuote('success.usd', src);
    const before = ledgerFake.system('SETTLEMENT', 'USD');
    await exec(q.id);
    const done = await settled(q.id, 'COMPLETED');
    expect(ledgerFake.system('SETTLEMENT', 'USD') - before).toBe(q.totalReceivingAmount);
    expect(ledgerFake.posted.get(src)).toBe(50_000n - q.totalSendingAmount);
    const { transaction } = await client.getTransaction({ platformId, transactionId: done.transactionId! });
    expect(transaction!.destination).toMatchObject({
      kind: 'UMA_ADDRESS',
      umaAddress: `$success.usd@${UMA_DOMAIN}`,
    });
  });

  it('$pending.long.usd: PROCESSING for about 6 minutes (× time scale), then COMPLETED', async () => {
    const src = addInternal('EUR', customerId, platformId, 50_000n);
    const q = await umaQuote('pending.long.usd', src);
    await exec(q.id);
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await client.getQuote({ platformId, quoteId: q.id })).quote!.status).toBe('PROCESSING');
    await settled(q.id, 'COMPLETED');
  });

  it('$fail.compliance.usd: refused by the receiver’s compliance check → FAILED (PAY_REQUEST_FAILED), nothing moved', async () => {
    const src = addInternal('EUR', customerId, platformId, 50_000n);
    const q = await umaQuote('fail.compliance.usd', src);
    const executed = (await exec(q.id)).quote!;
    expect(executed.status).toBe('FAILED');
    const { transaction } = await client.getTransaction({
      platformId,
      transactionId: executed.transactionId!,
    });
    expect(transaction).toMatchObject({
      status: 'FAILED',
      failureReason: 'PAY_REQUEST_FAILED',
      failureDetail: 'COMPLIANCE_CHECK_FAILED',
    });
    expect(ledgerFake.posted.get(src)).toBe(50_000n);
    expect(ledgerFake.available(src)).toBe(50_000n);
  });
});

describe('REALTIME_FUNDING quotes and POST /sandbox/send', () => {
  const rtf = (over: Partial<pb.CreateQuoteRequest> = {}) =>
    base({
      sourceKind: 'REALTIME_FUNDING',
      sourceAccountId: '',
      sourceCurrency: 'USD',
      sourceCustomerId: customerId,
      ...over,
    });
  const send = (quoteId: string, over: Partial<pb.SandboxSendRequest> = {}) =>
    client.sandboxSend({ platformId, environment: SANDBOX, quoteId, currencyCode: 'USD', ...over });
  const txStatus = (transactionId: string, status: string) =>
    eventually(async () => {
      const { transaction } = await client.getTransaction({ platformId, transactionId });
      return transaction!.status === status ? transaction! : undefined;
    });

  it('creates the quote with payment instructions and its transaction PENDING; paying it executes once', async () => {
    const { quote } = await client.createQuote(rtf());
    const q = quote!;
    expect(q.source).toMatchObject({ kind: 'REALTIME_FUNDING', currency: 'USD' });
    expect(q.customerId).toBe(customerId);
    expect(q.transactionId).toMatch(/^Transaction:/);
    const { transaction: pending } = await client.getTransaction({
      platformId,
      transactionId: q.transactionId!,
    });
    expect(pending).toMatchObject({
      status: 'PENDING',
      type: 'OUTGOING',
      sentAmount: 10_000n,
      platformCustomerId: 'pc-1',
    });
    expect(pending!.source).toMatchObject({ kind: 'REALTIME_FUNDING', currency: 'USD' });
    expect(q.paymentInstructions).toHaveLength(1);
    expect(q.paymentInstructions[0]!.accountOrWalletInfo).toMatchObject({
      accountType: 'USD_ACCOUNT',
      routingNumber: '110000000',
      reference: pending!.reference,
    });
    expect(q.paymentInstructions[0]!.instructionsNotes).toContain('/sandbox/send');
    // Not executable through /execute.
    expect(
      (await rejection(client.executeQuote({ platformId, environment: SANDBOX, quoteId: q.id }))).code,
    ).toBe('QUOTE_NOT_EXECUTABLE');
    const settlementUsd = ledgerFake.system('SETTLEMENT', 'USD');
    const sent = await Promise.all([send(q.id), send(q.id), send(q.id, { currencyAmount: 10_000n })]);
    expect(new Set(sent.map((r) => r.transaction!.id))).toEqual(new Set([q.transactionId]));
    const done = await txStatus(q.transactionId!, 'COMPLETED');
    expect(done.settledAt).toBeInstanceOf(Date);
    // The payer's 10000 came in once from outside; 9223 EUR went out.
    expect(ledgerFake.system('SETTLEMENT', 'USD') - settlementUsd).toBe(-10_000n);
    expect(ledgerFake.entries.has(`quote:${q.id.slice('Quote:'.length)}:funding`)).toBe(true);
    expect((await client.getQuote({ platformId, quoteId: q.id })).quote!.status).toBe('COMPLETED');
    // Paying again answers the transaction as it is.
    expect((await send(q.id)).transaction!.status).toBe('COMPLETED');
    expect(ledgerFake.system('SETTLEMENT', 'USD') - settlementUsd).toBe(-10_000n);
  });

  it('funds an internal account of another currency (on-ramp): COMPLETED in the response', async () => {
    const dest = addInternal('EUR', customerId, platformId, 0n);
    const { quote } = await client.createQuote(rtf({ destinationAccountId: dest }));
    const t = (await send(quote!.id)).transaction!;
    expect(t.status).toBe('COMPLETED');
    expect(ledgerFake.posted.get(dest)).toBe(9_223n);
  });

  it('a payout that fails before delivery refunds the payer: FAILED, then REFUNDED', async () => {
    const dst = addExternal('EUR', customerId, 'ACTIVE', 'DE00370400440532013004');
    const { quote } = await client.createQuote(rtf({ destinationAccountId: dst }));
    const settlementUsd = ledgerFake.system('SETTLEMENT', 'USD');
    const clearing = ledgerFake.system('CLEARING', 'USD');
    await send(quote!.id);
    const t = await txStatus(quote!.transactionId!, 'REFUNDED');
    expect(t).toMatchObject({
      failureReason: 'OFFRAMP_FAILED',
      refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
    });
    expect(ledgerFake.system('SETTLEMENT', 'USD')).toBe(settlementUsd);
    expect(ledgerFake.system('CLEARING', 'USD')).toBe(clearing);
  });

  it('an unfunded quote expires with its transaction (EXPIRED, QUOTE_EXPIRED); paying it late is refused', async () => {
    const { quote } = await client.createQuote(rtf());
    await sql.query(
      `UPDATE payments.quotes SET created_at = now() - interval '10 minutes', expires_at = now() - interval '1 second' WHERE id = $1`,
      [quote!.id],
    );
    await sql.query(`UPDATE payments.scheduled_jobs SET run_at = now() WHERE id = $1`, [
      `quote.expire:${quote!.id}`,
    ]);
    const t = await txStatus(quote!.transactionId!, 'EXPIRED');
    expect(t.failureReason).toBe('QUOTE_EXPIRED');
    expect((await rejection(send(quote!.id))).code).toBe('QUOTE_EXPIRED');
    const types = (
      await sql.query(
        `SELECT type FROM payments.outbox WHERE envelope->'data'->>'id' = $1 ORDER BY occurred_at, id`,
        [t.id],
      )
    ).rows.map((r) => r.type);
    expect(types).toEqual(['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.EXPIRED']);
  });

  it.each<[string, Partial<pb.SandboxSendRequest>, string]>([
    ['another currency', { currencyCode: 'EUR' }, 'currencyCode'],
    ['another amount', { currencyAmount: 9_999n }, 'currencyAmount'],
    ['an unknown currency', { currencyCode: 'XYZ' }, 'currencyCode'],
  ])('refuses %s with INVALID_INPUT naming the field; nothing moves', async (_n, over, field) => {
    const { quote } = await client.createQuote(rtf());
    const e = await rejection(send(quote!.id, over));
    expect(e.code).toBe('INVALID_INPUT');
    expect(fields(e)).toEqual([field]);
    const { transaction } = await client.getTransaction({ platformId, transactionId: quote!.transactionId! });
    expect(transaction!.status).toBe('PENDING');
  });

  it('refuses a quote funded from an account, unknown quotes and unknown customers', async () => {
    const { quote } = await client.createQuote(base());
    const e = await rejection(send(quote!.id));
    expect(e.code).toBe('INVALID_INPUT');
    expect(fields(e)).toEqual(['quoteId']);
    expect((await rejection(send(newId('Quote')))).code).toBe('QUOTE_NOT_FOUND');
    const unknown = await rejection(
      client.createQuote(
        rtf({ sourceCustomerId: newId('Customer'), destinationAccountId: addExternal('EUR', null) }),
      ),
    );
    expect(unknown.code).toBe('CUSTOMER_NOT_FOUND');
  });

  it('production platforms: RAIL_UNAVAILABLE', async () => {
    const { quote } = await client.createQuote(rtf());
    expect((await rejection(send(quote!.id, { environment: common.Environment.PRODUCTION }))).code).toBe(
      'RAIL_UNAVAILABLE',
    );
  });
});
