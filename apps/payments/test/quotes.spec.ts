import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { accounts as accountsPb, common, payments as pb } from '@sluice/contracts';
import { DomainError, newId } from '@sluice/core';
import type { PromiseClient } from '@sluice/rpc';
import { eventually, rejection, statementsDuring, type World, type WorldPlatform } from '@sluice/testing';
import { accountInfoFor, Holders, startPaymentsWithNeighbours } from './support/neighbours.js';

// Quotes over real gRPC and Postgres, with the real identity (customers), accounts (accounts and
// the two-phase ledger) and wallet-auth (single-use signing requests) started in-process: every
// balance, hold and signing request asserted here is what the owning service answers or stores.

const SANDBOX = common.Environment.SANDBOX;
const UMA_DOMAIN = 'sandbox.sluice.local';
const HOLD = accountsPb.HoldStatus;

let stack: Awaited<ReturnType<typeof startPaymentsWithNeighbours>>;
let client: PromiseClient<pb.PaymentsServiceClient>;
let world: World;
let sql: pg.Pool;
/** The sandbox platform of these tests (its customers have USDC embedded wallets), and another one. */
let P: WorldPlatform;
let platformId: string;
let otherPlatform: WorldPlatform;
let otherPlatformId: string;

const holders = new Holders(
  () => world,
  () => P,
);
const { ownerOf, platformCustomerIdOf } = holders;
const newCustomer = (p?: WorldPlatform) => holders.newCustomer(p);
const addInternal = (...a: Parameters<Holders['internal']>) => holders.internal(...a);

/** A new customer's EMBEDDED_WALLET (USDC) funded with `balance`, and a wallet-auth session that signs for it. */
async function addWallet(balance: bigint) {
  const wallet = await addInternal('USDC', balance, { type: 'EMBEDDED_WALLET' });
  return { wallet, session: await world.walletSession(platformId, wallet) };
}

/** An external account of `owner` (null: the platform) whose identifier ends in `suffix` (the sandbox outcome). */
async function addExternal(currency: string, owner: string | null, suffix = '000'): Promise<string> {
  return (await world.externalAccount(P, owner, currency, accountInfoFor(currency, suffix))).id;
}

/** Marks an external account PENDING in accounts (it creates them ACTIVE; a review would do this). */
async function markPending(externalAccountId: string): Promise<string> {
  await sql.query(`UPDATE accounts.external_accounts SET status = 'PENDING' WHERE id = $1`, [
    externalAccountId,
  ]);
  return externalAccountId;
}

const posted = async (accountId: string) => (await world.balance(platformId, accountId)).posted;
const available = async (accountId: string) => (await world.balance(platformId, accountId)).available;
const holdsOf = (accountId: string) => world.holdsOf(platformId, accountId);
const system = (name: 'SETTLEMENT' | 'FEES' | 'FX' | 'CLEARING', currency: string) =>
  world.systemBalance(platformId, name, currency);
const expectReconciled = async () => {
  const r = await world.reconcile(platformId);
  expect(r.mismatches).toEqual([]);
  expect(r.unbalancedEntryIds).toEqual([]);
  expect(r.consistent).toBe(true);
};

beforeAll(async () => {
  stack = await startPaymentsWithNeighbours('quotes', {
    env: {
      // These tests move jobs' due times with SQL, which announces nothing: poll instead of the 10 s safety poll.
      JOB_POLL_MS: '20',
      // Sandbox settlement 1 s → 10 ms.
      SANDBOX_TIME_SCALE: '0.01',
    },
  });
  ({ client, world, sql } = stack);
  P = await world.platform('SANDBOX', { embeddedWalletCurrencies: ['USDC'] });
  platformId = P.id;
  otherPlatform = await world.platform('SANDBOX');
  otherPlatformId = otherPlatform.id;
  const source = await addInternal('USD');
  idle = { source, destination: await addExternal('EUR', ownerOf.get(source)!) };
});

afterAll(async () => {
  await stack?.stop();
});

const fields = (e: DomainError) => (e.details!.errors as { field: string }[]).map((x) => x.field);
const quoteCount = async () =>
  Number((await sql.query('SELECT count(*) AS n FROM payments.quotes')).rows[0].n);

/**
 * The funded USD account and EUR external account of one customer that quotes which are never
 * executed are made from (a test that moves money passes an account of its own).
 */
let idle: { source: string; destination: string };

/**
 * A quote request from `sourceAccountId` (by default the idle source) to an EUR external account
 * of the source's owner (unless a destination is given).
 */
async function base(over: Partial<pb.CreateQuoteRequest> = {}): Promise<pb.CreateQuoteRequest> {
  const sourceAccountId = over.sourceAccountId ?? idle.source;
  const owner = ownerOf.get(sourceAccountId) ?? over.sourceCustomerId ?? null;
  const toAccount = (over.destinationKind ?? 'ACCOUNT') === 'ACCOUNT';
  const destination = async () =>
    sourceAccountId === idle.source ? idle.destination : addExternal('EUR', owner);
  return {
    platformId,
    environment: SANDBOX,
    sourceKind: 'ACCOUNT',
    sourceAccountId,
    destinationKind: 'ACCOUNT',
    destinationAccountId: over.destinationAccountId ?? (toAccount ? await destination() : ''),
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 10_000n,
    immediatelyExecute: false,
    senderCustomerInfoJson: '',
    ...over,
  };
}

describe('CreateQuote / GetQuote', () => {
  it('locks SENDING amounts exactly: fees included, rate details, exchange rate, expiry, PENDING', async () => {
    const src = await addInternal('USD');
    const { quote } = await client.createQuote(
      await base({ sourceAccountId: src, description: 'Invoice 7', purposeOfPayment: 'GOODS_OR_SERVICES' }),
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
    expect(q.customerId).toBe(ownerOf.get(src));
    expect(q.description).toBe('Invoice 7');
    expect(q.purposeOfPayment).toBe('GOODS_OR_SERVICES');
    expect(q.expiresAt!.getTime() - q.createdAt!.getTime()).toBe(120_000);
    const { quote: again } = await client.getQuote({ platformId, quoteId: q.id });
    expect(again).toEqual(q);
  });

  it('locks RECEIVING amounts: the receiver gets exactly the amount, the sender pays the smallest total', async () => {
    const { quote } = await client.createQuote(
      await base({ lockedCurrencySide: 'RECEIVING', lockedCurrencyAmount: 10_000n }),
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
    const { quote } = await client.createQuote(await base());
    expect((await rejection(client.getQuote({ platformId: otherPlatformId, quoteId: quote!.id }))).code).toBe(
      'QUOTE_NOT_FOUND',
    );
    expect((await rejection(client.getQuote({ platformId, quoteId: newId('Quote') }))).code).toBe(
      'QUOTE_NOT_FOUND',
    );
  });

  it('refuses same-currency quotes, pointing to transfer-in/out, and creates nothing', async () => {
    const src = await addInternal('USD');
    const usd = await addExternal('USD', ownerOf.get(src)!);
    const before = await quoteCount();
    const e = await rejection(
      client.createQuote(await base({ sourceAccountId: src, destinationAccountId: usd })),
    );
    expect(e.code).toBe('SAME_CURRENCY_QUOTE');
    expect(e.message).toContain('/transfer-out');
    expect(await quoteCount()).toBe(before);
  });

  type Patch = Partial<pb.CreateQuoteRequest> | (() => Promise<Partial<pb.CreateQuoteRequest>>);
  it.each<[string, Patch, string]>([
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
      async () => ({ sourceCustomerId: await newCustomer() }),
      'source.customerId',
    ],
    [
      'an external account of another customer',
      async () => ({ destinationAccountId: await addExternal('EUR', await newCustomer()) }),
      'destination.accountId',
    ],
  ])('%s → INVALID_INPUT naming the field, nothing created', async (_n, patch, field) => {
    const request = await base(typeof patch === 'function' ? await patch() : patch);
    const before = await quoteCount();
    const e = await rejection(client.createQuote(request));
    expect(e.code).toBe('INVALID_INPUT');
    expect(fields(e)).toContain(field);
    expect(await quoteCount()).toBe(before);
  });

  it('passes account errors through and refuses inactive destinations and tiny amounts', async () => {
    expect(
      (await rejection(client.createQuote(await base({ sourceAccountId: newId('InternalAccount') })))).code,
    ).toBe('INTERNAL_ACCOUNT_NOT_FOUND');
    const foreign = await addInternal('USD', 1_000_000n, { platform: otherPlatform });
    expect(
      (
        await rejection(
          client.createQuote(
            await base({ sourceAccountId: foreign, destinationAccountId: await addExternal('EUR', null) }),
          ),
        )
      ).code,
    ).toBe('INTERNAL_ACCOUNT_NOT_FOUND');
    expect(
      (await rejection(client.createQuote(await base({ destinationAccountId: newId('ExternalAccount') }))))
        .code,
    ).toBe('EXTERNAL_ACCOUNT_NOT_FOUND');
    const src = await addInternal('USD');
    const pending = await markPending(await addExternal('EUR', ownerOf.get(src)!));
    expect(
      (
        await rejection(
          client.createQuote(await base({ sourceAccountId: src, destinationAccountId: pending })),
        )
      ).code,
    ).toBe('EXTERNAL_ACCOUNT_NOT_USABLE');
    // 50 cents: under the 1.00 minimum.
    expect((await rejection(client.createQuote(await base({ lockedCurrencyAmount: 50n })))).code).toBe(
      'AMOUNT_OUT_OF_RANGE',
    );
  });

  it('pays an internal account of another currency', async () => {
    const dest = await addInternal('MXN', 0n);
    const { quote } = await client.createQuote(await base({ destinationAccountId: dest }));
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
  const createUma = async (receiver: string, over: Partial<pb.CreateQuoteRequest>) =>
    client.createQuote(await uma(receiver, over));

  it('requires every mandatory payer-data field of the lookup, naming the missing ones', async () => {
    const l = await lookup('success.eur');
    const e = await rejection(createUma('success.eur', { lookupId: l.id }));
    expect(e.code).toBe('INVALID_INPUT');
    expect(fields(e)).toEqual(['senderCustomerInfo.FULL_NAME']);
    const { quote } = await createUma('success.eur', {
      lookupId: l.id,
      senderCustomerInfoJson: JSON.stringify({ FULL_NAME: 'Ada L' }),
    });
    expect(quote!.destination).toMatchObject({ kind: 'UMA_ADDRESS', currency: 'EUR' });
    expect(quote!.destination!.umaAddress).toBe(`$success.eur@${UMA_DOMAIN}`);
    expect(quote!.lookupId).toBe(l.id);
    expect(quote!.totalReceivingAmount).toBe(9_223n);
  });

  it('refuses a mandatory payer-data field given as no usable value (a number, an array, an empty object)', async () => {
    const l = await lookup('success.eur');
    for (const bad of [5, ['Ada'], {}, true]) {
      const e = await rejection(
        createUma('success.eur', {
          lookupId: l.id,
          senderCustomerInfoJson: JSON.stringify({ FULL_NAME: bad }),
        }),
      );
      expect(e.code).toBe('INVALID_INPUT');
      expect(fields(e)).toEqual(['senderCustomerInfo.FULL_NAME']);
      expect((e.details!.errors as { message: string }[])[0]!.message).toMatch(/non-blank string/);
    }
  });

  it("destination.paymentRail: one of the account type's rails, the default when absent; refused for internal accounts and other types", async () => {
    const src = await addInternal('USD');
    const eur = await addExternal('EUR', ownerOf.get(src)!);
    const byDefault = (
      await client.createQuote(await base({ sourceAccountId: src, destinationAccountId: eur }))
    ).quote!;
    expect(byDefault.destination).toMatchObject({
      kind: 'ACCOUNT',
      accountId: eur,
      paymentRail: 'SEPA_INSTANT',
    });
    const sepa = (
      await client.createQuote(
        await base({ sourceAccountId: src, destinationAccountId: eur, destinationPaymentRail: 'SEPA' }),
      )
    ).quote!;
    expect(sepa.destination!.paymentRail).toBe('SEPA');
    expect((await client.getQuote({ platformId, quoteId: sepa.id })).quote!.destination!.paymentRail).toBe(
      'SEPA',
    );
    const before = await quoteCount();
    const ach = await rejection(
      client.createQuote(
        await base({ sourceAccountId: src, destinationAccountId: eur, destinationPaymentRail: 'ACH' }),
      ),
    );
    expect(ach.code).toBe('INVALID_INPUT');
    expect(fields(ach)).toEqual(['destination.paymentRail']);
    expect((ach.details!.errors as { message: string }[])[0]!.message).toContain('SEPA_INSTANT, SEPA');
    const unknown = await rejection(
      client.createQuote(
        await base({ sourceAccountId: src, destinationAccountId: eur, destinationPaymentRail: 'TELEGRAPH' }),
      ),
    );
    expect(fields(unknown)).toEqual(['destination.paymentRail']);
    const internal = await rejection(
      client.createQuote(
        await base({ destinationAccountId: await addInternal('EUR', 0n), destinationPaymentRail: 'SEPA' }),
      ),
    );
    expect(fields(internal)).toEqual(['destination.paymentRail']);
    expect(await quoteCount()).toBe(before);
  });

  it('names every missing field (compliance receiver needs BIRTH_DATE too)', async () => {
    const l = await lookup('fail.compliance.usd');
    const e = await rejection(
      createUma('fail.compliance.usd', { lookupId: l.id, sourceAccountId: await addInternal('EUR') }),
    );
    expect(fields(e).sort()).toEqual(['senderCustomerInfo.BIRTH_DATE', 'senderCustomerInfo.FULL_NAME']);
  });

  it('refuses unknown, expired and mismatched lookups, and currencies the receiver does not take', async () => {
    const info = JSON.stringify({ FULL_NAME: 'Ada L' });
    expect(
      (await rejection(createUma('success.eur', { lookupId: newId('Lookup'), senderCustomerInfoJson: info })))
        .code,
    ).toBe('LOOKUP_REQUEST_NOT_FOUND');
    const other = await lookup('success.mxn');
    const mismatch = await rejection(
      createUma('success.eur', { lookupId: other.id, senderCustomerInfoJson: info }),
    );
    expect(mismatch.code).toBe('INVALID_INPUT');
    expect(fields(mismatch)).toEqual(['lookupId']);
    const eur = await lookup('success.eur');
    const wrongCurrency = await rejection(
      createUma('success.eur', {
        lookupId: eur.id,
        destinationCurrency: 'GBP',
        senderCustomerInfoJson: info,
      }),
    );
    expect(wrongCurrency.code).toBe('UNSUPPORTED_CURRENCY');
    await sql.query(
      `UPDATE payments.receiver_lookups SET created_at = now() - interval '2 hours', expires_at = now() - interval '1 hour' WHERE id = $1`,
      [eur.id],
    );
    expect(
      (await rejection(createUma('success.eur', { lookupId: eur.id, senderCustomerInfoJson: info }))).code,
    ).toBe('LOOKUP_EXPIRED');
  });
});

describe('expiry', () => {
  it('the durable expiry job marks a PENDING quote EXPIRED once past expiresAt', async () => {
    const { quote } = await client.createQuote(await base());
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
    const { quote } = await client.createQuote(await base());
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
    const src = await addInternal('USD', 50_000n);
    const { quote } = await client.createQuote(await base({ sourceAccountId: src, description: 'rent' }));
    const executed = (await exec(quote!.id)).quote!;
    expect(executed.transactionId).toMatch(/^Transaction:/);
    expect(['PROCESSING', 'COMPLETED']).toContain(executed.status);
    const done = await quoteStatus(quote!.id, 'COMPLETED');
    expect(done.transactionId).toBe(executed.transactionId);
    expect(await posted(src)).toBe(40_000n);
    expect(await available(src)).toBe(40_000n);
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
      customerId: ownerOf.get(src),
      platformCustomerId: platformCustomerIdOf.get(ownerOf.get(src)!),
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
    expect(await posted(src)).toBe(40_000n);
    expect(await holdsOf(src)).toHaveLength(1);
  });

  it('the quote row follows its transaction to COMPLETED / FAILED without any read (same database transaction)', async () => {
    const src = await addInternal('USD', 50_000n);
    const ok = (await client.createQuote(await base({ sourceAccountId: src }))).quote!;
    const bad = (
      await client.createQuote(
        await base({
          sourceAccountId: src,
          destinationAccountId: await addExternal('EUR', ownerOf.get(src)!, '002'),
        }),
      )
    ).quote!;
    await exec(ok.id);
    // The execute's answer is the claimed quote as its hand-off moved it (not read again): a payout
    // refused at submission answers FAILED, the same quote GetQuote reads after it.
    const failed = (await exec(bad.id)).quote!;
    expect(failed.status).toBe('FAILED');
    expect(failed).toEqual((await client.getQuote({ platformId, quoteId: bad.id })).quote);
    const rowStatus = async (id: string) =>
      (await sql.query('SELECT status FROM payments.quotes WHERE id = $1', [id])).rows[0].status as string;
    await eventually(
      async () => (await rowStatus(ok.id)) === 'COMPLETED' && (await rowStatus(bad.id)) === 'FAILED',
    );
  });

  it('the payee is read again by the hold’s own call: deleted since the quote, nothing is held; not usable, refused with the hold kept for the retry', async () => {
    const src = await addInternal('USD', 50_000n);
    const owner = ownerOf.get(src)!;
    const gone = await addExternal('EUR', owner);
    const q1 = (await client.createQuote(await base({ sourceAccountId: src, destinationAccountId: gone }))).quote!;
    await sql.query(`UPDATE accounts.external_accounts SET deleted_at = now() WHERE id = $1`, [gone]);
    expect((await rejection(exec(q1.id))).code).toBe('EXTERNAL_ACCOUNT_NOT_FOUND');
    expect(await holdsOf(src)).toHaveLength(0);
    expect(await available(src)).toBe(50_000n);
    expect((await client.getQuote({ platformId, quoteId: q1.id })).quote!.status).toBe('PENDING');

    const paused = await addExternal('EUR', owner);
    const q2 = (await client.createQuote(await base({ sourceAccountId: src, destinationAccountId: paused }))).quote!;
    await markPending(paused);
    expect((await rejection(exec(q2.id))).code).toBe('EXTERNAL_ACCOUNT_NOT_USABLE');
    // The hold stays (a void now could later be replayed as placed); the quote stays PENDING.
    expect(await holdsOf(src)).toHaveLength(1);
    expect((await client.getQuote({ platformId, quoteId: q2.id })).quote!.status).toBe('PENDING');
    // Usable again: the retry replays that hold and pays once.
    await sql.query(`UPDATE accounts.external_accounts SET status = 'ACTIVE' WHERE id = $1`, [paused]);
    const executed = (await exec(q2.id)).quote!;
    expect(['PROCESSING', 'COMPLETED']).toContain(executed.status);
    await quoteStatus(q2.id, 'COMPLETED');
    expect(await holdsOf(src)).toHaveLength(1);
    expect(await posted(src)).toBe(40_000n);
    await expectReconciled();
  });

  it('an execute right after its create starts from the quote as created (no read of it); a quote a replica kept stale is answered as it is, even with its payee gone since, and moves nothing twice', async () => {
    const src = await addInternal('USD', 50_000n);
    const payee = await addExternal('EUR', ownerOf.get(src)!);
    const { quote } = await client.createQuote(await base({ sourceAccountId: src, destinationAccountId: payee }));
    const asCreated = await stack.running.graph.quoteExpiry.read(platformId, quote!.id);
    const { result: executed, statements } = await statementsDuring(
      stack.running.deps.orm,
      async () => (await exec(quote!.id)).quote!,
    );
    expect(statements.some((s) => /^UPDATE quotes SET status/i.test(s)), 'the claim ran').toBe(true);
    expect(statements.filter((s) => /^SELECT \* FROM quotes/i.test(s))).toEqual([]);
    // Nor of its transaction: the claim carries it on as the create inserted it (kept with the quote).
    expect(statements.filter((s) => /^SELECT \* FROM transactions/i.test(s))).toEqual([]);
    await quoteStatus(quote!.id, 'COMPLETED');

    // Another replica created it and still keeps it PENDING; the payee was deleted since it was paid.
    stack.running.graph.freshQuotes.remember(asCreated);
    await sql.query(`UPDATE accounts.external_accounts SET deleted_at = now() WHERE id = $1`, [payee]);
    const again = (await exec(quote!.id)).quote!;
    expect(again).toMatchObject({ status: 'COMPLETED', transactionId: executed.transactionId });
    // Kept and payee intact: the hold replays, the claim is lost, the quote is answered as it is.
    stack.running.graph.freshQuotes.remember(asCreated);
    await sql.query(`UPDATE accounts.external_accounts SET deleted_at = NULL WHERE id = $1`, [payee]);
    expect((await exec(quote!.id)).quote).toMatchObject({ status: 'COMPLETED', transactionId: executed.transactionId });
    expect(await holdsOf(src)).toHaveLength(1);
    expect(await posted(src)).toBe(40_000n);
    await expectReconciled();
  });

  it('a transaction kept with its quote that changed since the create is read under its lock and paid once', async () => {
    const src = await addInternal('USD', 50_000n);
    const { quote } = await client.createQuote(await base({ sourceAccountId: src }));
    // Something wrote the row since (its updated_at moved): the kept view is stale.
    await sql.query(`UPDATE payments.transactions SET updated_at = updated_at + interval '1 millisecond' WHERE id = $1`, [
      quote!.transactionId,
    ]);
    const { result: executed, statements } = await statementsDuring(
      stack.running.deps.orm,
      async () => (await exec(quote!.id)).quote!,
    );
    // The hand-off's write from the kept view found the row changed, read it under its lock and moved it.
    expect(statements.filter((s) => /^SELECT \* FROM transactions .* FOR UPDATE$/is.test(s))).toHaveLength(1);
    expect(executed.transactionId).toBe(quote!.transactionId);
    expect(['PROCESSING', 'COMPLETED']).toContain(executed.status);
    await quoteStatus(quote!.id, 'COMPLETED');
    expect(await holdsOf(src)).toHaveLength(1);
    expect(await posted(src)).toBe(40_000n);
    expect(await outboxTypes(quote!.transactionId!)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.COMPLETED',
    ]);
    await expectReconciled();
  });

  it('a quote kept for its execute is forgotten once this process sees it expire: the execute answers QUOTE_EXPIRED and holds nothing', async () => {
    const src = await addInternal('USD', 50_000n);
    const { quote } = await client.createQuote(await base({ sourceAccountId: src }));
    await sql.query(
      `UPDATE payments.quotes SET created_at = now() - interval '10 minutes', expires_at = now() - interval '1 second' WHERE id = $1`,
      [quote!.id],
    );
    expect((await client.getQuote({ platformId, quoteId: quote!.id })).quote!.status).toBe('EXPIRED');
    expect((await rejection(exec(quote!.id))).code).toBe('QUOTE_EXPIRED');
    expect(await holdsOf(src)).toHaveLength(0);
  });

  it('20 concurrent executes of one quote move money once (one hold, one transaction)', async () => {
    const src = await addInternal('USD', 50_000n);
    const { quote } = await client.createQuote(await base({ sourceAccountId: src }));
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => exec(quote!.id)));
    const ok = results.filter((r) => r.status === 'fulfilled').map((r) => r.value.quote!);
    expect(ok).toHaveLength(20);
    expect(new Set(ok.map((q) => q.transactionId)).size).toBe(1);
    await quoteStatus(quote!.id, 'COMPLETED');
    expect(await holdsOf(src)).toHaveLength(1);
    expect(await posted(src)).toBe(40_000n);
    const { rows } = await sql.query(
      'SELECT count(*)::int AS n FROM payments.transactions WHERE quote_id = $1',
      [quote!.id],
    );
    expect(rows[0].n).toBe(1);
    await expectReconciled();
  });

  it('a quote is created with its transaction PENDING; INSUFFICIENT_FUNDS leaves both PENDING; it executes once funded, carrying that transaction', async () => {
    const src = await addInternal('USD', 5_000n);
    const { quote } = await client.createQuote(await base({ sourceAccountId: src }));
    // The specification: PENDING = "Quote has been created".
    const created = (await client.getTransaction({ platformId, transactionId: quote!.transactionId! }))
      .transaction!;
    expect(created).toMatchObject({
      status: 'PENDING',
      type: 'OUTGOING',
      quoteId: quote!.id,
      customerId: ownerOf.get(src),
    });
    const e = await rejection(exec(quote!.id));
    expect(e.code).toBe('INSUFFICIENT_FUNDS');
    const after = (await client.getQuote({ platformId, quoteId: quote!.id })).quote!;
    expect(after.status).toBe('PENDING');
    expect(after.transactionId).toBe(quote!.transactionId);
    expect(
      (await client.getTransaction({ platformId, transactionId: quote!.transactionId! })).transaction!.status,
    ).toBe('PENDING');
    await world.fund(platformId, src, 15_000n);
    const executed = (await exec(quote!.id)).quote!;
    expect(executed.transactionId).toBe(quote!.transactionId);
    await quoteStatus(quote!.id, 'COMPLETED');
    expect(
      (await client.getTransaction({ platformId, transactionId: quote!.transactionId! })).transaction!.status,
    ).toBe('COMPLETED');
    expect(await posted(src)).toBe(10_000n);
    const { rows } = await sql.query(
      'SELECT count(*)::int AS n FROM payments.transactions WHERE quote_id = $1',
      [quote!.id],
    );
    expect(rows[0].n).toBe(1);
  });

  it('an expired quote answers QUOTE_EXPIRED, becomes EXPIRED and holds nothing', async () => {
    const src = await addInternal('USD');
    const { quote } = await client.createQuote(await base({ sourceAccountId: src }));
    await sql.query(
      `UPDATE payments.quotes SET created_at = now() - interval '10 minutes', expires_at = now() - interval '1 second' WHERE id = $1`,
      [quote!.id],
    );
    expect((await rejection(exec(quote!.id))).code).toBe('QUOTE_EXPIRED');
    expect((await client.getQuote({ platformId, quoteId: quote!.id })).quote!.status).toBe('EXPIRED');
    expect((await rejection(exec(quote!.id))).code).toBe('QUOTE_EXPIRED');
    expect(await available(src)).toBe(1_000_000n);
    // Its transaction, PENDING since the quote was created, expired with it.
    const { transaction } = await client.getTransaction({ platformId, transactionId: quote!.transactionId! });
    expect(transaction).toMatchObject({ status: 'EXPIRED', failureReason: 'QUOTE_EXPIRED' });
  });

  it('a rail failure (sandbox 004) fails the quote and voids the hold', async () => {
    const src = await addInternal('USD', 50_000n);
    const dst = await addExternal('EUR', ownerOf.get(src)!, '004');
    const { quote } = await client.createQuote(
      await base({ sourceAccountId: src, destinationAccountId: dst }),
    );
    await exec(quote!.id);
    const failed = await quoteStatus(quote!.id, 'FAILED');
    const { transaction } = await client.getTransaction({ platformId, transactionId: failed.transactionId! });
    expect(transaction!.status).toBe('FAILED');
    expect(transaction!.failureReason).toBeTruthy();
    expect(await posted(src)).toBe(50_000n);
    expect(await available(src)).toBe(50_000n);
  });

  it('sandbox 002: execution failed at submission → FAILED (QUOTE_EXECUTION_FAILED), hold voided', async () => {
    const src = await addInternal('USD', 50_000n);
    const dst = await addExternal('EUR', ownerOf.get(src)!, '002');
    const { quote } = await client.createQuote(
      await base({ sourceAccountId: src, destinationAccountId: dst }),
    );
    const executed = (await exec(quote!.id)).quote!;
    expect(executed.status).toBe('FAILED');
    const { transaction } = await client.getTransaction({
      platformId,
      transactionId: executed.transactionId!,
    });
    expect(transaction).toMatchObject({ status: 'FAILED', failureReason: 'QUOTE_EXECUTION_FAILED' });
    expect((await holdsOf(src)).map((h) => h.status)).toEqual([HOLD.VOIDED]);
    expect(await available(src)).toBe(50_000n);
    expect(await outboxTypes(executed.transactionId!)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.FAILED',
    ]);
  });

  it('sandbox 003: stays PROCESSING about 6 minutes (× time scale), then COMPLETED', async () => {
    const src = await addInternal('USD', 50_000n);
    const dst = await addExternal('EUR', ownerOf.get(src)!, '003');
    const { quote } = await client.createQuote(
      await base({ sourceAccountId: src, destinationAccountId: dst }),
    );
    const started = Date.now();
    await exec(quote!.id);
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await client.getQuote({ platformId, quoteId: quote!.id })).quote!.status).toBe('PROCESSING');
    await quoteStatus(quote!.id, 'COMPLETED');
    // 360 s × 0.01 = 3.6 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
    expect(await posted(src)).toBe(40_000n);
  });

  it('a hand-off from a view the payment has since moved past (written as seen, no locking read) finds its row changed: read under the lock, answered as it is, nothing written', async () => {
    const src = await addInternal('USD', 50_000n);
    const dst = await addExternal('EUR', ownerOf.get(src)!, '003'); // stays PROCESSING a while
    const { quote } = await client.createQuote(await base({ sourceAccountId: src, destinationAccountId: dst }));
    const executed = (await exec(quote!.id)).quote!;
    const { graph } = stack.running;
    const now = await graph.quoteExpiry.read(platformId, quote!.id);
    const t = await graph.transactions.get(platformId, executed.transactionId!);
    expect(t.status).toBe('PROCESSING');
    // The claim's view of it: PENDING, as a hand-off that lost the race to another worker holds it.
    const stale = { ...t, status: 'PENDING' as const, updatedAt: new Date(t.updatedAt.getTime() - 1) };
    const answered = await graph.quotePayments.submit(platformId, t.id, 'SANDBOX', { quote: now, transaction: stale });
    expect(answered.status).toBe('PROCESSING');
    expect(answered.updatedAt).toEqual(t.updatedAt);
    expect(await outboxTypes(t.id)).toEqual(['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.PROCESSING']);
    await quoteStatus(quote!.id, 'COMPLETED');
    expect(await outboxTypes(t.id)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.COMPLETED',
    ]);
    expect(await posted(src)).toBe(40_000n);
  });

  it('sandbox 004: counterparty delivery failed → FAILED (OFFRAMP_FAILED), hold voided', async () => {
    const src = await addInternal('USD', 50_000n);
    const dst = await addExternal('EUR', ownerOf.get(src)!, '004');
    const { quote } = await client.createQuote(
      await base({ sourceAccountId: src, destinationAccountId: dst }),
    );
    await exec(quote!.id);
    const failed = await quoteStatus(quote!.id, 'FAILED');
    const { transaction } = await client.getTransaction({ platformId, transactionId: failed.transactionId! });
    expect(transaction).toMatchObject({
      status: 'FAILED',
      failureReason: 'OFFRAMP_FAILED',
      failureDetail: 'REJECTED_BY_BANK',
    });
    expect(transaction!.refund).toBeUndefined();
    expect(await available(src)).toBe(50_000n);
    expect(await posted(src)).toBe(50_000n);
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
    const src = await addInternal('USD', 50_000n);
    const { quote } = await client.createQuote(await base({ sourceAccountId: src }));
    const fees = await system('FEES', 'USD');
    const fxUsd = await system('FX', 'USD');
    const fxEur = await system('FX', 'EUR');
    const settled = await system('SETTLEMENT', 'EUR');
    const clearing = await system('CLEARING', 'USD');
    await exec(quote!.id);
    const t = await txOf(quote!.id, 'COMPLETED');
    expect(await posted(src)).toBe(40_000n);
    expect((await system('FEES', 'USD')) - fees).toBe(40n);
    expect((await system('FX', 'USD')) - fxUsd).toBe(9_960n);
    expect((await system('FX', 'EUR')) - fxEur).toBe(-9_223n);
    expect((await system('SETTLEMENT', 'EUR')) - settled).toBe(9_223n);
    expect(await system('CLEARING', 'USD')).toBe(clearing);
    expect(t.exchangeRate).toBe('1.08');
    expect(t.rateDetails).toMatchObject({ gridApiFixedFee: 10n, gridApiVariableFeeAmount: 30n });
  });

  it('sandbox 005: COMPLETED, then returned by the receiving bank → FAILED (OFFRAMP_FAILED), then REFUNDED in full', async () => {
    const src = await addInternal('USD', 50_000n);
    const dst = await addExternal('EUR', ownerOf.get(src)!, '005');
    const { quote } = await client.createQuote(
      await base({ sourceAccountId: src, destinationAccountId: dst }),
    );
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
    expect(await posted(src)).toBe(50_000n);
    expect(await available(src)).toBe(50_000n);
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
    const src = await addInternal('USD', 50_000n);
    const dst = await addExternal('EUR', ownerOf.get(src)!, '006');
    const { quote } = await client.createQuote(
      await base({ sourceAccountId: src, destinationAccountId: dst }),
    );
    await exec(quote!.id);
    const refunded = await txOf(quote!.id, 'REFUNDED');
    expect(refunded).toMatchObject({
      failureReason: 'QUOTE_EXECUTION_FAILED',
      failureDetail: 'USER_CANCELLED',
      refund: { status: 'COMPLETED', reason: 'USER_CANCELLATION' },
    });
    expect(await posted(src)).toBe(50_000n);
    expect(await outboxTypes(refunded.id)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.FAILED',
      'OUTGOING_PAYMENT.REFUND_PENDING',
      'OUTGOING_PAYMENT.REFUND_COMPLETED',
    ]);
  });

  it('sandbox 007: payout and refund failed → FAILED with a FAILED refund; the money waits in CLEARING', async () => {
    const src = await addInternal('USD', 50_000n);
    const dst = await addExternal('EUR', ownerOf.get(src)!, '007');
    const { quote } = await client.createQuote(
      await base({ sourceAccountId: src, destinationAccountId: dst }),
    );
    const clearing = await system('CLEARING', 'USD');
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
    expect(await posted(src)).toBe(40_000n);
    expect((await system('CLEARING', 'USD')) - clearing).toBe(10_000n);
    expect(await outboxTypes(t.id)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.FAILED',
      'OUTGOING_PAYMENT.REFUND_PENDING',
      'OUTGOING_PAYMENT.REFUND_FAILED',
    ]);
  });

  it('immediatelyExecute executes at creation', async () => {
    const src = await addInternal('USD', 50_000n);
    const { quote } = await client.createQuote(
      await base({ sourceAccountId: src, immediatelyExecute: true }),
    );
    expect(quote!.transactionId).toMatch(/^Transaction:/);
    await quoteStatus(quote!.id, 'COMPLETED');
    expect(await posted(src)).toBe(40_000n);
  });

  it('immediatelyExecute without funds: the error names the quote, which stays PENDING', async () => {
    const src = await addInternal('USD', 100n);
    const e = await rejection(
      client.createQuote(await base({ sourceAccountId: src, immediatelyExecute: true })),
    );
    expect(e.code).toBe('INSUFFICIENT_FUNDS');
    const quoteId = e.details!.quoteId as string;
    expect((await client.getQuote({ platformId, quoteId })).quote!.status).toBe('PENDING');
  });

  it('production platforms have no rail yet: RAIL_UNAVAILABLE, nothing held', async () => {
    const src = await addInternal('USD');
    const { quote } = await client.createQuote(await base({ sourceAccountId: src }));
    const e = await rejection(
      client.executeQuote({ platformId, environment: common.Environment.PRODUCTION, quoteId: quote!.id }),
    );
    expect(e.code).toBe('RAIL_UNAVAILABLE');
    expect(await holdsOf(src)).toHaveLength(0);
  });

  it('the expiry releases a hold left by an execute that lost the claim to the expiry', async () => {
    const src = await addInternal('USD', 50_000n);
    const { quote } = await client.createQuote(await base({ sourceAccountId: src }));
    const holdId = `quote:${quote!.id.slice('Quote:'.length)}`;
    await stack.accounts.placeHold({
      platformId,
      holdId,
      accountId: src,
      amount: 10_000n,
      currency: 'USD',
      counterAccount: { systemAccount: accountsPb.SystemAccount.CLEARING },
      kind: 'QUOTE_EXECUTION',
    });
    expect(await available(src)).toBe(40_000n);
    await sql.query(
      `UPDATE payments.quotes SET created_at = now() - interval '10 minutes', expires_at = now() - interval '1 second' WHERE id = $1`,
      [quote!.id],
    );
    await sql.query(`UPDATE payments.scheduled_jobs SET run_at = now() WHERE id = $1`, [
      `quote.expire:${quote!.id}`,
    ]);
    await eventually(
      async () => (await stack.accounts.getHold({ platformId, holdId })).hold!.status === HOLD.VOIDED,
    );
    expect(await available(src)).toBe(50_000n);
    expect((await rejection(exec(quote!.id))).code).toBe('QUOTE_EXPIRED');
  });

  /** wallet-auth's record of a signing request: its account, action, body hash and whether it was used. */
  const signingRequest = async (requestId: string) =>
    (
      await sql.query(
        'SELECT account_id, action, body_sha256, consumed_at FROM wallet_auth.signing_request WHERE request_id = $1',
        [requestId],
      )
    ).rows[0] as
      { account_id: string; action: string; body_sha256: string; consumed_at: Date | null } | undefined;
  /** The hash wallet-auth binds a signing request to: the canonical JSON of the execute body `{"quoteId": ...}`. */
  const executeBodyHash = (quoteId: string) =>
    createHash('sha256').update(JSON.stringify({ quoteId })).digest('hex');
  // Embedded wallets hold USDC (6 decimals): 10 USDC quotes.
  const USDC_10 = 10_000_000n;

  it('EMBEDDED_WALLET sources: payloadToSign on the quote; execute only with a valid, unused wallet signature', async () => {
    const { wallet, session } = await addWallet(50_000_000n);
    const { quote } = await client.createQuote(
      await base({ sourceAccountId: wallet, lockedCurrencyAmount: USDC_10 }),
    );
    const requestId = quote!.signingRequestId!;
    expect(requestId).toMatch(/^Request:/);
    // The request wallet-auth issued: bound to the wallet, the EXECUTE_QUOTE action and the execute body, unused.
    expect(await signingRequest(requestId)).toMatchObject({
      account_id: wallet,
      action: 'EXECUTE_QUOTE',
      body_sha256: executeBodyHash(quote!.id),
      consumed_at: null,
    });
    expect(JSON.parse(quote!.payloadToSign!)).toMatchObject({
      requestId,
      accountId: wallet,
      action: 'EXECUTE_QUOTE',
      bodySha256: executeBodyHash(quote!.id),
    });
    // GET returns the same challenge (stored on the quote).
    expect((await client.getQuote({ platformId, quoteId: quote!.id })).quote!.payloadToSign).toBe(
      quote!.payloadToSign,
    );
    const stillPending = async () => {
      expect(await holdsOf(wallet)).toHaveLength(0);
      expect(await available(wallet)).toBe(50_000_000n);
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
    expect(await signingRequest(fresh.requestId)).toMatchObject({
      account_id: wallet,
      action: 'EXECUTE_QUOTE',
      body_sha256: executeBodyHash(quote!.id),
      consumed_at: null,
    });
    expect(JSON.parse(fresh.payloadToSign)).toMatchObject({ requestId: fresh.requestId, accountId: wallet });
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
    // A wrong stamp: wallet-auth's 401 passes through, nothing held, the request still unused.
    const signedExec = (signature: string, id?: string) =>
      client.executeQuote({
        platformId,
        environment: SANDBOX,
        quoteId: quote!.id,
        walletSignature: signature,
        ...(id ? { signingRequestId: id } : {}),
      });
    const forged = await rejection(signedExec('forged'));
    expect(forged.kind).toBe('UNAUTHENTICATED');
    expect(forged.code).toBe('UNAUTHORIZED');
    expect(forged.details!.reason).toBe('Invalid Service-Wallet-Signature');
    // Signed with the session key over another request's payload: refused too.
    expect((await rejection(signedExec(session.sign(fresh.payloadToSign)))).kind).toBe('UNAUTHENTICATED');
    expect((await signingRequest(requestId))!.consumed_at).toBeNull();
    await stillPending();
    // A malformed Request-Id: 400 naming the header.
    const bad = await rejection(signedExec(session.sign(quote!.payloadToSign!), 'Request:x'));
    expect(bad.code).toBe('INVALID_INPUT');
    expect(fields(bad)).toEqual(['Request-Id']);
    await stillPending();
    // The session's stamp of the quote's payload (Request-Id defaults to the quote's request): executes once.
    const stamp = session.sign(quote!.payloadToSign!);
    const done = (await signedExec(stamp)).quote!;
    expect(done.status).not.toBe('PENDING');
    expect(done.transactionId).toMatch(/^Transaction:/);
    expect((await signingRequest(requestId))!.consumed_at).toBeInstanceOf(Date);
    const holds = await holdsOf(wallet);
    expect(holds).toHaveLength(1);
    expect(holds[0]!.amount).toBe(quote!.totalSendingAmount);
    // The same stamp again: the executed quote is returned (wallet-auth, asked again, would refuse
    // the used request); no second movement.
    const again = (await signedExec(stamp, requestId)).quote!;
    expect(again.transactionId).toBe(done.transactionId);
    expect(await holdsOf(wallet)).toHaveLength(1);
    // A consumed signature replayed on another quote: 401 SIGNING_REQUEST_REUSED, nothing held.
    const { quote: second } = await client.createQuote(
      await base({ sourceAccountId: wallet, lockedCurrencyAmount: USDC_10 }),
    );
    const reused = await rejection(
      client.executeQuote({
        platformId,
        environment: SANDBOX,
        quoteId: second!.id,
        walletSignature: stamp,
        signingRequestId: requestId,
      }),
    );
    expect(reused.kind).toBe('UNAUTHENTICATED');
    expect(reused.code).toBe('SIGNING_REQUEST_REUSED');
    expect(await holdsOf(wallet)).toHaveLength(1);
    expect((await client.getQuote({ platformId, quoteId: second!.id })).quote!.status).toBe('PENDING');
    const before = await quoteCount();
    const i = await rejection(
      client.createQuote(
        await base({ sourceAccountId: wallet, lockedCurrencyAmount: USDC_10, immediatelyExecute: true }),
      ),
    );
    expect(i.code).toBe('INVALID_INPUT');
    expect(fields(i)).toEqual(['immediatelyExecute']);
    expect(await quoteCount()).toBe(before);
  });

  it('EMBEDDED_WALLET: a signed execute refused for funds used its request; a fresh challenge (202) signs the execute once funded', async () => {
    const { wallet, session } = await addWallet(5_000_000n);
    const { quote } = await client.createQuote(
      await base({ sourceAccountId: wallet, lockedCurrencyAmount: USDC_10 }),
    );
    const first = quote!.signingRequestId!;
    const signedExec = (requestId: string, payloadToSign: string) =>
      client.executeQuote({
        platformId,
        environment: SANDBOX,
        quoteId: quote!.id,
        walletSignature: session.sign(payloadToSign),
        signingRequestId: requestId,
      });
    // 10 USDC against 5: the signature is good, the hold is refused, the request is spent (in wallet-auth).
    expect((await rejection(signedExec(first, quote!.payloadToSign!))).code).toBe('INSUFFICIENT_FUNDS');
    expect((await signingRequest(first))!.consumed_at).toBeInstanceOf(Date);
    expect(await holdsOf(wallet)).toHaveLength(0);
    expect((await rejection(signedExec(first, quote!.payloadToSign!))).code).toBe('SIGNING_REQUEST_REUSED');
    // The customer tops up; the client asks for a fresh request by executing without headers.
    await world.fund(platformId, wallet, 45_000_000n);
    const { signingChallenge } = await exec(quote!.id);
    expect(signingChallenge!.requestId).not.toBe(first);
    const done = (await signedExec(signingChallenge!.requestId, signingChallenge!.payloadToSign)).quote!;
    expect(done.status).not.toBe('PENDING');
    expect(done.transactionId).toMatch(/^Transaction:/);
    const holds = await holdsOf(wallet);
    expect(holds).toHaveLength(1);
    expect(holds[0]!.amount).toBe(quote!.totalSendingAmount);
    // Executed: an unsigned execute now returns the quote as it is (no challenge, nothing moves).
    const after = await exec(quote!.id);
    expect(after.signingChallenge).toBeUndefined();
    expect(after.quote!.transactionId).toBe(done.transactionId);
    expect(await holdsOf(wallet)).toHaveLength(1);
  });

  it('an internal-account destination is booked at once: COMPLETED in the response, credited in the receiving currency', async () => {
    const src = await addInternal('USD', 50_000n);
    const dest = await addInternal('EUR', 0n);
    const { quote } = await client.createQuote(
      await base({ sourceAccountId: src, destinationAccountId: dest }),
    );
    const done = (await exec(quote!.id)).quote!;
    expect(done.status).toBe('COMPLETED');
    expect(await posted(src)).toBe(40_000n);
    expect(await posted(dest)).toBe(9_223n);
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
    expect(await posted(dest)).toBe(9_223n);
  });

  it('answers QUOTE_NOT_FOUND for unknown and another platform’s quotes, INVALID_INPUT for a malformed id', async () => {
    const { quote } = await client.createQuote(await base());
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
        await base({
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
    const src = await addInternal('EUR', 50_000n);
    const q = await umaQuote('success.usd', src);
    const before = await system('SETTLEMENT', 'USD');
    await exec(q.id);
    const done = await settled(q.id, 'COMPLETED');
    expect((await system('SETTLEMENT', 'USD')) - before).toBe(q.totalReceivingAmount);
    expect(await posted(src)).toBe(50_000n - q.totalSendingAmount);
    const { transaction } = await client.getTransaction({ platformId, transactionId: done.transactionId! });
    expect(transaction!.destination).toMatchObject({
      kind: 'UMA_ADDRESS',
      umaAddress: `$success.usd@${UMA_DOMAIN}`,
    });
  });

  it('$pending.long.usd: PROCESSING for about 6 minutes (× time scale), then COMPLETED', async () => {
    const src = await addInternal('EUR', 50_000n);
    const q = await umaQuote('pending.long.usd', src);
    await exec(q.id);
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await client.getQuote({ platformId, quoteId: q.id })).quote!.status).toBe('PROCESSING');
    await settled(q.id, 'COMPLETED');
  });

  it('$fail.compliance.usd: refused by the receiver’s compliance check → FAILED (PAY_REQUEST_FAILED), nothing moved', async () => {
    const src = await addInternal('EUR', 50_000n);
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
    expect(await posted(src)).toBe(50_000n);
    expect(await available(src)).toBe(50_000n);
  });
});

describe('REALTIME_FUNDING quotes and POST /sandbox/send', () => {
  /** A real-time-funded quote request of a new customer (unless given) to its EUR external account (unless given). */
  const rtf = async (over: Partial<pb.CreateQuoteRequest> = {}) =>
    base({
      sourceKind: 'REALTIME_FUNDING',
      sourceAccountId: '',
      sourceCurrency: 'USD',
      sourceCustomerId: over.sourceCustomerId ?? (await newCustomer()),
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
    const request = await rtf();
    const { quote } = await client.createQuote(request);
    const q = quote!;
    expect(q.source).toMatchObject({ kind: 'REALTIME_FUNDING', currency: 'USD' });
    expect(q.customerId).toBe(request.sourceCustomerId);
    expect(q.transactionId).toMatch(/^Transaction:/);
    const { transaction: pending } = await client.getTransaction({
      platformId,
      transactionId: q.transactionId!,
    });
    expect(pending).toMatchObject({
      status: 'PENDING',
      type: 'OUTGOING',
      sentAmount: 10_000n,
      platformCustomerId: platformCustomerIdOf.get(request.sourceCustomerId!),
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
    const settlementUsd = await system('SETTLEMENT', 'USD');
    const sent = await Promise.all([send(q.id), send(q.id), send(q.id, { currencyAmount: 10_000n })]);
    expect(new Set(sent.map((r) => r.transaction!.id))).toEqual(new Set([q.transactionId]));
    const done = await txStatus(q.transactionId!, 'COMPLETED');
    expect(done.settledAt).toBeInstanceOf(Date);
    // The payer's 10000 came in once from outside; 9223 EUR went out.
    expect((await system('SETTLEMENT', 'USD')) - settlementUsd).toBe(-10_000n);
    expect(await world.hasEntry(platformId, `quote:${q.id.slice('Quote:'.length)}:funding`)).toBe(true);
    await expectReconciled();
    expect((await client.getQuote({ platformId, quoteId: q.id })).quote!.status).toBe('COMPLETED');
    // Paying again answers the transaction as it is.
    expect((await send(q.id)).transaction!.status).toBe('COMPLETED');
    expect((await system('SETTLEMENT', 'USD')) - settlementUsd).toBe(-10_000n);
  });

  it('funds an internal account of another currency (on-ramp): COMPLETED in the response', async () => {
    const owner = await newCustomer();
    const dest = await addInternal('EUR', 0n, { owner });
    const { quote } = await client.createQuote(
      await rtf({ sourceCustomerId: owner, destinationAccountId: dest }),
    );
    const t = (await send(quote!.id)).transaction!;
    expect(t.status).toBe('COMPLETED');
    expect(await posted(dest)).toBe(9_223n);
  });

  it('a payout that fails before delivery refunds the payer: FAILED, then REFUNDED', async () => {
    const owner = await newCustomer();
    const dst = await addExternal('EUR', owner, '004');
    const { quote } = await client.createQuote(
      await rtf({ sourceCustomerId: owner, destinationAccountId: dst }),
    );
    const settlementUsd = await system('SETTLEMENT', 'USD');
    const clearing = await system('CLEARING', 'USD');
    await send(quote!.id);
    const t = await txStatus(quote!.transactionId!, 'REFUNDED');
    expect(t).toMatchObject({
      failureReason: 'OFFRAMP_FAILED',
      refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
    });
    expect(await system('SETTLEMENT', 'USD')).toBe(settlementUsd);
    expect(await system('CLEARING', 'USD')).toBe(clearing);
  });

  it('an unfunded quote expires with its transaction (EXPIRED, QUOTE_EXPIRED); paying it late is refused', async () => {
    const { quote } = await client.createQuote(await rtf());
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
    const { quote } = await client.createQuote(await rtf());
    const e = await rejection(send(quote!.id, over));
    expect(e.code).toBe('INVALID_INPUT');
    expect(fields(e)).toEqual([field]);
    const { transaction } = await client.getTransaction({ platformId, transactionId: quote!.transactionId! });
    expect(transaction!.status).toBe('PENDING');
  });

  it('refuses a quote funded from an account, unknown quotes and unknown customers', async () => {
    const { quote } = await client.createQuote(await base());
    const e = await rejection(send(quote!.id));
    expect(e.code).toBe('INVALID_INPUT');
    expect(fields(e)).toEqual(['quoteId']);
    expect((await rejection(send(newId('Quote')))).code).toBe('QUOTE_NOT_FOUND');
    const unknown = await rejection(
      client.createQuote(
        await rtf({
          sourceCustomerId: newId('Customer'),
          destinationAccountId: await addExternal('EUR', null),
        }),
      ),
    );
    expect(unknown.code).toBe('CUSTOMER_NOT_FOUND');
  });

  it('production platforms: RAIL_UNAVAILABLE', async () => {
    const { quote } = await client.createQuote(await rtf());
    expect((await rejection(send(quote!.id, { environment: common.Environment.PRODUCTION }))).code).toBe(
      'RAIL_UNAVAILABLE',
    );
  });
});
