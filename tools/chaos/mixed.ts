/**
 * The chaos scenario's mixed load (tools/chaos/scenario.ts): beside the quote/execute payers,
 * `mixed` clients of each kind, every request through the scenario's retry-until-final
 * `request` (an Idempotency-Key on every POST):
 *
 * - customers: POST /customers, one new customer (with its internal accounts) per round;
 * - transfers: POST /transfer-out from a funded USD account of its own to a USD external account;
 * - wallet: one embedded wallet (EMAIL_OTP credential, sandbox OTP, a real session key from the
 *   encrypted bundle, `@sluice/wallet-client`'s stamps) doing signed retries in a loop: the
 *   wallet setting (PATCH /internal-accounts/{id}, UPDATE_INTERNAL_ACCOUNT), a quote from the
 *   wallet executed with a stamp (EXECUTE_QUOTE; first the quote's own payloadToSign, then the
 *   202 path) and, every third round, a session refresh (REFRESH_SESSION, the next rounds
 *   signing with the new session). Each accepted signed request is then replayed (the same
 *   stamp and Request-Id under a fresh key): it must be refused as reused — an execute may
 *   instead answer the quote it already executed, never a second transaction.
 *
 * A signed request whose answer a fault ate is retried with the same stamp; when that retry is
 * refused SIGNING_REQUEST_REUSED (the lost attempt consumed the request), the client starts
 * again from step 1, as a client that never learnt the outcome does.
 *
 * The transfer and wallet accounts are handed to the money check with their outcomes, as payers.
 */
import type pg from 'pg';
import { performance } from 'node:perf_hooks';
import { decryptSessionBundle, generateKeyPair, stamp } from '@sluice/wallet-client';
import type { HttpResponse } from '../bench/gateway.js';
import { eurAccountInfo, usdAccountInfo, type Payer } from '../bench/system.js';
import type { PairOutcome } from '../bench/stats.js';

export type ChaosRequest = (
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
) => Promise<HttpResponse>;

type SignedKind = 'settings' | 'execute' | 'refresh';

export interface MixedFigures {
  customers: { attempted: number; created: number; duplicates: number; withoutAccounts: number };
  transfers: { attempted: number; accepted: number; statuses: Record<string, number> };
  wallet: {
    /** Stamped requests sent (each with its own request id; retries of one request count once). */
    signed: { attempted: number; accepted: number; refused: Record<string, number> };
    /** Stamped requests refused as reused after a retry (the lost attempt had consumed them); started again. */
    lostAndRestarted: number;
    /** Wallet quotes that expired before their signed execute got through (the client's final answer QUOTE_EXPIRED). */
    expiredBeforeExecuted: number;
    /** Accepted signed requests sent again with the same stamp and request id. */
    replays: { sent: number; refused: number; sameExecution: number; acceptedTwice: number };
    byKind: Record<SignedKind, number>;
    /** From wallet_auth.signing_request: requests issued and consumed per action. */
    requests: Record<string, { issued: number; consumed: number }>;
    sessions: number;
  };
}

const WALLET_FUND = 100_000_000_000n; // 100 000 USDC (6 decimals)
const TRANSFER_FUND = 1_000_000_000n;

/** Index ranges of the payers the mixed clients hand to the money check (beside the quote payers 0..clients-1). */
const TRANSFER_PAYER = 1000;
const WALLET_PAYER = 2000;

export function mixedLoad(o: {
  pool: pg.Pool;
  request: ChaosRequest;
  /** Clients of each kind (0: none). */
  mixed: number;
  outcomes: PairOutcome[];
}) {
  const { pool, request } = o;
  const problems: string[] = [];
  const customers = new Map<string, string>(); // platformCustomerId → id answered
  let customersAttempted = 0;
  const transfers = new Map<string, string>(); // Idempotency-Key → transaction id answered
  let transfersAttempted = 0;
  const signedStats = { attempted: 0, accepted: 0, refused: {} as Record<string, number> };
  const replays = { sent: 0, refused: 0, sameExecution: 0, acceptedTwice: 0 };
  const byKind: Record<SignedKind, number> = { settings: 0, execute: 0, refresh: 0 };
  let lostAndRestarted = 0;
  let expiredBeforeExecuted = 0;
  const acceptedRequestIds: string[] = [];
  const transferPayers: Payer[] = [];
  const wallets: (Payer & { sessionKey: string; sessionId: string })[] = [];
  const enc = encodeURIComponent;

  const must = (r: HttpResponse, status: number, what: string) => {
    if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 300)}`);
    return r.json;
  };

  /** A customer with an account in `currency` (read back) and the external account given. */
  const customerWithAccount = async (label: string, currency: string, filter: string, external: unknown, externalCurrency: string) => {
    const c = must(
      await request(
        'POST',
        '/customers',
        { customerType: 'INDIVIDUAL', platformCustomerId: label, fullName: `Chaos ${label}`, email: `${label}@chaos.test`, currencies: ['USD'] },
        { 'idempotency-key': `${label}-customer` },
      ),
      201,
      'POST /customers',
    );
    const list = must(
      await request('GET', `/customers/internal-accounts?customerId=${enc(c.id)}&${filter}`, undefined, {}),
      200,
      'GET /customers/internal-accounts',
    );
    const account = (list.data as { id: string; balance: { currency: { code: string } } }[]).find(
      (a) => a.balance.currency.code === currency,
    );
    if (!account) throw new Error(`${label}: no ${currency} account (${filter}): ${JSON.stringify(list)}`);
    const ext = must(
      await request(
        'POST',
        '/customers/external-accounts',
        { customerId: c.id, currency: externalCurrency, accountInfo: external },
        { 'idempotency-key': `${label}-external` },
      ),
      201,
      'POST /customers/external-accounts',
    );
    return { customerId: c.id as string, accountId: account.id, externalAccountId: ext.id as string };
  };

  const fund = async (accountId: string, amount: bigint, key: string) =>
    BigInt(
      must(
        await request('POST', `/sandbox/internal-accounts/${enc(accountId)}/fund`, { amount: Number(amount) }, { 'idempotency-key': key }),
        200,
        'POST /sandbox/internal-accounts/{id}/fund',
      ).balance.amount,
    );

  /** Platform config for wallets, then each transfer account and wallet (with its first session). */
  async function setup(): Promise<Payer[]> {
    if (!o.mixed) return [];
    must(
      await request(
        'PATCH',
        '/config',
        {
          supportedCurrencies: [{ currencyCode: 'USD' }, { currencyCode: 'EUR' }, { currencyCode: 'USDC' }],
          embeddedWalletConfig: { currencies: ['USDC'], appName: 'Chaos wallets' },
        },
        {},
      ),
      200,
      'PATCH /config',
    );
    for (let i = 0; i < o.mixed; i++) {
      const t = await customerWithAccount(`chaos-xfer-${i}`, 'USD', 'currency=USD', usdAccountInfo(i), 'USD');
      const funded = await fund(t.accountId, TRANSFER_FUND, `chaos-xfer-${i}-fund`);
      transferPayers.push({ index: TRANSFER_PAYER + i, ...t, funded });

      const w = await customerWithAccount(`chaos-wallet-${i}`, 'USDC', 'type=EMBEDDED_WALLET', eurAccountInfo(WALLET_PAYER + i), 'EUR');
      const cred = must(
        await request('POST', '/auth/credentials', { accountId: w.accountId, type: 'EMAIL_OTP' }, { 'idempotency-key': `chaos-wallet-${i}-credential` }),
        201,
        'POST /auth/credentials',
      );
      const keys = generateKeyPair();
      const session = must(
        await request(
          'POST',
          `/auth/credentials/${enc(cred.id)}/verify`,
          { type: 'EMAIL_OTP', otp: '000000', clientPublicKey: keys.publicKey },
          { 'idempotency-key': `chaos-wallet-${i}-verify` },
        ),
        200,
        'POST /auth/credentials/{id}/verify',
      );
      const sessionKey = await decryptSessionBundle(session.encryptedSessionSigningKey, keys.privateKey);
      const walletFunded = await fund(w.accountId, WALLET_FUND, `chaos-wallet-${i}-fund`);
      wallets.push({ index: WALLET_PAYER + i, ...w, funded: walletFunded, sessionKey, sessionId: session.id });
    }
    return [...transferPayers, ...wallets];
  }

  async function customerRound(client: number, seq: number) {
    const pcid = `chaos-cust-${client}-${seq}`;
    customersAttempted++;
    const r = await request(
      'POST',
      '/customers',
      { customerType: 'INDIVIDUAL', platformCustomerId: pcid, fullName: `Chaos Customer ${client} ${seq}`, currencies: ['USD'] },
      { 'idempotency-key': `chaos-customer-${client}-${seq}` },
    );
    if (r.status === 201) customers.set(pcid, r.json.id);
    else problems.push(`POST /customers (${pcid}) answered ${r.status} ${r.text.slice(0, 120)}`);
  }

  async function transferRound(payer: Payer, client: number, seq: number) {
    const key = `chaos-transfer-${client}-${seq}`;
    const amount = 100 + (seq % 7);
    transfersAttempted++;
    const now = performance.now();
    const r = await request(
      'POST',
      '/transfer-out',
      { source: { accountId: payer.accountId }, destination: { accountId: payer.externalAccountId }, amount },
      { 'idempotency-key': key },
    );
    const end = performance.now();
    if (r.status === 201) {
      transfers.set(key, r.json.id);
      o.outcomes.push({ ok: true, payer: payer.index, sent: BigInt(r.json.sentAmount.amount), startedAt: now, endedAt: end });
    } else {
      o.outcomes.push({ ok: false, payer: payer.index, error: `transfer:${r.status}`, startedAt: now, endedAt: end });
      problems.push(`POST /transfer-out (${key}) answered ${r.status} ${r.text.slice(0, 120)}`);
    }
  }

  /**
   * A signed retry to its final answer: step 1 (or the challenge given), the stamped request
   * retried until final, started again from step 1 when a lost attempt consumed the request.
   * Returns the final answer and the stamped headers that got it accepted (when one did).
   */
  async function signed(
    kind: SignedKind,
    method: string,
    path: string,
    body: unknown,
    key: string | undefined,
    sessionKey: string,
    given?: { payloadToSign: string; requestId?: string },
  ): Promise<{ r: HttpResponse; stamped?: Record<string, string> }> {
    const idem: Record<string, string> = key ? { 'idempotency-key': key } : {};
    let challenge = given;
    for (let round = 1; ; round++) {
      if (!challenge) {
        const first = await request(method, path, body, idem);
        // Not a challenge: an answer stored under the key, or an execute already done.
        if (first.status !== 202) return { r: first };
        challenge = first.json as { payloadToSign: string; requestId: string };
      }
      const stamped: Record<string, string> = {
        'service-wallet-signature': stamp(challenge.payloadToSign, sessionKey),
        ...(challenge.requestId ? { 'request-id': challenge.requestId } : {}),
      };
      signedStats.attempted++;
      const r = await request(method, path, body, { ...idem, ...stamped });
      if (r.status >= 200 && r.status < 300) {
        signedStats.accepted++;
        byKind[kind]++;
        if (challenge.requestId) acceptedRequestIds.push(challenge.requestId);
        return { r, stamped };
      }
      const code = String(r.json?.code ?? r.status);
      signedStats.refused[code] = (signedStats.refused[code] ?? 0) + 1;
      if (code !== 'SIGNING_REQUEST_REUSED' || round >= 5) return { r };
      lostAndRestarted++;
      challenge = undefined;
    }
  }

  /** The accepted stamp again, under a fresh key: refused as reused (an execute: the same transaction). */
  async function replay(what: string, method: string, path: string, body: unknown, stamped: Record<string, string>, executed?: string) {
    replays.sent++;
    const r = await request(method, path, body, { ...stamped, ...(method === 'POST' ? { 'idempotency-key': `${what}-replay` } : {}) });
    if (r.status === 401 && r.json?.code === 'SIGNING_REQUEST_REUSED') replays.refused++;
    else if (executed && r.status === 200 && r.json?.transactionId === executed) replays.sameExecution++;
    else {
      replays.acceptedTwice += r.status >= 200 && r.status < 300 ? 1 : 0;
      problems.push(`signed ${what} replayed: ${r.status} ${r.text.slice(0, 160)}`);
    }
  }

  async function walletRound(w: (typeof wallets)[number], client: number, seq: number) {
    const label = `chaos-w-${client}-${seq}`;
    // The wallet setting (PATCH, no Idempotency-Key: it is not a POST).
    const path = `/internal-accounts/${enc(w.accountId)}`;
    const body = { privateEnabled: seq % 2 === 0 };
    const s = await signed('settings', 'PATCH', path, body, undefined, w.sessionKey);
    if (s.r.status !== 200) problems.push(`signed PATCH ${label}: ${s.r.status} ${s.r.text.slice(0, 160)}`);
    else if (s.stamped) await replay(`${label}-settings`, 'PATCH', path, body, s.stamped);

    // A quote from the wallet, executed with a stamp of the quote's own payloadToSign.
    const now = performance.now();
    const q = await request(
      'POST',
      '/quotes',
      {
        source: { sourceType: 'ACCOUNT', accountId: w.accountId },
        destination: { destinationType: 'ACCOUNT', accountId: w.externalAccountId },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 5_000_000, // 5 USDC: above the rail minimum (1 USDC, 1 EUR received)
      },
      { 'idempotency-key': `${label}-quote` },
    );
    if (q.status !== 201) {
      o.outcomes.push({ ok: false, payer: w.index, error: `create:${q.status}`, startedAt: now, endedAt: performance.now() });
      problems.push(`POST /quotes from a wallet (${label}) answered ${q.status} ${q.text.slice(0, 120)}`);
    } else {
      const xpath = `/quotes/${enc(q.json.id)}/execute`;
      const e = await signed('execute', 'POST', xpath, undefined, `${label}-execute`, w.sessionKey, {
        payloadToSign: q.json.payloadToSign,
      });
      const end = performance.now();
      if (e.r.status === 200) {
        o.outcomes.push({ ok: true, payer: w.index, quoteId: e.r.json.id, sent: BigInt(e.r.json.totalSendingAmount), startedAt: now, endedAt: end });
        if (e.stamped) await replay(`${label}-execute`, 'POST', xpath, undefined, e.stamped, e.r.json.transactionId);
      } else {
        o.outcomes.push({ ok: false, payer: w.index, quoteId: q.json.id, error: `execute:${e.r.status}${e.r.json?.code ? ` ${e.r.json.code}` : ''}`, startedAt: now, endedAt: end });
        // A quote may expire (QUOTE_TTL_SECONDS) while its execute waits out a crashed gateway's key
        // lease and restarts at high load, as a payer's may: counted, and the money check covers it.
        if (e.r.json?.code === 'QUOTE_EXPIRED') expiredBeforeExecuted++;
        else problems.push(`signed execute ${label}: ${e.r.status} ${e.r.text.slice(0, 160)}`);
      }
    }

    // Every third round: a new session, signed by the current one; the next rounds sign with it.
    if (seq % 3 === 2) {
      const keys = generateKeyPair();
      const rpath = `/auth/sessions/${enc(w.sessionId)}/refresh`;
      const rbody = { clientPublicKey: keys.publicKey };
      const f = await signed('refresh', 'POST', rpath, rbody, `${label}-refresh`, w.sessionKey);
      if (f.r.status !== 201) problems.push(`signed refresh ${label}: ${f.r.status} ${f.r.text.slice(0, 160)}`);
      else {
        if (f.stamped) await replay(`${label}-refresh`, 'POST', rpath, rbody, f.stamped);
        w.sessionKey = await decryptSessionBundle(f.r.json.encryptedSessionSigningKey, keys.privateKey);
        w.sessionId = f.r.json.id;
      }
    }
  }

  /** The client loops, each repeating its round until `done()`. */
  function loops(done: () => boolean): Promise<void>[] {
    const out: Promise<void>[] = [];
    for (let c = 0; c < o.mixed; c++) {
      out.push(
        (async () => {
          for (let seq = 0; !done(); seq++) await customerRound(c, seq);
        })(),
        (async () => {
          for (let seq = 0; !done(); seq++) await transferRound(transferPayers[c]!, c, seq);
        })(),
        (async () => {
          for (let seq = 0; !done(); seq++) await walletRound(wallets[c]!, c, seq);
        })(),
      );
    }
    return out;
  }

  /** After the load (payments settled): customers once each, transfers terminal, signing requests used once. */
  async function check(platformId: string): Promise<{ figures: MixedFigures; problems: string[] }> {
    // Customers: one per platformCustomerId, the one answered, with its internal accounts.
    const rows = await pool.query<{ pcid: string; ids: string[] }>(
      `SELECT platform_customer_id AS pcid, array_agg(id) AS ids FROM identity.customers
        WHERE platform_id = $1 AND platform_customer_id LIKE 'chaos-cust-%' AND deleted_at IS NULL GROUP BY 1`,
      [platformId],
    );
    const dup = rows.rows.filter((r) => r.ids.length > 1);
    if (dup.length)
      problems.push(`${dup.length} platformCustomerIds with more than one customer: ${dup.slice(0, 3).map((d) => `${d.pcid} ${d.ids.join(',')}`).join('; ')}`);
    const byPcid = new Map(rows.rows.map((r) => [r.pcid, r.ids]));
    const notAsAnswered = [...customers].filter(([pcid, id]) => !byPcid.get(pcid)?.includes(id));
    if (notAsAnswered.length)
      problems.push(`${notAsAnswered.length} customers answered 201 are not stored as answered: ${notAsAnswered.slice(0, 3).map(([p, id]) => `${p} ${id}`).join('; ')}`);
    const accounts = await pool.query<{ customer_id: string; types: string[] }>(
      `SELECT customer_id, array_agg(type ORDER BY type) AS types FROM accounts.internal_accounts
        WHERE platform_id = $1 AND customer_id = ANY($2::text[]) GROUP BY 1`,
      [platformId, [...customers.values()]],
    );
    const typesOf = new Map(accounts.rows.map((r) => [r.customer_id, r.types]));
    const withoutAccounts = [...customers.values()].filter((id) => {
      const t = typesOf.get(id) ?? [];
      return !t.includes('INTERNAL_FIAT') || !t.includes('EMBEDDED_WALLET');
    });
    if (withoutAccounts.length)
      problems.push(`${withoutAccounts.length} customers answered 201 lack their USD or wallet account: ${withoutAccounts.slice(0, 3).map((id) => `${id} ${JSON.stringify(typesOf.get(id) ?? [])}`).join('; ')}`);

    // Transfers: each key one transaction, the one answered, terminal (COMPLETED: the destination completes).
    const tx = await pool.query<{ key: string; ids: string[]; statuses: string[] }>(
      `SELECT request_key AS key, array_agg(id) AS ids, array_agg(status) AS statuses FROM payments.transactions
        WHERE platform_id = $1 AND source_account_id = ANY($2::text[]) GROUP BY 1`,
      [platformId, transferPayers.map((p) => p.accountId)],
    );
    const statuses: Record<string, number> = {};
    for (const r of tx.rows) for (const s of r.statuses) statuses[s] = (statuses[s] ?? 0) + 1;
    const answeredIds = new Set(transfers.values());
    const storedIds = new Set(tx.rows.flatMap((r) => r.ids));
    const twice = tx.rows.filter((r) => r.ids.length > 1);
    if (twice.length) problems.push(`${twice.length} transfer keys with more than one transaction: ${twice.slice(0, 3).map((r) => `${r.key} ${r.ids.join(',')}`).join('; ')}`);
    const lost = [...answeredIds].filter((id) => !storedIds.has(id));
    if (lost.length) problems.push(`${lost.length} transfers answered 201 have no transaction: ${lost.slice(0, 3).join('; ')}`);
    const notDone = tx.rows.filter((r) => r.statuses.some((s) => s !== 'COMPLETED'));
    if (notDone.length) problems.push(`${notDone.length} transfers not COMPLETED: ${JSON.stringify(statuses)}`);

    // Signed requests: each accepted one consumed; each wallet quote executed into one transaction;
    // each wallet's sessions = its first + one per consumed refresh (a refresh's request authorises one session).
    const walletIds = wallets.map((w) => w.accountId);
    const reqs = await pool.query<{ action: string; issued: string; consumed: string }>(
      `SELECT action, count(*) AS issued, count(consumed_at) AS consumed FROM wallet_auth.signing_request
        WHERE platform_id = $1 AND account_id = ANY($2::text[]) GROUP BY 1`,
      [platformId, walletIds],
    );
    const requests = Object.fromEntries(reqs.rows.map((r) => [r.action, { issued: Number(r.issued), consumed: Number(r.consumed) }]));
    const unconsumed = await pool.query<{ request_id: string }>(
      `SELECT request_id FROM wallet_auth.signing_request WHERE request_id = ANY($1::text[]) AND consumed_at IS NULL`,
      [acceptedRequestIds],
    );
    if (unconsumed.rows.length)
      problems.push(`${unconsumed.rows.length} signed requests accepted without their request id consumed: ${unconsumed.rows.slice(0, 3).map((r) => r.request_id).join('; ')}`);
    const perQuote = await pool.query<{ quote_id: string; n: string }>(
      `SELECT quote_id, count(*) AS n FROM payments.transactions
        WHERE platform_id = $1 AND source_account_id = ANY($2::text[]) GROUP BY 1 HAVING count(*) > 1`,
      [platformId, walletIds],
    );
    if (perQuote.rows.length)
      problems.push(`${perQuote.rows.length} wallet quotes executed more than once: ${perQuote.rows.slice(0, 3).map((r) => `${r.quote_id} ×${r.n}`).join('; ')}`);
    const sessions = await pool.query<{ account_id: string; sessions: string; refreshes: string }>(
      `SELECT a.account_id,
              (SELECT count(*) FROM wallet_auth.session s WHERE s.account_id = a.account_id) AS sessions,
              (SELECT count(*) FROM wallet_auth.signing_request r
                WHERE r.account_id = a.account_id AND r.action = 'REFRESH_SESSION' AND r.consumed_at IS NOT NULL) AS refreshes
         FROM unnest($1::text[]) AS a(account_id)`,
      [walletIds],
    );
    for (const r of sessions.rows)
      if (Number(r.sessions) !== 1 + Number(r.refreshes))
        problems.push(`${r.account_id}: ${r.sessions} sessions for 1 verify and ${r.refreshes} consumed refreshes`);
    if (replays.acceptedTwice) problems.push(`${replays.acceptedTwice} signed requests accepted twice on replay`);

    return {
      figures: {
        customers: { attempted: customersAttempted, created: customers.size, duplicates: dup.length, withoutAccounts: withoutAccounts.length },
        transfers: { attempted: transfersAttempted, accepted: transfers.size, statuses },
        wallet: {
          signed: signedStats,
          lostAndRestarted,
          expiredBeforeExecuted,
          replays,
          byKind,
          requests,
          sessions: sessions.rows.reduce((n, r) => n + Number(r.sessions), 0),
        },
      },
      problems,
    };
  }

  return { setup, loops, check };
}
