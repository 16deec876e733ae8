import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { ConfigError } from '@sluice/config';
import { common, payments as pb } from '@sluice/contracts';
import { ManualClock, newId } from '@sluice/core';
import type { PromiseClient } from '@sluice/rpc';
import { runServiceCommand, startService } from '@sluice/runtime';
import { TEST_MASTER_KEYS, rejection, type World, type WorldPlatform } from '@sluice/testing';
import { paymentsService } from '../src/index.js';
import { accountInfoFor, startPaymentsWithNeighbours } from './support/neighbours.js';
import { keyringOf, REWRAP_NOTHING_LEFT, rewrapCounts, withReplicaOnKey } from './support/rewrap.js';

// The payments API over real gRPC against real Postgres: receiver lookups (stored,
// expiring, platform-scoped), exchange rates and the UMA provider directory. External
// accounts are the real accounts service's (started in-process with identity).

const DOMAIN = 'sandbox.test.sluice';
const clock = new ManualClock('2026-05-01T10:00:00Z');
let stack: Awaited<ReturnType<typeof startPaymentsWithNeighbours>>;
let client: PromiseClient<pb.PaymentsServiceClient>;
let world: World;
let sql: pg.Pool;
let P: WorldPlatform;
let otherPlatform: WorldPlatform;
let platformId: string;
const SANDBOX = common.Environment.SANDBOX;

beforeAll(async () => {
  stack = await startPaymentsWithNeighbours('payapi', {
    clock,
    env: { SANDBOX_UMA_DOMAIN: DOMAIN, LOOKUP_TTL_SECONDS: '600' },
  });
  ({ client, world, sql } = stack);
  P = await world.platform('SANDBOX');
  platformId = P.id;
  otherPlatform = await world.platform('SANDBOX');
});

afterAll(async () => {
  await stack?.stop();
});


const lookup = (receiverUmaAddress: string, extra: Partial<pb.LookupUmaReceiverRequest> = {}) =>
  client.lookupUmaReceiver({ platformId, environment: SANDBOX, receiverUmaAddress, ...extra });

describe('LookupUmaReceiver', () => {
  it('resolves each sandbox receiver with its currency, estimated rate, limits, payer data and behaviour, and stores it', async () => {
    const cases = [
      ['success.usd', 'USD', '1', pb.SandboxReceiverBehavior.SUCCESS],
      ['success.eur', 'EUR', '1.08', pb.SandboxReceiverBehavior.SUCCESS],
      ['success.mxn', 'MXN', '0.058', pb.SandboxReceiverBehavior.SUCCESS],
      ['pending.long.usd', 'USD', '1', pb.SandboxReceiverBehavior.LONG_PENDING],
      ['fail.compliance.usd', 'USD', '1', pb.SandboxReceiverBehavior.COMPLIANCE_FAILURE],
    ] as const;
    const stored_: Record<string, string> = {
      'success.usd': 'SUCCESS',
      'success.eur': 'SUCCESS',
      'success.mxn': 'SUCCESS',
      'pending.long.usd': 'LONG_PENDING',
      'fail.compliance.usd': 'COMPLIANCE_FAILURE',
    };
    for (const [local, code, rate, behavior] of cases) {
      const { lookup: l } = await lookup(`$${local}@${DOMAIN}`, {
        senderUmaAddress: '$Alice@Sender.example',
      });
      expect(l!.id).toMatch(/^Lookup:[0-9a-f-]{36}$/);
      expect(l).toMatchObject({
        platformId,
        receiverUmaAddress: `$${local}@${DOMAIN}`,
        senderUmaAddress: '$alice@sender.example',
        sendingCurrency: 'USD',
        sandboxBehavior: behavior,
        supportedCurrencies: [
          { currency: { code, decimals: 2 }, estimatedExchangeRate: rate, min: 100n, max: 1_000_000_000n },
        ],
      });
      expect(l!.expiresAt!.getTime() - l!.createdAt!.getTime()).toBe(600_000);
      const names = l!.requiredPayerDataFields.filter((f) => f.mandatory).map((f) => f.name);
      expect(names).toEqual(local.startsWith('fail') ? ['FULL_NAME', 'BIRTH_DATE'] : ['FULL_NAME']);
      // The address sealed (test/uma-addresses-at-rest.spec.ts).
      const stored = await sql.query(
        `SELECT sandbox_behavior, receiver_uma_address, sealed_receiver_uma_address FROM payments.receiver_lookups
         WHERE id = $1`,
        [l!.id],
      );
      expect(stored.rows).toEqual([
        {
          sandbox_behavior: stored_[local],
          receiver_uma_address: null,
          sealed_receiver_uma_address: expect.stringMatching(/^spu1\./),
        },
      ]);
    }
  });

  it('quotes the estimated rate from the requested sending currency', async () => {
    const { lookup: l } = await lookup(`$success.eur@${DOMAIN}`, { sendingCurrency: 'BTC' });
    // 1 EUR = 1.08 USD = 1.08 / 65000 BTC.
    expect(l!.supportedCurrencies[0]!.estimatedExchangeRate).toBe('0.0000166153846154');
  });

  it('answers 404 UMA_RECEIVER_NOT_FOUND for an unknown sandbox receiver or another domain, and stores nothing', async () => {
    const before = (await sql.query('SELECT count(*)::int AS n FROM payments.receiver_lookups')).rows[0].n;
    for (const address of [`$nobody@${DOMAIN}`, '$success.usd@elsewhere.example']) {
      const e = await rejection(lookup(address));
      expect(e).toMatchObject({ kind: 'NOT_FOUND', code: 'UMA_RECEIVER_NOT_FOUND' });
    }
    expect((await sql.query('SELECT count(*)::int AS n FROM payments.receiver_lookups')).rows[0].n).toBe(
      before,
    );
  });

  it('refuses malformed addresses with INVALID_UMA_ADDRESS on receiverUmaAddress', async () => {
    for (const bad of [
      'success.usd@x.example',
      '$@x.example',
      '$a b@x.example',
      '$a@localhost',
      '$a@b@c.example',
      `$${'a'.repeat(65)}@x.example`,
    ]) {
      const e = await rejection(lookup(bad));
      expect(e, bad).toMatchObject({
        kind: 'INVALID_ARGUMENT',
        code: 'INVALID_UMA_ADDRESS',
        details: { field: 'receiverUmaAddress' },
      });
    }
    const sender = await rejection(lookup(`$success.usd@${DOMAIN}`, { senderUmaAddress: 'alice' }));
    expect(sender).toMatchObject({ code: 'INVALID_UMA_ADDRESS', details: { field: 'senderUmaAddress' } });
  });

  it('refuses other bad fields with INVALID_INPUT naming each', async () => {
    const e = await rejection(
      client.lookupUmaReceiver({
        platformId: 'nope',
        environment: common.Environment.UNSPECIFIED,
        receiverUmaAddress: '',
        customerId: 'Customer:1',
      }),
    );
    expect(e.code).toBe('INVALID_INPUT');
    expect((e.details!.errors as { field: string }[]).map((x) => x.field).sort()).toEqual([
      'customerId',
      'environment',
      'platformId',
      'receiverUmaAddress',
    ]);
    const cur = await rejection(lookup(`$success.usd@${DOMAIN}`, { sendingCurrency: 'JPY' }));
    expect(cur).toMatchObject({ code: 'INVALID_INPUT', details: { errors: [{ field: 'sendingCurrency' }] } });
  });

  it('is UNAVAILABLE for production platforms until a UMA counterparty is configured', async () => {
    const e = await rejection(
      lookup(`$success.usd@${DOMAIN}`, { environment: common.Environment.PRODUCTION }),
    );
    expect(e).toMatchObject({ kind: 'UNAVAILABLE', code: 'UMA_COUNTERPARTY_UNAVAILABLE' });
  });
});

describe('LookupExternalAccountReceiver', () => {
  /** A platform external account made by accounts (ACTIVE; another status set as a review would). */
  const account = async (currency: string, status: 'ACTIVE' | 'INACTIVE' = 'ACTIVE', owner = P) => {
    const info =
      currency === 'USDT'
        ? { accountType: 'ETHEREUM_WALLET', address: '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB' }
        : accountInfoFor(currency);
    const { id } = await world.externalAccount(owner, null, currency, info as never);
    if (status !== 'ACTIVE') {
      await sql.query(`UPDATE accounts.external_accounts SET status = $2 WHERE id = $1`, [id, status]);
    }
    return id;
  };
  const lookupAccount = (accountId: string, extra: Partial<pb.LookupExternalAccountReceiverRequest> = {}) =>
    client.lookupExternalAccountReceiver({ platformId, environment: SANDBOX, accountId, ...extra });

  it('looks up an active account: its currency with the estimated rate and limits, no payer data; stored', async () => {
    const accountId = await account('EUR');
    const customerId = newId('Customer');
    const { lookup: l } = await lookupAccount(accountId, { customerId, sendingCurrency: 'GBP' });
    expect(l).toMatchObject({
      platformId,
      externalAccountId: accountId,
      customerId,
      sendingCurrency: 'GBP',
      // 1 EUR = 1.08 USD = 1.08 / 1.27 GBP
      supportedCurrencies: [
        {
          currency: { code: 'EUR' },
          estimatedExchangeRate: '0.850393700787',
          min: 100n,
          max: 1_000_000_000n,
        },
      ],
      requiredPayerDataFields: [],
    });
    expect(l!.receiverUmaAddress).toBeUndefined();
    const got = await client.getReceiverLookup({ platformId, lookupId: l!.id, includeExpired: false });
    expect(got.lookup).toEqual(l);
  });

  it('passes NOT_FOUND through for an unknown or another platform’s account; refuses inactive and unsupported ones', async () => {
    for (const id of [newId('ExternalAccount'), await account('USD', 'ACTIVE', otherPlatform)]) {
      expect(await rejection(lookupAccount(id))).toMatchObject({
        kind: 'NOT_FOUND',
        code: 'EXTERNAL_ACCOUNT_NOT_FOUND',
      });
    }
    expect(await rejection(lookupAccount(await account('USD', 'INACTIVE')))).toMatchObject({
      kind: 'FAILED_PRECONDITION',
      code: 'EXTERNAL_ACCOUNT_NOT_USABLE',
      details: { field: 'accountId', status: 'INACTIVE' },
    });
    expect(await rejection(lookupAccount(await account('USDT')))).toMatchObject({
      code: 'UNSUPPORTED_CURRENCY',
      details: { field: 'accountId' },
    });
  });

  it('refuses malformed ids before asking accounts', async () => {
    const e = await rejection(
      lookupAccount('InternalAccount:0190a3c2-0000-7000-8000-000000000000', { customerId: 'x' }),
    );
    expect((e.details!.errors as { field: string }[]).map((x) => x.field)).toEqual([
      'accountId',
      'customerId',
    ]);
  });
});

describe('GetReceiverLookup', () => {
  it('returns the platform’s lookup until it expires; another platform gets NOT_FOUND', async () => {
    const { lookup: l } = await lookup(`$success.mxn@${DOMAIN}`);
    const got = await client.getReceiverLookup({ platformId, lookupId: l!.id, includeExpired: false });
    expect(got.lookup).toEqual(l);
    const other = await rejection(
      client.getReceiverLookup({ platformId: newId('Platform'), lookupId: l!.id, includeExpired: false }),
    );
    expect(other).toMatchObject({ kind: 'NOT_FOUND', code: 'LOOKUP_REQUEST_NOT_FOUND' });
    clock.advance(600_000);
    const expired = await rejection(
      client.getReceiverLookup({ platformId, lookupId: l!.id, includeExpired: false }),
    );
    expect(expired).toMatchObject({
      kind: 'FAILED_PRECONDITION',
      code: 'LOOKUP_EXPIRED',
      details: { field: 'lookupId' },
    });
    expect(
      (await client.getReceiverLookup({ platformId, lookupId: l!.id, includeExpired: true })).lookup!.id,
    ).toBe(l!.id);
    const bad = await rejection(
      client.getReceiverLookup({ platformId, lookupId: 'Quote:x', includeExpired: false }),
    );
    expect(bad).toMatchObject({ code: 'INVALID_INPUT', details: { errors: [{ field: 'lookupId' }] } });
  });
});

describe('ListExchangeRates', () => {
  it('lists every corridor priced like a quote, filtered by source and destinations', async () => {
    const all = await client.listExchangeRates({
      platformId,
      environment: SANDBOX,
      destinationCurrencies: [],
    });
    expect(all.rates).toHaveLength(7 * 6);
    const some = await client.listExchangeRates({
      platformId,
      environment: SANDBOX,
      sourceCurrency: 'USD',
      destinationCurrencies: ['MXN', 'EUR', 'EUR'],
      sendingAmount: 10_000n,
    });
    expect(some.rates.map((r) => r.destinationCurrency!.code)).toEqual(['EUR', 'MXN']);
    expect(some.rates[0]).toMatchObject({
      sourceCurrency: { code: 'USD' },
      destinationPaymentRail: 'SEPA_INSTANT',
      sendingAmount: 10_000n,
      receivingAmount: 9_223n, // see the worked example in docs/payments.md
      exchangeRate: '1.08',
      fixedFee: 10n,
      variableFeeRate: '0.003',
      minSendingAmount: 100n,
      maxSendingAmount: 1_000_000_000n,
    });
    // 9960 cents converted at 1/0.058 = 171724.1… centavos → 171725 (rounded up for the customer).
    expect(some.rates[1]!.receivingAmount).toBe(171_725n);
  });

  it('refuses unknown or unsupported currencies and bad amounts, naming the field', async () => {
    const e = await rejection(
      client.listExchangeRates({
        platformId,
        environment: SANDBOX,
        sourceCurrency: 'XXX',
        destinationCurrencies: ['JPY'],
        sendingAmount: -1n,
      }),
    );
    expect((e.details!.errors as { field: string }[]).map((x) => x.field)).toEqual([
      'sourceCurrency',
      'destinationCurrency',
      'sendingAmount',
    ]);
  });
});

describe('production platforms', () => {
  it('get 503-class errors rather than sandbox prices or providers pretending to be real', async () => {
    const e = await rejection(
      client.listExchangeRates({
        platformId,
        environment: common.Environment.PRODUCTION,
        destinationCurrencies: [],
      }),
    );
    expect(e).toMatchObject({ kind: 'UNAVAILABLE', code: 'EXCHANGE_RATES_UNAVAILABLE' });
    const providers = await client.listUmaProviders({
      platformId,
      environment: common.Environment.PRODUCTION,
      sortOrder: pb.SortOrder.UNSPECIFIED,
      page: { limit: 0 },
    });
    expect(providers).toEqual({ providers: [], page: { hasMore: false, totalCount: 0 } });
  });
});

describe('ListUmaProviders', () => {
  const list = (req: Partial<pb.ListUmaProvidersRequest> = {}) =>
    client.listUmaProviders({
      platformId,
      environment: SANDBOX,
      sortOrder: pb.SortOrder.UNSPECIFIED,
      page: { limit: 0 },
      ...req,
    });

  it('pages the directory by name, desc by default, with the envelope', async () => {
    const first = await list({ page: { limit: 4 } });
    expect(first.page!.totalCount).toBe(10);
    expect(first.page!.hasMore).toBe(true);
    const names = [...first.providers.map((p) => p.name)];
    let cursor = first.page!.nextCursor;
    while (cursor) {
      const next = await list({ page: { limit: 4, cursor } });
      names.push(...next.providers.map((p) => p.name));
      cursor = next.page!.nextCursor;
      if (!next.page!.hasMore) expect(next.page!.nextCursor).toBeUndefined();
    }
    expect(names).toHaveLength(10);
    expect(names).toEqual([...names].sort((a, b) => b.toLowerCase().localeCompare(a.toLowerCase())));
    const asc = await list({ sortOrder: pb.SortOrder.ASC, page: { limit: 100 } });
    expect(asc.providers.map((p) => p.name)).toEqual([...names].reverse());
    expect(asc.providers.find((p) => p.domain === DOMAIN)).toMatchObject({
      name: 'Sluice Sandbox UMA',
      allowListStatus: true,
    });
  });

  it('filters by country, currency and allowlist', async () => {
    const mx = await list({ countryCode: 'mx', currencyCode: 'MXN', sortOrder: pb.SortOrder.ASC });
    expect(mx.providers.map((p) => p.domain)).toEqual([
      'pacifico.example',
      'orbit-remit.example',
      'quetzal.example',
      DOMAIN,
    ]);
    const allowed = await list({
      countryCode: 'MX',
      currencyCode: 'MXN',
      hasBlockedProviders: false,
      sortOrder: pb.SortOrder.ASC,
    });
    expect(allowed.providers.map((p) => p.domain)).toEqual([
      'pacifico.example',
      'orbit-remit.example',
      DOMAIN,
    ]);
    expect(allowed.page!.totalCount).toBe(3);
  });

  it('refuses bad filters, limits and cursors with field errors', async () => {
    for (const [req, field] of [
      [{ countryCode: 'USA' }, 'countryCode'],
      [{ currencyCode: 'DOGE' }, 'currencyCode'],
      [{ page: { limit: 101 } }, 'limit'],
      [{ page: { cursor: 'garbage!' } }, 'cursor'],
    ] as const) {
      const e = await rejection(list(req));
      expect(e, field).toMatchObject({ code: 'INVALID_INPUT', details: { errors: [{ field }] } });
    }
  });
});

describe('receiver lookups at rest (issue 17)', () => {
  const NAME = 'Sluice Sandbox UMA'; // what the sandbox counterparty answers as the receiver's name
  const rowOf = async (id: string) =>
    (await sql.query(`SELECT t::text AS row, t.* FROM payments.receiver_lookups t WHERE id = $1`, [id])).rows[0];

  it('the counterparty name is sealed in the row, bound to it, and GetReceiverLookup answers it', async () => {
    const { lookup: l } = await lookup(`$success.usd@${DOMAIN}`);
    expect(l!.counterpartyName).toBe(NAME);
    const row = await rowOf(l!.id);
    expect(row.row).not.toContain(NAME);
    expect(row.counterparty_name).toBeNull();
    expect(row.sealed_counterparty_name).toMatch(/^spn1\.mk_[0-9a-f]{16}\./);
    const got = await client.getReceiverLookup({ platformId, lookupId: l!.id, includeExpired: false });
    expect(got.lookup).toEqual(l);

    // Moved to another lookup's row, it does not open there (an internal error, never the other name).
    const { lookup: other } = await lookup(`$success.eur@${DOMAIN}`);
    const own = (await rowOf(other!.id)).sealed_counterparty_name;
    await sql.query(`UPDATE payments.receiver_lookups SET sealed_counterparty_name = $1 WHERE id = $2`, [
      row.sealed_counterparty_name,
      other!.id,
    ]);
    await expect(client.getReceiverLookup({ platformId, lookupId: other!.id, includeExpired: false })).rejects.toMatchObject({ grpcCode: 13 });
    await sql.query(`UPDATE payments.receiver_lookups SET sealed_counterparty_name = $1 WHERE id = $2`, [own, other!.id]);
    expect((await client.getReceiverLookup({ platformId, lookupId: other!.id, includeExpired: false })).lookup!.counterpartyName).toBe(NAME);
  });

  it('reads a name written before sealing; rewrap seals it and moves every name to a new key, and the old key can go', async () => {
    const { lookup: sealedOne } = await lookup(`$success.mxn@${DOMAIN}`);
    const { lookup: legacy } = await lookup(`$pending.long.usd@${DOMAIN}`);
    await sql.query(
      `UPDATE payments.receiver_lookups SET sealed_counterparty_name = NULL, counterparty_name = 'Grace Hopper' WHERE id = $1`,
      [legacy!.id],
    );
    const legacyBefore = (await client.getReceiverLookup({ platformId, lookupId: legacy!.id, includeExpired: false })).lookup!;
    expect(legacyBefore.counterpartyName).toBe('Grace Hopper');

    const oldKey = TEST_MASTER_KEYS.PAYMENTS_DATA_MASTER_KEY!;
    const newKey = randomBytes(32).toString('base64');
    const newId_ = keyringOf(newKey).current.id;
    const env = {
      DATABASE_URL: stack.services.db.url,
      LOG_LEVEL: 'silent',
      PAYMENTS_DATA_MASTER_KEY: newKey,
      PAYMENTS_DATA_MASTER_KEYS_RETIRED: oldKey,
    };
    // Every other name, and the lookups' UMA addresses, are sealed under the old key.
    const counts = await rewrapCounts(sql, keyringOf(oldKey).current.id, { 'receiverLookups.sealed': 1 });
    expect(counts['receiverLookups.rewrapped']).toBeGreaterThanOrEqual(1);
    expect(await runServiceCommand(paymentsService, 'rewrap', env)).toEqual(counts);
    expect(await runServiceCommand(paymentsService, 'rewrap', env)).toEqual(REWRAP_NOTHING_LEFT);
    const { rows: keys } = await sql.query(
      `SELECT DISTINCT split_part(sealed_counterparty_name, '.', 2) AS k FROM payments.receiver_lookups
       WHERE sealed_counterparty_name IS NOT NULL`,
    );
    expect(keys.map((r) => r.k)).toEqual([newId_]);
    expect((await rowOf(legacy!.id)).row).not.toContain('Grace Hopper');
    expect((await rowOf(legacy!.id)).counterparty_name).toBeNull();

    // A replica with the new key alone reads every name.
    await withReplicaOnKey(
      stack.services,
      newKey,
      async (c2) => {
        expect((await c2.getReceiverLookup({ platformId, lookupId: legacy!.id, includeExpired: false })).lookup).toEqual(legacyBefore);
        expect((await c2.getReceiverLookup({ platformId, lookupId: sealedOne!.id, includeExpired: false })).lookup).toEqual(sealedOne);
      },
      { umaDomain: DOMAIN, clock },
    );
  });

  it('a missing or malformed PAYMENTS_DATA_MASTER_KEY stops the start and rewrap with a ConfigError naming it', async () => {
    const base = { DATABASE_URL: stack.services.db.url, LOG_LEVEL: 'silent', GRPC_PORT: '0', MIGRATE_ON_START: 'false' };
    for (const env of [{}, { PAYMENTS_DATA_MASTER_KEY: randomBytes(16).toString('base64') }]) {
      for (const attempt of [
        () => startService(paymentsService, { ...base, ...env }),
        () => runServiceCommand(paymentsService, 'rewrap', { ...base, ...env }),
      ]) {
        const err = await (attempt() as Promise<unknown>).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(ConfigError);
        expect((err as ConfigError).problems.map((x) => x.variable)).toEqual(['PAYMENTS_DATA_MASTER_KEY']);
      }
    }
  });
});
