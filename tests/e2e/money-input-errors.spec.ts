/**
 * End to end: the house rule for money movement — "bad input gets a clear error with a
 * code and the field at fault, and changes nothing" — proven through the real processes
 * (gateway → payments / accounts / identity → Postgres) for the kinds of bad input that the
 * route specs (fake backends) and the service suites (gRPC) prove only at their own level.
 *
 * Every refusal is checked for its HTTP status, its `code`, what it points at (the field in
 * `details.errors[].field`, or `details.field` for domain codes; the offending id for
 * not-found answers) and a world that did not move: every balance, the list totals of both
 * platforms, the fixtures' statuses and — quotes, holds and events have no list endpoint —
 * the payments and ledger tables themselves. Another platform's ids must answer exactly like
 * unknown ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { newId } from '@sluice/core';
import { eventually } from '@sluice/testing';
import {
  startWebhookReceiver,
  apiClient,
  newCredential,
  startE2eStack,
  type Api,
  type ApiResponse,
  type E2eStack,
} from './support.js';

/** One request of a case; `as: 'production'` sends it with the other platform's credential. */
interface Req {
  method: string;
  path: string;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  as?: 'production';
}

interface Refusal extends Req {
  name: string;
  status: number;
  code: string;
  /** The request field(s) the error must name (details.errors[].field or details.field). */
  field?: string | string[];
  /** For answers about a value rather than a field (not found, expired): the details pointing at it. */
  details?: Record<string, unknown>;
}

/** The fields an error body names: `details.errors[].field` and `details.field`. */
function fieldsOf(body: any): string[] {
  const errors: any[] = Array.isArray(body?.details?.errors) ? body.details.errors : [];
  return [
    ...errors.map((e) => e.field),
    ...(typeof body?.details?.field === 'string' ? [body.details.field] : []),
  ];
}

const UMA_DOMAIN = 'sandbox.sluice.local';
const uma = (local: string) => `$${local}@${UMA_DOMAIN}`;
/** Three German IBANs with valid mod-97 check digits (account numbers …000, …111, …222). */
const IBANS = ['DE89370400440532013000', 'DE02370400440532013111', 'DE12370400440532013222'];
const ADDRESS = { line1: '1 Main St', postalCode: '94105', country: 'US' };
const person = (fullName: string) => ({ beneficiaryType: 'INDIVIDUAL', fullName, address: ADDRESS });
const usdAccountInfo = (accountNumber: string, fullName: string, routingNumber = '021000021') => ({
  accountType: 'USD_ACCOUNT',
  accountNumber,
  routingNumber,
  beneficiary: person(fullName),
});
const eurAccountInfo = (iban: string, fullName: string) => ({
  accountType: 'EUR_ACCOUNT',
  iban,
  beneficiary: person(fullName),
});

describe('money movement refuses bad input through the real processes, and changes nothing', () => {
  let e2e: E2eStack;
  let sandboxApi: Api;
  let productionApi: Api;
  let sql: pg.Pool;
  const sandbox = newCredential();
  const production = newCredential();

  // Sandbox fixtures.
  let alice: string;
  let aliceUma: string;
  let aliceUsd: string;
  let aliceEur: string;
  let bob: string;
  let platformUsd: string;
  let aliceEurExt: string;
  let aliceUsdExt: string;
  let bobUsdExt: string;
  let deletedExt: string;
  let lookupEur: string;
  let lookupForBob: string;
  let lookupMxn: string;
  let lookupExpired: string;
  let lookupForeign: string;
  let lookupExt: string;
  let pendingQuote: string;
  let realtimeQuote: string;
  let realtimeTransaction: string;
  let expiredQuote: string;
  let expiredRealtimeQuote: string;
  let awaitingApproval: string;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  // The production platform's ids (another platform as seen from the sandbox one).
  let prodCustomer: string;
  let prodUma: string;
  let prodUsd: string;
  let prodExt: string;

  const call = (r: Req): Promise<ApiResponse> =>
    (r.as === 'production' ? productionApi : sandboxApi)(r.method, r.path, {
      ...(r.body !== undefined ? { body: r.body } : {}),
      ...(r.raw !== undefined ? { raw: r.raw } : {}),
      ...(r.headers ? { headers: r.headers } : {}),
    });

  /** A call expected to succeed during set-up. */
  const ok = async (method: string, path: string, body?: unknown, as?: 'production') => {
    const r = await call({ method, path, body, ...(as ? { as } : {}) });
    expect(r.status, `${method} ${path}: ${r.text}`).toBeLessThan(300);
    return r.json;
  };

  /**
   * Everything bad input could have moved: the balance of every internal account, the list
   * totals of both platforms, the fixtures' statuses (REST); and the rows behind what has no
   * list endpoint: quotes, receiver lookups, approvals, external accounts, the ledger's running
   * totals (holds) and entries, and the events written by payments and accounts.
   */
  const world = async () => {
    const get = async (path: string, as?: 'production') => {
      const r = await call({ method: 'GET', path, ...(as ? { as } : {}) });
      expect(r.status, `${path}: ${r.text}`).toBe(200);
      return r.json;
    };
    const [customers, platform, prodAccounts, ...rest] = await Promise.all([
      get('/customers/internal-accounts?limit=100'),
      get('/platform/internal-accounts?limit=100'),
      get('/platform/internal-accounts?limit=100', 'production'),
      get('/transactions?limit=1'),
      get('/customers/external-accounts?limit=1'),
      get('/platform/external-accounts?limit=1'),
      get('/transactions?limit=1', 'production'),
      get('/customers/external-accounts?limit=1', 'production'),
      get('/platform/external-accounts?limit=1', 'production'),
      get(`/quotes/${encodeURIComponent(pendingQuote)}`),
      get(`/quotes/${encodeURIComponent(realtimeQuote)}`),
      get(`/transactions/${encodeURIComponent(realtimeTransaction)}`),
      get(`/transactions/${encodeURIComponent(awaitingApproval)}`),
    ]);
    const digest = (table: string) =>
      `(SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM ${table} t)`;
    const count = (table: string) => `(SELECT count(*)::int FROM ${table})`;
    const { rows } = await sql.query(
      `SELECT ${digest('payments.quotes')} AS quotes, ${digest('payments.transactions')} AS transactions,
              ${digest('payments.receiver_lookups')} AS lookups, ${digest('payments.incoming_approvals')} AS approvals,
              ${digest('accounts.external_accounts')} AS external_accounts,
              ${digest('accounts.ledger_accounts')} AS ledger_accounts,
              ${count('accounts.journal_entries')} AS journal_entries, ${count('accounts.journal_lines')} AS journal_lines,
              ${count('payments.outbox')} AS payment_events, ${count('accounts.outbox')} AS account_events`,
    );
    return {
      balances: Object.fromEntries(
        [...customers.data, ...platform.data, ...prodAccounts.data].map((a: any) => [a.id, a.balance.amount]),
      ),
      totals: rest.slice(0, 6).map((page) => page.totalCount),
      fixtures: rest.slice(6).map((x) => `${x.id} ${x.status} ${x.transactionId ?? ''}`),
      tables: rows[0],
    };
  };

  /** Sends each case in turn: the refusal it must get, and the world exactly as before it. */
  const refuses = async (cases: Refusal[]) => {
    const before = await world();
    for (const c of cases) {
      expect(c.field ?? c.details, `${c.name}: the case says what the error must point at`).toBeDefined();
      const r = await call(c);
      const what = `${c.name} (${c.method} ${c.path}): ${r.text}`;
      expect(r.status, what).toBe(c.status);
      expect(r.json?.code, what).toBe(c.code);
      expect(r.json.status, what).toBe(c.status);
      expect(r.json.message, what).toMatch(/\S/);
      for (const f of [c.field ?? []].flat()) expect(fieldsOf(r.json), what).toContain(f);
      if (c.details) expect(r.json.details, what).toMatchObject(c.details);
      expect(await world(), `${c.name} changed something`).toEqual(before);
    }
  };

  /**
   * Another platform's id answers exactly as an unknown id of the same kind (status and body, the
   * id aside), so nothing tells that it exists; and neither request changes anything.
   */
  const answersLikeUnknown = async (
    cases: { name: string; req: (id: string) => Req; foreign: string; unknown: string; status: number }[],
  ) => {
    const before = await world();
    for (const c of cases) {
      const theirs = await call(c.req(c.foreign));
      const unknown = await call(c.req(c.unknown));
      expect(theirs.status, `${c.name}: ${theirs.text}`).toBe(c.status);
      expect(unknown.status, `${c.name} (unknown id): ${unknown.text}`).toBe(c.status);
      expect(theirs.text.split(c.foreign).join('<id>'), c.name).toBe(
        unknown.text.split(c.unknown).join('<id>'),
      );
      expect(await world(), `${c.name} changed something`).toEqual(before);
    }
  };

  beforeAll(async () => {
    // The platform answers the approval webhook 202: it decides later, with POST /transactions/{id}/approve.
    receiver = await startWebhookReceiver((w) => ({
      status: w.type === 'INCOMING_PAYMENT.PENDING' ? 202 : 200,
    }));
    e2e = await startE2eStack(
      'e2emoneyin',
      { sandbox, production },
      {
        migrate: false,
        appEnv: {
          // Quotes outlive the file (their expiry must not move anything mid-test), and so does the
          // approval window of the incoming payment awaiting the platform (real seconds).
          payments: {
            QUOTE_TTL_SECONDS: '300',
            INCOMING_APPROVAL_ANSWER_TIMEOUT_SECONDS: '360000',
            INCOMING_APPROVAL_WINDOW_SECONDS: '360000',
          },
        },
      },
    );
    sandboxApi = apiClient(e2e.stack, sandbox);
    productionApi = apiClient(e2e.stack, production);
    sql = new pg.Pool({ connectionString: e2e.stack.databaseUrl, max: 2 });

    // Incoming payments from 1000.00 USD ask the platform.
    await ok('PATCH', '/config', {
      webhookEndpoint: receiver.url,
      supportedCurrencies: [
        { currencyCode: 'USD', incomingPaymentApprovalThreshold: 100_000 },
        { currencyCode: 'EUR' },
        { currencyCode: 'MXN' },
      ],
    });
    const a = await ok('POST', '/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'bad-input-alice',
      fullName: 'Ada Lovelace',
      region: 'US',
      currencies: ['USD', 'EUR'],
    });
    alice = a.id;
    aliceUma = a.umaAddress;
    const b = await ok('POST', '/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'bad-input-bob',
      fullName: 'Bob Babbage',
      region: 'US',
      currencies: ['USD'],
    });
    bob = b.id;
    const accountsOf = async (customerId: string) =>
      (await ok('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}`)).data;
    const aliceAccounts = await accountsOf(alice);
    aliceUsd = aliceAccounts.find((x: any) => x.balance.currency.code === 'USD').id;
    aliceEur = aliceAccounts.find((x: any) => x.balance.currency.code === 'EUR').id;
    platformUsd = (await ok('GET', '/platform/internal-accounts')).data.find(
      (x: any) => x.balance.currency.code === 'USD',
    ).id;
    await ok('POST', `/sandbox/internal-accounts/${encodeURIComponent(aliceUsd)}/fund`, { amount: 100_000 });

    const external = async (customerId: string, currency: string, accountInfo: unknown) =>
      (await ok('POST', '/customers/external-accounts', { customerId, currency, accountInfo })).id as string;
    aliceEurExt = await external(alice, 'EUR', eurAccountInfo(IBANS[0]!, 'Ada Lovelace'));
    aliceUsdExt = await external(alice, 'USD', usdAccountInfo('12345678789', 'Ada Lovelace'));
    bobUsdExt = await external(bob, 'USD', usdAccountInfo('22345678789', 'Bob Babbage'));
    deletedExt = await external(alice, 'EUR', eurAccountInfo(IBANS[1]!, 'Ada Lovelace'));
    const del = await call({ method: 'DELETE', path: `/customers/external-accounts/${deletedExt}` });
    expect(del.status, del.text).toBe(204);

    // The other platform: a customer, its own internal and external accounts.
    await ok('PATCH', '/config', { umaDomain: 'prod-bank.example.com' }, 'production');
    const p = await ok(
      'POST',
      '/customers',
      {
        customerType: 'INDIVIDUAL',
        platformCustomerId: 'bad-input-prod',
        fullName: 'Grace Hopper',
        region: 'US',
        currencies: ['USD'],
      },
      'production',
    );
    prodCustomer = p.id;
    prodUma = p.umaAddress;
    prodUsd = (await ok('GET', '/platform/internal-accounts', undefined, 'production')).data.find(
      (x: any) => x.balance.currency.code === 'USD',
    ).id;
    prodExt = (
      await ok(
        'POST',
        '/platform/external-accounts',
        { currency: 'USD', accountInfo: usdAccountInfo('32345678789', 'Grace Hopper') },
        'production',
      )
    ).id;

    // Receiver lookups: one per receiver, one for Bob, one expired, one of the other platform.
    const lookup = async (path: string) => (await ok('GET', path)).lookupId as string;
    lookupEur = await lookup(`/receiver/uma/${encodeURIComponent(uma('success.eur'))}`);
    lookupForBob = await lookup(
      `/receiver/uma/${encodeURIComponent(uma('success.eur'))}?customerId=${encodeURIComponent(bob)}`,
    );
    lookupMxn = await lookup(`/receiver/uma/${encodeURIComponent(uma('success.mxn'))}`);
    lookupExpired = await lookup(`/receiver/uma/${encodeURIComponent(uma('success.eur'))}`);
    lookupForeign = await lookup(`/receiver/uma/${encodeURIComponent(uma('success.eur'))}`);
    lookupExt = await lookup(`/receiver/external-account/${encodeURIComponent(aliceEurExt)}`);
    // Time passing, and a lookup that belongs to the other platform (it has no UMA client to make one).
    await sql.query(
      `UPDATE payments.receiver_lookups SET created_at = now() - interval '2 hours', expires_at = now() - interval '1 hour' WHERE id = $1`,
      [lookupExpired],
    );
    await sql.query(`UPDATE payments.receiver_lookups SET platform_id = $1 WHERE id = $2`, [
      e2e.stack.platforms.production!.platformId,
      lookupForeign,
    ]);

    // Quotes: one PENDING from Alice's dollars, one REALTIME_FUNDING (its transaction PENDING), two expired.
    const quote = async (source: unknown) =>
      ok('POST', '/quotes', {
        source,
        destination: { destinationType: 'ACCOUNT', accountId: aliceEurExt },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 3_000,
      });
    pendingQuote = (await quote({ sourceType: 'ACCOUNT', accountId: aliceUsd })).id;
    const rtf = await quote({ sourceType: 'REALTIME_FUNDING', currency: 'USD', customerId: alice });
    realtimeQuote = rtf.id;
    realtimeTransaction = rtf.transactionId;
    expiredQuote = (await quote({ sourceType: 'ACCOUNT', accountId: aliceUsd })).id;
    expiredRealtimeQuote = (
      await quote({ sourceType: 'REALTIME_FUNDING', currency: 'USD', customerId: alice })
    ).id;
    await sql.query(
      `UPDATE payments.quotes SET created_at = now() - interval '2 hours', expires_at = now() - interval '1 hour' WHERE id = ANY($1)`,
      [[expiredQuote, expiredRealtimeQuote]],
    );
    // Reading them records the expiry (and expires the real-time quote's transaction) before any case runs.
    for (const id of [expiredQuote, expiredRealtimeQuote]) {
      expect((await ok('GET', `/quotes/${encodeURIComponent(id)}`)).status).toBe('EXPIRED');
    }

    // An incoming payment awaiting the platform's approval.
    const incoming = await ok('POST', '/sandbox/uma/receive', {
      senderUmaAddress: uma('success.usd'),
      receiverUmaAddress: aliceUma,
      receivingCurrencyCode: 'USD',
      receivingCurrencyAmount: 100_000,
    });
    expect(incoming.status).toBe('PENDING');
    awaitingApproval = incoming.id;
    // Its 202 answer has been applied (the window it opened has its job): nothing changes under the digests.
    await eventually(async () => {
      const { rows } = await sql.query(`SELECT 1 FROM payments.scheduled_jobs WHERE id = $1`, [
        `incoming.approval-timeout:${incoming.id}:window`,
      ]);
      return rows.length ? true : undefined;
    }, 30_000);
  }, 180_000);

  afterAll(async () => {
    await sql?.end();
    await e2e?.stop();
    await receiver?.close();
  });

  const quoteBody = (over: Record<string, unknown> = {}) => ({
    source: { sourceType: 'ACCOUNT', accountId: aliceUsd },
    destination: { destinationType: 'ACCOUNT', accountId: aliceEurExt },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 1_000,
    ...over,
  });
  const umaQuoteBody = (over: Record<string, unknown> = {}) =>
    quoteBody({
      lookupId: lookupEur,
      destination: { destinationType: 'UMA_ADDRESS', umaAddress: uma('success.eur') },
      senderCustomerInfo: { FULL_NAME: 'Ada Lovelace' },
      ...over,
    });
  const postQuote = (name: string, body: unknown, expected: Omit<Refusal, 'name' | 'method' | 'path'>) => ({
    name,
    method: 'POST',
    path: '/quotes',
    body,
    ...expected,
  });
  const invalid = (field: string) => ({ status: 400, code: 'INVALID_INPUT', field });

  it('POST /quotes: lockedCurrencyAmount 0, negative, fractional, a string, null, absent, above 9000000000000000, or outside the corridor limits', async () => {
    const amount = (name: string, v: unknown, expected = invalid('lockedCurrencyAmount')) =>
      postQuote(`lockedCurrencyAmount ${name}`, quoteBody({ lockedCurrencyAmount: v }), expected);
    await refuses([
      amount('0', 0),
      amount('-1', -1),
      amount('1.5', 1.5),
      amount('"1000"', '1000'),
      amount('null', null),
      amount('absent', undefined),
      amount('9000000000000001', 9_000_000_000_000_001),
      amount('1e20', 1e20),
      // Valid integers the corridor refuses (USD → EUR: 1.00 to 10,000,000.00 either side).
      amount('50 (under the minimum)', 50, {
        status: 400,
        code: 'AMOUNT_OUT_OF_RANGE',
        field: 'lockedCurrencyAmount',
      }),
      amount('9000000000000000 (over the corridor maximum)', 9_000_000_000_000_000, {
        status: 400,
        code: 'AMOUNT_OUT_OF_RANGE',
        field: 'lockedCurrencyAmount',
      }),
      postQuote(
        'RECEIVING 9000000000000000',
        quoteBody({ lockedCurrencySide: 'RECEIVING', lockedCurrencyAmount: 9_000_000_000_000_000 }),
        { status: 400, code: 'AMOUNT_OUT_OF_RANGE', field: 'lockedCurrencyAmount' },
      ),
    ]);
  });

  it('POST /quotes: malformed, unknown, deleted, mismatched or same-currency accounts', async () => {
    const unknownInternal = newId('InternalAccount');
    const unknownExternal = newId('ExternalAccount');
    const src = (accountId: unknown, extra: Record<string, unknown> = {}) => ({
      source: { sourceType: 'ACCOUNT', ...(accountId === undefined ? {} : { accountId }), ...extra },
    });
    const dst = (accountId: unknown) => ({
      destination: { destinationType: 'ACCOUNT', ...(accountId === undefined ? {} : { accountId }) },
    });
    const notFound = (code: string, accountId: string) => ({ status: 404, code, details: { accountId } });
    await refuses([
      postQuote('a malformed source id', quoteBody(src('InternalAccount:nope')), invalid('source.accountId')),
      postQuote('no source account', quoteBody(src(undefined)), invalid('source.accountId')),
      postQuote('an external account as source', quoteBody(src(aliceEurExt)), invalid('source.accountId')),
      postQuote('a customer id as destination', quoteBody(dst(alice)), invalid('destination.accountId')),
      postQuote('no destination account', quoteBody(dst(undefined)), invalid('destination.accountId')),
      postQuote(
        'an unknown source account',
        quoteBody(src(unknownInternal)),
        notFound('INTERNAL_ACCOUNT_NOT_FOUND', unknownInternal),
      ),
      postQuote(
        'an unknown external destination',
        quoteBody(dst(unknownExternal)),
        notFound('EXTERNAL_ACCOUNT_NOT_FOUND', unknownExternal),
      ),
      postQuote(
        'an unknown internal destination',
        quoteBody(dst(unknownInternal)),
        notFound('INTERNAL_ACCOUNT_NOT_FOUND', unknownInternal),
      ),
      postQuote(
        'a deleted external destination',
        quoteBody(dst(deletedExt)),
        notFound('EXTERNAL_ACCOUNT_NOT_FOUND', deletedExt),
      ),
      postQuote('the source as destination', quoteBody(dst(aliceUsd)), invalid('destination.accountId')),
      postQuote('a same-currency external destination', quoteBody(dst(aliceUsdExt)), {
        status: 400,
        code: 'SAME_CURRENCY_QUOTE',
        field: 'destination',
      }),
      postQuote('a same-currency internal destination', quoteBody(dst(platformUsd)), {
        status: 400,
        code: 'SAME_CURRENCY_QUOTE',
        field: 'destination',
      }),
      postQuote(
        "another customer's external account",
        quoteBody({ ...src(aliceEur), ...dst(bobUsdExt) }),
        invalid('destination.accountId'),
      ),
      postQuote(
        "a customer's external account from the platform's account",
        quoteBody({ ...src(platformUsd), ...dst(aliceEurExt) }),
        invalid('destination.accountId'),
      ),
      postQuote(
        'a source.customerId that does not own the account',
        quoteBody(src(aliceUsd, { customerId: bob })),
        invalid('source.customerId'),
      ),
      postQuote(
        'a malformed source.customerId',
        quoteBody(src(aliceUsd, { customerId: 'Customer:nope' })),
        invalid('source.customerId'),
      ),
      postQuote(
        'an unknown source type',
        quoteBody({ source: { sourceType: 'CARD' } }),
        invalid('source.sourceType'),
      ),
      postQuote(
        'an unknown destination type',
        quoteBody({ destination: { destinationType: 'IBAN' } }),
        invalid('destination.destinationType'),
      ),
      postQuote(
        'real-time funding without a currency',
        quoteBody({ source: { sourceType: 'REALTIME_FUNDING', customerId: alice } }),
        invalid('source.currency'),
      ),
      postQuote(
        'real-time funding in an unknown currency',
        quoteBody({ source: { sourceType: 'REALTIME_FUNDING', currency: 'XYZ' } }),
        invalid('source.currency'),
      ),
      postQuote(
        'real-time funding in a currency without an instant rail',
        quoteBody({ source: { sourceType: 'REALTIME_FUNDING', currency: 'CAD' } }),
        { status: 400, code: 'UNSUPPORTED_CURRENCY', field: 'source.currency' },
      ),
      postQuote(
        'immediate execution of a real-time-funded quote',
        quoteBody({
          source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', customerId: alice },
          immediatelyExecute: true,
        }),
        invalid('immediatelyExecute'),
      ),
    ]);
  });

  it('POST /quotes: UMA destinations need the mandatory payer data and a live lookup of that receiver for that customer', async () => {
    const unknownLookup = newId('Lookup');
    await refuses([
      postQuote(
        'no senderCustomerInfo',
        umaQuoteBody({ senderCustomerInfo: undefined }),
        invalid('senderCustomerInfo.FULL_NAME'),
      ),
      postQuote(
        'a blank FULL_NAME',
        umaQuoteBody({ senderCustomerInfo: { FULL_NAME: '   ', NATIONALITY: 'GB' } }),
        invalid('senderCustomerInfo.FULL_NAME'),
      ),
      postQuote(
        'senderCustomerInfo not an object',
        umaQuoteBody({ senderCustomerInfo: ['Ada'] }),
        invalid('senderCustomerInfo'),
      ),
      postQuote('no lookupId', umaQuoteBody({ lookupId: undefined }), invalid('lookupId')),
      postQuote('a malformed lookupId', umaQuoteBody({ lookupId: 'Lookup:1' }), invalid('lookupId')),
      postQuote('an unknown lookupId', umaQuoteBody({ lookupId: unknownLookup }), {
        status: 404,
        code: 'LOOKUP_REQUEST_NOT_FOUND',
        field: 'lookupId',
      }),
      postQuote('an expired lookup', umaQuoteBody({ lookupId: lookupExpired }), {
        status: 400,
        code: 'LOOKUP_EXPIRED',
        field: 'lookupId',
      }),
      postQuote("another receiver's lookup", umaQuoteBody({ lookupId: lookupMxn }), invalid('lookupId')),
      postQuote("another customer's lookup", umaQuoteBody({ lookupId: lookupForBob }), invalid('lookupId')),
      postQuote(
        "an external account's lookup for a UMA address",
        umaQuoteBody({ lookupId: lookupExt }),
        invalid('lookupId'),
      ),
      postQuote(
        "a UMA receiver's lookup for an account",
        quoteBody({ lookupId: lookupEur, destination: { destinationType: 'ACCOUNT', accountId: aliceEur } }),
        invalid('lookupId'),
      ),
      postQuote(
        "an external account's lookup for another account",
        quoteBody({ lookupId: lookupExt, destination: { destinationType: 'ACCOUNT', accountId: aliceEur } }),
        invalid('lookupId'),
      ),
      postQuote(
        'a malformed UMA address',
        umaQuoteBody({ destination: { destinationType: 'UMA_ADDRESS', umaAddress: 'bob' } }),
        invalid('destination.umaAddress'),
      ),
      postQuote(
        'an unknown receiving currency',
        umaQuoteBody({
          destination: { destinationType: 'UMA_ADDRESS', umaAddress: uma('success.eur'), currency: 'XYZ' },
        }),
        invalid('destination.currency'),
      ),
      postQuote(
        'a currency the receiver does not take',
        umaQuoteBody({
          destination: { destinationType: 'UMA_ADDRESS', umaAddress: uma('success.eur'), currency: 'GBP' },
        }),
        { status: 400, code: 'UNSUPPORTED_CURRENCY', field: 'destination.currency' },
      ),
    ]);
  });

  it('POST /quotes: malformed bodies', async () => {
    await refuses([
      postQuote(
        'a lower-case locked side',
        quoteBody({ lockedCurrencySide: 'sending' }),
        invalid('lockedCurrencySide'),
      ),
      postQuote(
        'no locked side',
        quoteBody({ lockedCurrencySide: undefined }),
        invalid('lockedCurrencySide'),
      ),
      postQuote('an unknown purpose', quoteBody({ purposeOfPayment: 'FUN' }), invalid('purposeOfPayment')),
      postQuote(
        'immediatelyExecute as a string',
        quoteBody({ immediatelyExecute: 'yes' }),
        invalid('immediatelyExecute'),
      ),
      postQuote(
        'a description over 1000 characters',
        quoteBody({ description: 'x'.repeat(1001) }),
        invalid('description'),
      ),
      postQuote('an unknown field', quoteBody({ fee: 1 }), invalid('fee')),
      postQuote('no source', quoteBody({ source: undefined }), invalid('source')),
      // Fields of another source/destination type are refused, not ignored.
      postQuote(
        'an ACCOUNT source with a currency',
        quoteBody({ source: { sourceType: 'ACCOUNT', accountId: aliceUsd, currency: 'EUR' } }),
        invalid('source.currency'),
      ),
      postQuote(
        'a REALTIME_FUNDING source with an account',
        quoteBody({ source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', accountId: aliceUsd } }),
        invalid('source.accountId'),
      ),
      postQuote(
        'an ACCOUNT destination with a UMA address and a currency',
        quoteBody({
          destination: {
            destinationType: 'ACCOUNT',
            accountId: aliceEurExt,
            umaAddress: uma('success.eur'),
            currency: 'MXN',
          },
        }),
        { status: 400, code: 'INVALID_INPUT', field: ['destination.umaAddress', 'destination.currency'] },
      ),
      postQuote(
        'a UMA destination with a payment rail',
        umaQuoteBody({
          destination: {
            destinationType: 'UMA_ADDRESS',
            umaAddress: uma('success.eur'),
            paymentRail: 'SEPA',
          },
        }),
        invalid('destination.paymentRail'),
      ),
      postQuote(
        'an unknown payment rail',
        quoteBody({
          destination: { destinationType: 'ACCOUNT', accountId: aliceEurExt, paymentRail: 'TELEX' },
        }),
        invalid('destination.paymentRail'),
      ),
      postQuote(
        'a payment rail the account type has not (ACH to an IBAN)',
        quoteBody({
          destination: { destinationType: 'ACCOUNT', accountId: aliceEurExt, paymentRail: 'ACH' },
        }),
        invalid('destination.paymentRail'),
      ),
      postQuote(
        'a payment rail to an internal account',
        quoteBody({ destination: { destinationType: 'ACCOUNT', accountId: aliceEur, paymentRail: 'SEPA' } }),
        invalid('destination.paymentRail'),
      ),
      postQuote(
        'a mandatory payer-data field given as a number',
        umaQuoteBody({ senderCustomerInfo: { FULL_NAME: 5 } }),
        invalid('senderCustomerInfo.FULL_NAME'),
      ),
      postQuote(
        'a mandatory payer-data field given as an empty object',
        umaQuoteBody({ senderCustomerInfo: { FULL_NAME: {} } }),
        invalid('senderCustomerInfo.FULL_NAME'),
      ),
      { name: 'malformed JSON', method: 'POST', path: '/quotes', raw: '{"source": {', ...invalid('body') },
    ]);
  });

  it('GET /quotes/{id} and POST /quotes/{id}/execute: malformed, unknown, expired, real-time-funded; bad signature headers', async () => {
    const unknown = newId('Quote');
    const execute = (id: string) => `/quotes/${encodeURIComponent(id)}/execute`;
    await refuses([
      { name: 'GET a malformed id', method: 'GET', path: '/quotes/Quote:nope', ...invalid('quoteId') },
      { name: 'GET not an id', method: 'GET', path: '/quotes/nope', ...invalid('quoteId') },
      { name: 'execute a malformed id', method: 'POST', path: execute('Quote:nope'), ...invalid('quoteId') },
      {
        name: 'GET an unknown quote',
        method: 'GET',
        path: `/quotes/${unknown}`,
        status: 404,
        code: 'QUOTE_NOT_FOUND',
        details: { quoteId: unknown },
      },
      {
        name: 'execute an unknown quote',
        method: 'POST',
        path: execute(unknown),
        status: 404,
        code: 'QUOTE_NOT_FOUND',
        details: { quoteId: unknown },
      },
      {
        name: 'execute an expired quote',
        method: 'POST',
        path: execute(expiredQuote),
        status: 409,
        code: 'QUOTE_EXPIRED',
        details: { quoteId: expiredQuote },
      },
      {
        name: 'execute a real-time-funded quote',
        method: 'POST',
        path: execute(realtimeQuote),
        status: 409,
        code: 'QUOTE_NOT_EXECUTABLE',
        details: { quoteId: realtimeQuote },
      },
      {
        name: 'execute with a malformed Request-Id',
        method: 'POST',
        path: execute(pendingQuote),
        headers: { 'request-id': 'nope' },
        ...invalid('Request-Id'),
      },
      {
        name: 'execute with a body (it takes none)',
        method: 'POST',
        path: execute(pendingQuote),
        body: { amount: 1 },
        ...invalid('amount'),
      },
      {
        name: 'execute with an oversized Service-Wallet-Signature',
        method: 'POST',
        path: execute(pendingQuote),
        headers: { 'service-wallet-signature': 's'.repeat(5000) },
        ...invalid('Service-Wallet-Signature'),
      },
    ]);
  });

  it('an external account that is not ACTIVE (set by an operator) is shown as it is and never paid or pulled from', async () => {
    const inactive = (
      await ok('POST', '/customers/external-accounts', {
        customerId: alice,
        currency: 'EUR',
        accountInfo: eurAccountInfo(IBANS[2]!, 'Ada Lovelace'),
      })
    ).id as string;
    const usdInactive = (
      await ok('POST', '/customers/external-accounts', {
        customerId: alice,
        currency: 'USD',
        accountInfo: usdAccountInfo('42345678789', 'Ada Lovelace'),
      })
    ).id as string;
    await sql.query(`UPDATE accounts.external_accounts SET status = 'INACTIVE' WHERE id = ANY($1)`, [
      [inactive, usdInactive],
    ]);
    expect((await ok('GET', `/customers/external-accounts/${encodeURIComponent(inactive)}`)).status).toBe(
      'INACTIVE',
    );
    const notUsable = { status: 400, code: 'EXTERNAL_ACCOUNT_NOT_USABLE' };
    await refuses([
      postQuote(
        'a quote to it',
        quoteBody({ destination: { destinationType: 'ACCOUNT', accountId: inactive } }),
        { ...notUsable, field: 'destination.accountId' },
      ),
      {
        name: 'a transfer-out to it',
        method: 'POST',
        path: '/transfer-out',
        body: { source: { accountId: aliceUsd }, destination: { accountId: usdInactive }, amount: 100 },
        ...notUsable,
        field: 'destination.accountId',
      },
      {
        name: 'a transfer-in from it',
        method: 'POST',
        path: '/transfer-in',
        body: { source: { accountId: usdInactive }, destination: { accountId: aliceUsd }, amount: 100 },
        ...notUsable,
        field: 'source.accountId',
      },
      {
        name: 'a receiver lookup of it',
        method: 'GET',
        path: `/receiver/external-account/${encodeURIComponent(inactive)}`,
        ...notUsable,
        field: 'accountId',
        details: { status: 'INACTIVE' },
      },
    ]);
  });

  it('POST /transfer-out and /transfer-in: mismatched currencies or owners, bad amounts, unknown or deleted accounts', async () => {
    const unknownInternal = newId('InternalAccount');
    const unknownExternal = newId('ExternalAccount');
    const transfer = (
      name: string,
      dir: 'out' | 'in',
      source: string,
      destination: string,
      expected: Omit<Refusal, 'name' | 'method' | 'path'>,
      over: Record<string, unknown> = {},
    ): Refusal => ({
      name: `transfer-${dir}: ${name}`,
      method: 'POST',
      path: `/transfer-${dir}`,
      body: {
        source: { accountId: source },
        destination: { accountId: destination },
        amount: 1_000,
        ...over,
      },
      ...expected,
    });
    const amount = (name: string, v: unknown) =>
      transfer(`amount ${name}`, 'out', aliceUsd, aliceUsdExt, invalid('amount'), { amount: v });
    await refuses([
      transfer('another currency', 'out', aliceUsd, aliceEurExt, invalid('destination.accountId')),
      transfer('another currency', 'in', aliceEurExt, aliceUsd, invalid('source.accountId')),
      transfer("another customer's account", 'out', aliceUsd, bobUsdExt, invalid('destination.accountId')),
      transfer("another customer's account", 'in', bobUsdExt, aliceUsd, invalid('source.accountId')),
      transfer(
        "the platform's account to a customer's",
        'out',
        platformUsd,
        aliceUsdExt,
        invalid('destination.accountId'),
      ),
      transfer(
        "a customer's account into the platform's",
        'in',
        aliceUsdExt,
        platformUsd,
        invalid('source.accountId'),
      ),
      amount('0', 0),
      amount('-1', -1),
      amount('1.5', 1.5),
      amount('"1000"', '1000'),
      amount('null', null),
      amount('absent', undefined),
      amount('9000000000000001', 9_000_000_000_000_001),
      transfer('an unknown source', 'out', unknownInternal, aliceUsdExt, {
        status: 404,
        code: 'INTERNAL_ACCOUNT_NOT_FOUND',
        details: { accountId: unknownInternal },
      }),
      transfer('an unknown destination', 'out', aliceUsd, unknownExternal, {
        status: 404,
        code: 'EXTERNAL_ACCOUNT_NOT_FOUND',
        details: { accountId: unknownExternal },
      }),
      transfer('a deleted destination', 'out', aliceUsd, deletedExt, {
        status: 404,
        code: 'EXTERNAL_ACCOUNT_NOT_FOUND',
        details: { accountId: deletedExt },
      }),
      transfer('a deleted source', 'in', deletedExt, aliceEur, {
        status: 404,
        code: 'EXTERNAL_ACCOUNT_NOT_FOUND',
        details: { accountId: deletedExt },
      }),
      transfer('an unknown destination', 'in', aliceUsdExt, unknownInternal, {
        status: 404,
        code: 'INTERNAL_ACCOUNT_NOT_FOUND',
        details: { accountId: unknownInternal },
      }),
      transfer(
        'an internal account as destination',
        'out',
        aliceUsd,
        platformUsd,
        invalid('destination.accountId'),
      ),
      transfer('an internal account as source', 'in', aliceUsd, platformUsd, invalid('source.accountId')),
      transfer('a malformed source', 'out', 'InternalAccount:nope', aliceUsdExt, invalid('source.accountId')),
      transfer('a description over 1000 characters', 'out', aliceUsd, aliceUsdExt, invalid('description'), {
        description: 'x'.repeat(1001),
      }),
      transfer('an unknown field', 'in', aliceUsdExt, aliceUsd, invalid('fee'), { fee: 1 }),
    ]);
  });

  it('GET /transactions: every filter with a bad value; GET /transactions/{id} malformed or unknown', async () => {
    const list = (query: string, field: string): Refusal => ({
      name: query,
      method: 'GET',
      path: `/transactions?${query}`,
      ...invalid(field),
    });
    const foreignCursor = Buffer.from(
      JSON.stringify({ v: 2, k: '2026-01-01T00:00:00.000Z', id: 'x' }),
    ).toString('base64url');
    const unknown = newId('Transaction');
    await refuses([
      list('customerId=nobody', 'customerId'),
      list(`customerId=${encodeURIComponent(e2e.stack.platforms.production!.platformId)}`, 'customerId'),
      list('platformCustomerId=', 'platformCustomerId'),
      list('accountIdentifier=', 'accountIdentifier'),
      list('senderAccountIdentifier=', 'senderAccountIdentifier'),
      list('receiverAccountIdentifier=', 'receiverAccountIdentifier'),
      list('status=DONE', 'status'),
      list('status=completed', 'status'),
      list('type=SIDEWAYS', 'type'),
      list('reference=', 'reference'),
      list('startDate=yesterday', 'startDate'),
      list('startDate=2026-01-01', 'startDate'),
      list('endDate=2026-13-01T00:00:00Z', 'endDate'),
      list('startDate=2026-02-01T00:00:00Z&endDate=2026-01-01T00:00:00Z', 'endDate'),
      list('sortOrder=up', 'sortOrder'),
      list('limit=0', 'limit'),
      list('limit=101', 'limit'),
      list('limit=ten', 'limit'),
      list('limit=1.5', 'limit'),
      list('cursor=not-a-cursor!', 'cursor'),
      list(`cursor=${foreignCursor}`, 'cursor'),
      // Well-formed cursors whose timestamp is not one this API writes never reach SQL.
      ...['not-a-date', '99999-01-01', '2026-02-30T00:00:00.000Z'].flatMap((k) => {
        const forged = Buffer.from(JSON.stringify({ v: 1, k, id: 'x' })).toString('base64url');
        return [
          '/transactions',
          '/customers/external-accounts',
          '/platform/external-accounts',
          '/customers/internal-accounts',
        ].map((path): Refusal => ({
          name: `${path} with a cursor keyed ${k}`,
          method: 'GET',
          path: `${path}?cursor=${forged}`,
          ...invalid('cursor'),
        }));
      }),
      list('bogus=1', 'bogus'),
      {
        name: 'a malformed id',
        method: 'GET',
        path: '/transactions/Transaction:nope',
        ...invalid('transactionId'),
      },
      {
        name: 'an unknown id',
        method: 'GET',
        path: `/transactions/${unknown}`,
        status: 404,
        code: 'TRANSACTION_NOT_FOUND',
        details: { transactionId: unknown },
      },
    ]);
  });

  it('POST /transactions/{id}/approve|reject: malformed ids, bad bodies, a payment not awaiting approval', async () => {
    const decide = (verb: 'approve' | 'reject', id: string) =>
      `/transactions/${encodeURIComponent(id)}/${verb}`;
    const unknown = newId('Transaction');
    const notAwaiting = {
      status: 409,
      code: 'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL',
      details: { transactionId: realtimeTransaction },
    };
    await refuses([
      {
        name: 'approve a malformed id',
        method: 'POST',
        path: decide('approve', 'Transaction:nope'),
        ...invalid('transactionId'),
      },
      {
        name: 'reject a malformed id',
        method: 'POST',
        path: decide('reject', 'nope'),
        ...invalid('transactionId'),
      },
      {
        name: 'approve an unknown id',
        method: 'POST',
        path: decide('approve', unknown),
        status: 404,
        code: 'TRANSACTION_NOT_FOUND',
        details: { transactionId: unknown },
      },
      {
        name: 'reject an unknown id',
        method: 'POST',
        path: decide('reject', unknown),
        status: 404,
        code: 'TRANSACTION_NOT_FOUND',
        details: { transactionId: unknown },
      },
      {
        name: 'approve with receiverCustomerInfo not an object',
        method: 'POST',
        path: decide('approve', awaitingApproval),
        body: { receiverCustomerInfo: 'Ada' },
        ...invalid('receiverCustomerInfo'),
      },
      {
        name: 'approve with an unknown field',
        method: 'POST',
        path: decide('approve', awaitingApproval),
        body: { amount: 1 },
        ...invalid('amount'),
      },
      {
        name: 'approve with an array body',
        method: 'POST',
        path: decide('approve', awaitingApproval),
        body: [],
        ...invalid('body'),
      },
      {
        name: 'approve with malformed JSON',
        method: 'POST',
        path: decide('approve', awaitingApproval),
        raw: '{"receiverCustomerInfo":',
        ...invalid('body'),
      },
      {
        name: 'reject with a numeric reason',
        method: 'POST',
        path: decide('reject', awaitingApproval),
        body: { reason: 5 },
        ...invalid('reason'),
      },
      {
        name: 'reject with a reason over 1000 characters',
        method: 'POST',
        path: decide('reject', awaitingApproval),
        body: { reason: 'x'.repeat(1001) },
        ...invalid('reason'),
      },
      {
        name: 'approve an OUTGOING payment',
        method: 'POST',
        path: decide('approve', realtimeTransaction),
        ...notAwaiting,
      },
      {
        name: 'reject an OUTGOING payment',
        method: 'POST',
        path: decide('reject', realtimeTransaction),
        ...notAwaiting,
      },
    ]);
  });

  it('external accounts: identifiers failing their checks, bad references and filters, unknown or deleted ids', async () => {
    const create = (
      name: string,
      body: Record<string, unknown>,
      expected: Omit<Refusal, 'name' | 'method' | 'path'>,
      path = '/customers/external-accounts',
    ): Refusal => ({ name: `create: ${name}`, method: 'POST', path, body, ...expected });
    const forAlice = (currency: string, accountInfo: unknown) => ({
      customerId: alice,
      currency,
      accountInfo,
    });
    const unknownCustomer = newId('Customer');
    const unknownExternal = newId('ExternalAccount');
    const filter = (path: string, field: string): Refusal => ({
      name: path,
      method: 'GET',
      path,
      ...invalid(field),
    });
    const byId = (
      method: string,
      prefix: string,
      id: string,
      expected: Omit<Refusal, 'name' | 'method' | 'path'>,
    ) => ({
      name: `${method} ${prefix}/external-accounts/${id}`,
      method,
      path: `${prefix}/external-accounts/${encodeURIComponent(id)}`,
      ...expected,
    });
    const gone = (id: string) => ({
      status: 404,
      code: 'EXTERNAL_ACCOUNT_NOT_FOUND',
      details: { accountId: id },
    });
    await refuses([
      create(
        'an IBAN with a wrong checksum',
        forAlice('EUR', eurAccountInfo('DE89370400440532013001', 'Ada')),
        invalid('accountInfo.iban'),
      ),
      create(
        'no IBAN',
        forAlice('EUR', { accountType: 'EUR_ACCOUNT', beneficiary: person('Ada') }),
        invalid('accountInfo.iban'),
      ),
      create(
        'a CLABE with a wrong check digit',
        forAlice('MXN', {
          accountType: 'MXN_ACCOUNT',
          clabeNumber: '032180000118359718',
          beneficiary: person('Ada'),
        }),
        invalid('accountInfo.clabeNumber'),
      ),
      create(
        'a routing number with a wrong checksum',
        forAlice('USD', usdAccountInfo('12345678', 'Ada', '021000022')),
        invalid('accountInfo.routingNumber'),
      ),
      create(
        'a routing number of 8 digits',
        forAlice('USD', usdAccountInfo('12345678', 'Ada', '02100002')),
        invalid('accountInfo.routingNumber'),
      ),
      create(
        'an account number with letters',
        forAlice('USD', usdAccountInfo('12AB5678', 'Ada')),
        invalid('accountInfo.accountNumber'),
      ),
      create(
        'a currency its type does not hold',
        forAlice('EUR', usdAccountInfo('12345670', 'Ada')),
        invalid('currency'),
      ),
      create(
        'an unknown account type',
        forAlice('CHF', {
          accountType: 'CHF_ACCOUNT',
          iban: 'CH9300762011623852957',
          beneficiary: person('Ada'),
        }),
        invalid('accountInfo.accountType'),
      ),
      create(
        'a malformed customerId',
        { ...forAlice('USD', usdAccountInfo('12345670', 'Ada')), customerId: 'Customer:1' },
        invalid('customerId'),
      ),
      create(
        'an unknown customer',
        { ...forAlice('USD', usdAccountInfo('12345670', 'Ada')), customerId: unknownCustomer },
        { status: 404, code: 'CUSTOMER_NOT_FOUND', details: { customerId: unknownCustomer } },
      ),
      create('the same account twice', forAlice('USD', usdAccountInfo('12345678789', 'Ada Lovelace')), {
        status: 409,
        code: 'EXTERNAL_ACCOUNT_ALREADY_EXISTS',
        field: 'accountInfo.accountNumber',
      }),
      create(
        'platform: an IBAN with a wrong checksum',
        { currency: 'EUR', accountInfo: eurAccountInfo('DE89370400440532013001', 'Sluice Ltd') },
        invalid('accountInfo.iban'),
        '/platform/external-accounts',
      ),
      create(
        'platform: a customerId',
        forAlice('USD', usdAccountInfo('12345670', 'Ada')),
        invalid('customerId'),
        '/platform/external-accounts',
      ),
      create(
        'platform: a lower-case currency',
        { currency: 'usd', accountInfo: usdAccountInfo('12345670', 'Sluice Ltd') },
        invalid('currency'),
        '/platform/external-accounts',
      ),
      filter('/customers/external-accounts?limit=0', 'limit'),
      filter('/customers/external-accounts?limit=101', 'limit'),
      filter('/customers/external-accounts?cursor=not-a-cursor!', 'cursor'),
      filter('/customers/external-accounts?currency=usd', 'currency'),
      filter('/customers/external-accounts?customerId=Customer:1', 'customerId'),
      filter('/customers/external-accounts?color=red', 'color'),
      filter('/platform/external-accounts?limit=0', 'limit'),
      filter('/platform/external-accounts?limit=101', 'limit'),
      filter('/platform/external-accounts?cursor=not-a-cursor!', 'cursor'),
      filter(`/platform/external-accounts?customerId=${encodeURIComponent(alice)}`, 'customerId'),
      byId('GET', '/customers', 'ExternalAccount:nope', invalid('externalAccountId')),
      byId('DELETE', '/customers', 'ExternalAccount:nope', invalid('externalAccountId')),
      byId('DELETE', '/platform', platformUsd, invalid('externalAccountId')),
      byId('GET', '/customers', unknownExternal, gone(unknownExternal)),
      byId('DELETE', '/platform', unknownExternal, gone(unknownExternal)),
      byId('GET', '/customers', deletedExt, gone(deletedExt)),
      byId('DELETE', '/customers', deletedExt, gone(deletedExt)),
    ]);
  });

  it('receiver lookups: malformed or unknown receivers, bad query values, unknown or deleted accounts — no lookup stored', async () => {
    const unknownExternal = newId('ExternalAccount');
    const umaPath = (address: string, query = '') => `/receiver/uma/${encodeURIComponent(address)}${query}`;
    const extPath = (id: string, query = '') =>
      `/receiver/external-account/${encodeURIComponent(id)}${query}`;
    const get = (
      name: string,
      path: string,
      expected: Omit<Refusal, 'name' | 'method' | 'path'>,
    ): Refusal => ({
      name,
      method: 'GET',
      path,
      ...expected,
    });
    const badUma = (field: string) => ({ status: 400, code: 'INVALID_UMA_ADDRESS', field });
    await refuses([
      get('an address without $', umaPath('alice@bank.example'), badUma('receiverUmaAddress')),
      get('an address without a domain', umaPath('$alice@localhost'), badUma('receiverUmaAddress')),
      get('an unknown sandbox receiver', umaPath(uma('nobody')), {
        status: 404,
        code: 'UMA_RECEIVER_NOT_FOUND',
        field: 'receiverUmaAddress',
      }),
      get(
        'a malformed senderUmaAddress',
        umaPath(uma('success.eur'), '?senderUmaAddress=bob'),
        badUma('senderUmaAddress'),
      ),
      get(
        'an unknown sendingCurrency',
        umaPath(uma('success.eur'), '?sendingCurrency=XYZ'),
        invalid('sendingCurrency'),
      ),
      get(
        'a malformed sendingCurrency',
        umaPath(uma('success.eur'), '?sendingCurrency=US1'),
        invalid('sendingCurrency'),
      ),
      get(
        'a malformed customerId',
        umaPath(uma('success.eur'), '?customerId=Customer:nope'),
        invalid('customerId'),
      ),
      get('an unknown parameter', umaPath(uma('success.eur'), '?color=red'), invalid('color')),
      get('a malformed account id', extPath('ExternalAccount:nope'), invalid('accountId')),
      get('an internal account id', extPath(aliceUsd), invalid('accountId')),
      get('an unknown account', extPath(unknownExternal), {
        status: 404,
        code: 'EXTERNAL_ACCOUNT_NOT_FOUND',
        details: { accountId: unknownExternal },
      }),
      get('a deleted account', extPath(deletedExt), {
        status: 404,
        code: 'EXTERNAL_ACCOUNT_NOT_FOUND',
        details: { accountId: deletedExt },
      }),
      get(
        'an account with an unknown sendingCurrency',
        extPath(aliceEurExt, '?sendingCurrency=XYZ'),
        invalid('sendingCurrency'),
      ),
    ]);
  });

  it('GET /exchange-rates and GET /uma-providers: unknown currencies, bad amounts and filters', async () => {
    const get = (path: string, field: string): Refusal => ({
      name: path,
      method: 'GET',
      path,
      ...invalid(field),
    });
    await refuses([
      get('/exchange-rates?sourceCurrency=XYZ', 'sourceCurrency'),
      get('/exchange-rates?sourceCurrency=US1', 'sourceCurrency'),
      get('/exchange-rates?destinationCurrency=EUR&destinationCurrency=XYZ', 'destinationCurrency'),
      get('/exchange-rates?sendingAmount=-1', 'sendingAmount'),
      get('/exchange-rates?sendingAmount=1.5', 'sendingAmount'),
      get('/exchange-rates?sendingAmount=ten', 'sendingAmount'),
      get('/exchange-rates?sendingAmount=9000000000000001', 'sendingAmount'),
      get('/exchange-rates?amount=5', 'amount'),
      get('/uma-providers?countryCode=USA', 'countryCode'),
      get('/uma-providers?currencyCode=XYZ', 'currencyCode'),
      get('/uma-providers?currencyCode=US$', 'currencyCode'),
      get('/uma-providers?hasBlockedProviders=maybe', 'hasBlockedProviders'),
      get('/uma-providers?sortOrder=up', 'sortOrder'),
      get('/uma-providers?limit=0', 'limit'),
      get('/uma-providers?limit=101', 'limit'),
      get('/uma-providers?cursor=not-a-cursor!', 'cursor'),
      get('/uma-providers?region=US', 'region'),
    ]);
  });

  it('POST /sandbox/send: another currency or amount, an account-funded, unknown or expired quote', async () => {
    const send = (
      name: string,
      body: unknown,
      expected: Omit<Refusal, 'name' | 'method' | 'path'>,
    ): Refusal => ({
      name,
      method: 'POST',
      path: '/sandbox/send',
      body,
      ...expected,
    });
    const unknown = newId('Quote');
    await refuses([
      send('another currency', { quoteId: realtimeQuote, currencyCode: 'EUR' }, invalid('currencyCode')),
      send(
        'another amount',
        { quoteId: realtimeQuote, currencyCode: 'USD', currencyAmount: 2_999 },
        invalid('currencyAmount'),
      ),
      send(
        'another currency and amount',
        { quoteId: realtimeQuote, currencyCode: 'EUR', currencyAmount: 2_999 },
        { status: 400, code: 'INVALID_INPUT', field: ['currencyCode', 'currencyAmount'] },
      ),
      send(
        'amount 0',
        { quoteId: realtimeQuote, currencyCode: 'USD', currencyAmount: 0 },
        invalid('currencyAmount'),
      ),
      send(
        'a negative amount',
        { quoteId: realtimeQuote, currencyCode: 'USD', currencyAmount: -3_000 },
        invalid('currencyAmount'),
      ),
      send('an unknown currency', { quoteId: realtimeQuote, currencyCode: 'XYZ' }, invalid('currencyCode')),
      send('no currency', { quoteId: realtimeQuote }, invalid('currencyCode')),
      send('an account-funded quote', { quoteId: pendingQuote, currencyCode: 'USD' }, invalid('quoteId')),
      send('a malformed quote id', { quoteId: 'Quote:x', currencyCode: 'USD' }, invalid('quoteId')),
      send(
        'an unknown quote',
        { quoteId: unknown, currencyCode: 'USD' },
        {
          status: 404,
          code: 'QUOTE_NOT_FOUND',
          details: { quoteId: unknown },
        },
      ),
      send(
        'an expired quote',
        { quoteId: expiredRealtimeQuote, currencyCode: 'USD' },
        {
          status: 409,
          code: 'QUOTE_EXPIRED',
          details: { quoteId: expiredRealtimeQuote },
        },
      ),
      send('an unknown field', { quoteId: realtimeQuote, currencyCode: 'USD', memo: 'x' }, invalid('memo')),
    ]);
  });

  it('POST /sandbox/uma/receive: bad amounts, currencies and addresses', async () => {
    const receive = (name: string, over: Record<string, unknown>, field: string): Refusal => ({
      name,
      method: 'POST',
      path: '/sandbox/uma/receive',
      body: {
        senderUmaAddress: uma('success.usd'),
        receiverUmaAddress: aliceUma,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 1_000,
        ...over,
      },
      ...invalid(field),
    });
    const amount = (name: string, v: unknown) =>
      receive(`amount ${name}`, { receivingCurrencyAmount: v }, 'receivingCurrencyAmount');
    await refuses([
      amount('0', 0),
      amount('-3', -3),
      amount('2.5', 2.5),
      amount('"1000"', '1000'),
      amount('9000000000000001', 9_000_000_000_000_001),
      amount('absent', undefined),
      receive('an unknown currency', { receivingCurrencyCode: 'XYZ' }, 'receivingCurrencyCode'),
      receive('a lower-case currency', { receivingCurrencyCode: 'usd' }, 'receivingCurrencyCode'),
      receive('a malformed receiver', { receiverUmaAddress: 'nobody' }, 'receiverUmaAddress'),
      receive('an unknown field', { memo: 'x' }, 'memo'),
    ]);
  });

  it("another platform's ids answer exactly like unknown ones (no leak) and change nothing", async () => {
    const unknownInternal = newId('InternalAccount');
    const unknownExternal = newId('ExternalAccount');
    const unknownCustomer = newId('Customer');
    const quote =
      (over: Record<string, unknown>) =>
      (id: string): Req => ({
        method: 'POST',
        path: '/quotes',
        body: quoteBody(JSON.parse(JSON.stringify(over).split('<id>').join(id))),
      });
    const transfer =
      (dir: 'out' | 'in', source: string, destination: string) =>
      (id: string): Req => ({
        method: 'POST',
        path: `/transfer-${dir}`,
        body: {
          source: { accountId: source.replace('<id>', id) },
          destination: { accountId: destination.replace('<id>', id) },
          amount: 1_000,
        },
      });
    const path =
      (method: string, template: string, as?: 'production') =>
      (id: string): Req => ({
        method,
        path: template.replace('<id>', encodeURIComponent(id)),
        ...(as ? { as } : {}),
      });
    const account = (kind: 'internal' | 'external') =>
      kind === 'internal'
        ? { foreign: prodUsd, unknown: unknownInternal }
        : { foreign: prodExt, unknown: unknownExternal };
    await answersLikeUnknown([
      {
        name: 'quote from their account',
        req: quote({ source: { sourceType: 'ACCOUNT', accountId: '<id>' } }),
        ...account('internal'),
        status: 404,
      },
      {
        name: 'quote to their internal account',
        req: quote({
          source: { sourceType: 'ACCOUNT', accountId: aliceEur },
          destination: { destinationType: 'ACCOUNT', accountId: '<id>' },
        }),
        ...account('internal'),
        status: 404,
      },
      {
        name: 'quote to their external account',
        req: quote({ destination: { destinationType: 'ACCOUNT', accountId: '<id>' } }),
        ...account('external'),
        status: 404,
      },
      {
        name: 'quote funded in real time for their customer',
        req: quote({ source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', customerId: '<id>' } }),
        foreign: prodCustomer,
        unknown: unknownCustomer,
        status: 404,
      },
      {
        name: 'quote with their lookup',
        req: (id) => ({ method: 'POST', path: '/quotes', body: umaQuoteBody({ lookupId: id }) }),
        foreign: lookupForeign,
        unknown: newId('Lookup'),
        status: 404,
      },
      {
        name: 'transfer-out from their account',
        req: transfer('out', '<id>', aliceUsdExt),
        ...account('internal'),
        status: 404,
      },
      {
        name: 'transfer-out to their account',
        req: transfer('out', aliceUsd, '<id>'),
        ...account('external'),
        status: 404,
      },
      {
        name: 'transfer-in from their account',
        req: transfer('in', '<id>', aliceUsd),
        ...account('external'),
        status: 404,
      },
      {
        name: 'transfer-in to their account',
        req: transfer('in', aliceUsdExt, '<id>'),
        ...account('internal'),
        status: 404,
      },
      {
        name: 'GET their external account',
        req: path('GET', '/customers/external-accounts/<id>'),
        ...account('external'),
        status: 404,
      },
      {
        name: 'DELETE their external account',
        req: path('DELETE', '/platform/external-accounts/<id>'),
        ...account('external'),
        status: 404,
      },
      {
        name: 'look their external account up',
        req: path('GET', '/receiver/external-account/<id>'),
        ...account('external'),
        status: 404,
      },
      {
        name: 'look a receiver up for their customer',
        req: path('GET', `/receiver/uma/${encodeURIComponent(uma('success.eur'))}?customerId=<id>`),
        foreign: prodCustomer,
        unknown: unknownCustomer,
        status: 404,
      },
      {
        name: 'an external account for their customer',
        req: (id) => ({
          method: 'POST',
          path: '/customers/external-accounts',
          body: {
            customerId: id,
            currency: 'USD',
            accountInfo: usdAccountInfo('42345678789', 'Grace Hopper'),
          },
        }),
        foreign: prodCustomer,
        unknown: unknownCustomer,
        status: 404,
      },
      {
        name: 'an incoming payment to their customer',
        req: (address) => ({
          method: 'POST',
          path: '/sandbox/uma/receive',
          body: {
            senderUmaAddress: uma('success.usd'),
            receiverUmaAddress: address,
            receivingCurrencyCode: 'USD',
            receivingCurrencyAmount: 1_000,
          },
        }),
        foreign: prodUma,
        unknown: prodUma.replace(/^\$[^@]+/, '$nobody'),
        status: 404,
      },
      // Lists filtered by their ids are empty, exactly as for ids nobody has.
      {
        name: 'list external accounts of their customer',
        req: path('GET', '/customers/external-accounts?customerId=<id>'),
        foreign: prodCustomer,
        unknown: unknownCustomer,
        status: 200,
      },
      {
        name: 'list transactions of their customer',
        req: path('GET', '/transactions?customerId=<id>'),
        foreign: prodCustomer,
        unknown: unknownCustomer,
        status: 200,
      },
      {
        name: 'list transactions of their account',
        req: path('GET', '/transactions?accountIdentifier=<id>'),
        ...account('internal'),
        status: 200,
      },
      // The other way round: the production platform reaching for the sandbox platform's ids.
      {
        name: 'they read our quote',
        req: path('GET', '/quotes/<id>', 'production'),
        foreign: pendingQuote,
        unknown: newId('Quote'),
        status: 404,
      },
      {
        name: 'they execute our quote',
        req: path('POST', '/quotes/<id>/execute', 'production'),
        foreign: pendingQuote,
        unknown: newId('Quote'),
        status: 404,
      },
      {
        name: 'they reject our pending payment',
        req: path('POST', '/transactions/<id>/reject', 'production'),
        foreign: awaitingApproval,
        unknown: newId('Transaction'),
        status: 404,
      },
      {
        name: 'they delete our external account',
        req: path('DELETE', '/customers/external-accounts/<id>', 'production'),
        foreign: aliceEurExt,
        unknown: unknownExternal,
        status: 404,
      },
    ]);
  });

  // Last: it moves money on purpose. Proves the snapshot the cases compare against would see
  // what a refusal must not do, so "changed nothing" above cannot pass vacuously.
  it('the world snapshot sees a payment decided, a balance moved, a quote created and a hold placed', async () => {
    const before = await world();
    const approved = await ok('POST', `/transactions/${encodeURIComponent(awaitingApproval)}/approve`);
    expect(approved.status).toBe('COMPLETED');
    const afterApprove = await world();
    expect(afterApprove.balances[aliceUsd]).toBe(before.balances[aliceUsd] + 100_000);
    expect(afterApprove.fixtures).not.toEqual(before.fixtures);
    expect(afterApprove.tables.approvals).not.toBe(before.tables.approvals);
    const created = await ok('POST', '/quotes', quoteBody({ lockedCurrencyAmount: 2_000 }));
    const afterQuote = await world();
    expect(afterQuote.tables.quotes).not.toBe(afterApprove.tables.quotes);
    expect(afterQuote.balances).toEqual(afterApprove.balances);
    // The quote's transaction exists from its creation (PENDING).
    expect(afterQuote.totals[0]).toBe(afterApprove.totals[0] + 1);
    const executed = await ok('POST', `/quotes/${encodeURIComponent(created.id)}/execute`);
    expect(executed.transactionId).toMatch(/^Transaction:/);
    const afterExecute = await world();
    expect(afterExecute.tables.transactions).not.toBe(afterQuote.tables.transactions);
    expect(afterExecute.tables.ledger_accounts).not.toBe(afterQuote.tables.ledger_accounts);
    expect(afterExecute.tables.journal_entries).toBeGreaterThan(afterQuote.tables.journal_entries);
    // Execution carries that transaction forward: no second one.
    expect(afterExecute.totals[0]).toBe(afterQuote.totals[0]);
  });
});
