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
 * - agents: the platform creates an agent for a customer of its own with a policy (AUTO, spending
 *   limits per transaction, per day and per day's count, an approval threshold) and the agent
 *   redeems its device code for its bearer token (a redeem whose answer a fault ate is 400
 *   DEVICE_CODE_ALREADY_REDEEMED on retry: the platform issues a new code, as for a reinstall).
 *   The agent then acts in a loop with its token, reading its usage first: a transfer-out and a
 *   quote executed within the threshold (executed at once), a transfer-out and a quote above it
 *   (PENDING_APPROVAL: the platform approves the quotes and every other transfer, and rejects the
 *   rest). When the next action would pass a limit, it sends one transfer that does (it must be
 *   refused 403 with nothing stored) and the platform sets up a new agent. After the load the
 *   client reads each action it was answered until it is final (APPROVED with its transaction,
 *   REJECTED or FAILED).
 * - documents: uploads of a PDF (multipart, each with its own content, every eighth one of three
 *   256 KiB chunks) for a customer of its own, each downloaded back and compared by digest, and
 *   the holder's documents listed every fifth round.
 *
 * The agents and documents clients pause between rounds (AGENT_PACE_MS, DOCUMENT_PACE_MS): a request every so often, not a flood.
 * The transfer, wallet and agent accounts are handed to the money check with their outcomes, as payers.
 */
import type pg from 'pg';
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { multipartForm } from '@sluice/testing';
import { decryptSessionBundle, generateKeyPair, stamp } from '@sluice/wallet-client';
import type { HttpResponse, ReceivedWebhook } from '../bench/gateway.js';
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
  agents: {
    /**
     * Agents created and connected (device code redeemed); redeems whose answer was lost, so a new
     * code was issued; stray agents, never connected (a create made twice: a problem, since a create
     * retried with its Idempotency-Key answers the agent the key made).
     */
    provisioned: number;
    codesReissued: number;
    neverConnected: number;
    /** Actions answered to the agents (transfer-outs and quote executes), by type, and their final states in agents.agent_actions. */
    submitted: Record<string, number>;
    states: Record<string, number>;
    /** Actions that waited for the platform, its decisions, and decisions answered 409 ACTION_NOT_PENDING (a lost attempt had decided). */
    waited: number;
    decisions: { approved: number; rejected: number; decidedByLostAttempt: number };
    /** Agent quotes that expired before their execute got through (QUOTE_EXPIRED). */
    expiredBeforeExecuted: number;
    /** Transfers sent past a limit: each must be refused 403 with nothing stored. */
    overLimit: { sent: number; refused: number };
    /** Transactions naming the agents (payments.transactions.agent_id), all of them of an APPROVED action, once. */
    transactions: number;
    /** The highest spend and count of one agent on one UTC day, against its limits. */
    maxDaily: { spend: number; count: number; spendLimit: number; countLimit: number };
    /** AGENT_ACTION.PENDING_APPROVAL webhooks: actions that waited, and those whose webhook arrived. */
    webhooks: { expected: number; received: number };
  };
  documents: {
    /** Uploads sent, answered 201, of them of several chunks; downloads compared; list pages read. */
    attempted: number;
    uploaded: number;
    multiChunk: number;
    downloaded: number;
    differing: number;
    listed: number;
    /** compliance.documents rows of the holder; answered uploads stored more than once; rows whose chunks are not all there. */
    stored: number;
    duplicates: number;
    halfStored: number;
    /**
     * Blobs of chunks no document row points at (an upload cut by a compliance crash or a database
     * outage): compliance's orphan sweeper deletes them once DOCUMENT_UPLOAD_ABANDON_AFTER_SECONDS
     * (1 h) old, so at the end of a run they are still there. Of them, `untrackedBlobs` have no
     * compliance.unreferenced_blobs row: the sweeper would never find them (always a problem).
     */
    unreferencedBlobs: number;
    untrackedBlobs: number;
  };
}

const WALLET_FUND = 100_000_000_000n; // 100 000 USDC (6 decimals)
const TRANSFER_FUND = 1_000_000_000n;

/** Index ranges of the payers the mixed clients hand to the money check (beside the quote payers 0..clients-1). */
const TRANSFER_PAYER = 1000;
const WALLET_PAYER = 2000;
const AGENT_PAYER = 3000;

const AGENT_FUND = 1_000_000_000n;
/** Every agent's policy: AUTO up to the threshold; limits in USD cents (the agent's account's currency). */
const AGENT_LIMITS = { perTransactionLimit: 1_000, dailyLimit: 4_000, dailyTransactionLimit: 10, monthlyLimit: 1_000_000 };
const AGENT_THRESHOLD = 500;
const AGENT_POLICY = {
  permissions: ['VIEW_TRANSACTIONS', 'CREATE_TRANSFERS', 'CREATE_QUOTES', 'EXECUTE_QUOTES'],
  defaultExecutionMode: 'AUTO',
  spendingLimits: { currency: 'USD', ...AGENT_LIMITS },
  approvalThresholds: { currency: 'USD', amount: AGENT_THRESHOLD },
};
const LIMIT_CODES = ['DAILY_LIMIT_EXCEEDED', 'DAILY_TRANSACTION_LIMIT_EXCEEDED', 'MONTHLY_LIMIT_EXCEEDED'];
/** How long, after the load, the agents client waits for its actions to be final (an action cut by a crash is driven again after AGENT_ACTION_STALL_SECONDS). */
const AGENT_SETTLE_MS = 120_000;
/** The pause between two rounds of the agents client and of the documents client (a request every so often, not a flood). */
const AGENT_PACE_MS = 250;
const DOCUMENT_PACE_MS = 500;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A PDF of `size` bytes, all ASCII (so the JSON client's text of its download is the same bytes), naming its key. */
function pdfOf(key: string, size: number): Buffer {
  const head = `%PDF-1.4\n% ${key}\n`;
  const tail = '\n%%EOF\n';
  const line = `% chaos document ${key} `.padEnd(63, '.') + '\n';
  const fill = line.repeat(Math.ceil(size / line.length)).slice(0, Math.max(0, size - head.length - tail.length));
  return Buffer.from(head + fill + tail, 'latin1');
}

/** An agent action as the agents client knows it: what it asked for and the last view it was answered. */
interface TrackedAction {
  id: string;
  agentId: string;
  token: string;
  payer: number;
  type: 'TRANSFER_OUT' | 'EXECUTE_QUOTE';
  key: string;
  quoteId?: string;
  decision?: 'approve' | 'reject';
  waited: boolean;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the AgentAction JSON, read field by field
  last: any;
  startedAt: number;
}

export function mixedLoad(o: {
  pool: pg.Pool;
  request: ChaosRequest;
  /** Clients of each kind (0: none). */
  mixed: number;
  outcomes: PairOutcome[];
  /** Every webhook the platform's endpoint received (AGENT_ACTION.PENDING_APPROVAL is looked for). */
  webhooks: () => readonly ReceivedWebhook[];
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
  // Agents: per client its customer's account (a payer, with an EUR external account for quotes) and its current agent.
  const agentClients: {
    payer: Payer & { eurExternalAccountId: string };
    agent: { id: string; token: string };
    generation: number;
  }[] = [];
  const agentIds: string[] = [];
  const tracked = new Map<string, TrackedAction>();
  const submitted: Record<string, number> = {};
  const decisions = { approved: 0, rejected: 0, decidedByLostAttempt: 0 };
  const overLimit = { sent: 0, refused: 0 };
  const overLimitKeys: string[] = [];
  let codesReissued = 0;
  let agentQuotesExpired = 0;
  // Documents: per client its holder; per answered upload its key, id, digest and size.
  const documentHolders: string[] = [];
  const uploads = new Map<string, { id: string; sha256: string; size: number }>();
  const uploadDigests = new Map<string, string>(); // sha256 → key, every upload sent
  const docStats = { attempted: 0, multiChunk: 0, downloaded: 0, differing: 0, listed: 0 };
  const enc = encodeURIComponent;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

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

      // The agents' customer: a funded USD account, a USD external account (transfers) and an EUR one (quotes).
      const a = await customerWithAccount(`chaos-agent-${i}`, 'USD', 'currency=USD', usdAccountInfo(AGENT_PAYER + i), 'USD');
      const eur = must(
        await request(
          'POST',
          '/customers/external-accounts',
          { customerId: a.customerId, currency: 'EUR', accountInfo: eurAccountInfo(AGENT_PAYER + i) },
          { 'idempotency-key': `chaos-agent-${i}-external-eur` },
        ),
        201,
        'POST /customers/external-accounts',
      );
      const agentFunded = await fund(a.accountId, AGENT_FUND, `chaos-agent-${i}-fund`);
      const payer = { index: AGENT_PAYER + i, ...a, funded: agentFunded, eurExternalAccountId: eur.id as string };
      agentClients.push({ payer, agent: await provisionAgent(payer.customerId, `chaos-agent-${i}-0`), generation: 0 });

      // The documents' holder.
      const holder = must(
        await request(
          'POST',
          '/customers',
          { customerType: 'INDIVIDUAL', platformCustomerId: `chaos-docs-${i}`, fullName: `Chaos Documents ${i}`, currencies: ['USD'] },
          { 'idempotency-key': `chaos-docs-${i}-customer` },
        ),
        201,
        'POST /customers',
      );
      documentHolders.push(holder.id);
    }
    return [...transferPayers, ...wallets, ...agentClients.map((c) => c.payer)];
  }

  /**
   * A new agent of the customer with the policy, connected: its device code redeemed for its
   * token. Redeem takes no Idempotency-Key (no credentials, nothing to scope a key to): a redeem
   * whose answer was lost is 400 DEVICE_CODE_ALREADY_REDEEMED on retry, and the platform issues
   * a new code (the reinstall path; redeeming it replaces the token).
   */
  async function provisionAgent(customerId: string, label: string): Promise<{ id: string; token: string }> {
    const created = must(
      await request('POST', '/agents', { name: label, customerId, policy: AGENT_POLICY }, { 'idempotency-key': `${label}-create` }),
      201,
      'POST /agents',
    );
    const id = created.agent.id as string;
    let code = created.deviceCode.code as string;
    for (let attempt = 1; ; attempt++) {
      const r = await request('POST', `/agents/device-codes/${enc(code)}/redeem`, undefined, {});
      if (r.status === 200) {
        agentIds.push(id);
        return { id, token: r.json.accessToken as string };
      }
      if (r.json?.code !== 'DEVICE_CODE_ALREADY_REDEEMED' || attempt >= 5)
        throw new Error(`redeem of ${label}'s device code: ${r.status} ${r.text.slice(0, 300)}`);
      codesReissued++;
      code = must(
        await request('POST', `/agents/${enc(id)}/device-codes`, undefined, { 'idempotency-key': `${label}-code-${attempt}` }),
        201,
        'POST /agents/{id}/device-codes',
      ).code;
    }
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

  /** Records what the agents client was answered about an action (its first answer, a decision or a read). */
  function track(json: TrackedAction['last'], base: Omit<TrackedAction, 'id' | 'last' | 'waited' | 'startedAt'>): TrackedAction {
    let t = tracked.get(json.id);
    if (!t) {
      t = { ...base, id: json.id, last: json, waited: false, startedAt: performance.now() };
      tracked.set(t.id, t);
      submitted[t.type] = (submitted[t.type] ?? 0) + 1;
    }
    t.last = json;
    if (json.status === 'PENDING_APPROVAL') t.waited = true;
    return t;
  }

  /** The platform's decision on an action waiting for approval, retried until final. */
  async function decide(t: TrackedAction, decision: 'approve' | 'reject') {
    t.decision = decision;
    const r = await request(
      'POST',
      `/agents/${enc(t.agentId)}/actions/${enc(t.id)}/${decision}`,
      decision === 'reject' ? { reason: 'chaos: not this one' } : undefined,
      { 'idempotency-key': `${t.key}-${decision}` },
    );
    if (r.status === 200) {
      t.last = r.json;
      if (decision === 'approve') decisions.approved++;
      else decisions.rejected++;
    } else if (r.status === 409 && r.json?.code === 'ACTION_NOT_PENDING') {
      // An attempt whose answer a fault ate decided it (its key's record died with a gateway, or the
      // service answered after the gateway gave up): the action is read back after the load.
      decisions.decidedByLostAttempt++;
    } else problems.push(`POST ${decision} of agent action ${t.id} answered ${r.status} ${r.text.slice(0, 160)}`);
  }

  /**
   * One round of an agent: its usage read first; then, in turn, a transfer-out above the
   * threshold (0), one within it (1), a quote executed above it (2) and one within it (3). Above
   * it the action waits for the platform: the quotes are approved (a quote left unexecuted would
   * hold a PENDING transaction until it expires), the transfers approved and rejected in turn.
   * The first round waits for an approval, so even a short run whose first gateway kill holds
   * the client's next key for its lease has exercised it. When the action would pass a daily
   * limit, a transfer past it instead (refused 403, nothing stored), and a new agent.
   */
  async function agentRound(c: (typeof agentClients)[number], client: number, seq: number) {
    const label = `chaos-agent-${client}-${c.generation}`;
    const me = bearer(c.agent.token);
    const base = { agentId: c.agent.id, token: c.agent.token, payer: c.payer.index };
    const kind = seq % 4;
    const amount = kind === 1 ? 100 + (seq % 7) : kind === 3 ? 200 : 700;
    const self = await request('GET', '/agents/me', undefined, me);
    if (self.status !== 200) {
      problems.push(`GET /agents/me (${label}) answered ${self.status} ${self.text.slice(0, 120)}`);
      return;
    }
    const usage = self.json.usage as { dailySpend: number; dailyTransactionCount: number };
    if (usage.dailySpend + amount > AGENT_LIMITS.dailyLimit || usage.dailyTransactionCount + 1 > AGENT_LIMITS.dailyTransactionLimit) {
      const key = `${label}-over-limit`;
      overLimit.sent++;
      overLimitKeys.push(key);
      const over = Math.min(AGENT_LIMITS.perTransactionLimit, AGENT_LIMITS.dailyLimit - usage.dailySpend + 1);
      const r = await request(
        'POST',
        '/agents/me/transfer-out',
        { source: { accountId: c.payer.accountId }, destination: { accountId: c.payer.externalAccountId }, amount: over },
        { ...me, 'idempotency-key': key },
      );
      if (r.status === 403 && LIMIT_CODES.includes(r.json?.code)) overLimit.refused++;
      else problems.push(`agent transfer past its limit (${label}, ${over} with ${JSON.stringify(usage)}) answered ${r.status} ${r.text.slice(0, 160)}`);
      c.generation++;
      c.agent = await provisionAgent(c.payer.customerId, `chaos-agent-${client}-${c.generation}`);
      return;
    }
    const key = `${label}-${seq}`;
    if (kind === 0 || kind === 1) {
      const r = await request(
        'POST',
        '/agents/me/transfer-out',
        { source: { accountId: c.payer.accountId }, destination: { accountId: c.payer.externalAccountId }, amount },
        { ...me, 'idempotency-key': key },
      );
      if (r.status !== 201) {
        problems.push(`agent transfer-out (${key}) answered ${r.status} ${r.text.slice(0, 160)}`);
        return;
      }
      const t = track(r.json, { ...base, type: 'TRANSFER_OUT', key });
      if (kind === 0 && r.json.status !== 'PENDING_APPROVAL')
        problems.push(`agent transfer-out above the threshold (${key}) answered ${r.json.status}, not PENDING_APPROVAL`);
      // Every other transfer waiting for approval is rejected.
      if (r.json.status === 'PENDING_APPROVAL') await decide(t, seq % 8 === 0 ? 'approve' : 'reject');
      return;
    }
    const q = await request(
      'POST',
      '/agents/me/quotes',
      {
        source: { sourceType: 'ACCOUNT', accountId: c.payer.accountId },
        destination: { destinationType: 'ACCOUNT', accountId: c.payer.eurExternalAccountId },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: amount,
      },
      { ...me, 'idempotency-key': `${key}-quote` },
    );
    const now = performance.now();
    if (q.status !== 201) {
      problems.push(`agent quote (${key}) answered ${q.status} ${q.text.slice(0, 160)}`);
      return;
    }
    const e = await request('POST', `/agents/me/quotes/${enc(q.json.id)}/execute`, undefined, { ...me, 'idempotency-key': `${key}-execute` });
    if (e.status !== 200) {
      o.outcomes.push({ ok: false, payer: c.payer.index, quoteId: q.json.id, error: `execute:${e.status}${e.json?.code ? ` ${e.json.code}` : ''}`, startedAt: now, endedAt: performance.now() });
      // As a wallet's or payer's quote, an agent's may expire while its execute waits out a crashed gateway's key lease.
      if (e.json?.code === 'QUOTE_EXPIRED') agentQuotesExpired++;
      else problems.push(`agent quote execute (${key}) answered ${e.status} ${e.text.slice(0, 160)}`);
      return;
    }
    const t = track(e.json, { ...base, type: 'EXECUTE_QUOTE', key, quoteId: q.json.id });
    if (kind === 2 && e.json.status !== 'PENDING_APPROVAL')
      problems.push(`agent quote execute above the threshold (${key}) answered ${e.json.status}, not PENDING_APPROVAL`);
    if (e.json.status === 'PENDING_APPROVAL') await decide(t, 'approve');
  }

  /**
   * After the load: each action read (with its agent's token) until final — APPROVED with its
   * transaction, REJECTED or FAILED — and handed to the money check as what the client learnt.
   */
  async function settleAgentActions() {
    const final = (a: TrackedAction['last']) => a.status === 'REJECTED' || a.status === 'FAILED' || (a.status === 'APPROVED' && a.transaction);
    const deadline = Date.now() + AGENT_SETTLE_MS;
    for (const t of tracked.values()) {
      while (!final(t.last) && Date.now() < deadline) {
        await sleep(250);
        const r = await request('GET', `/agents/me/actions/${enc(t.id)}`, undefined, bearer(t.token));
        if (r.status === 200) t.last = r.json;
      }
      const end = performance.now();
      if (!final(t.last)) problems.push(`agent action ${t.id} (${t.key}) not final ${AGENT_SETTLE_MS / 1000} s after the load: ${t.last.status}`);
      if (t.last.status === 'APPROVED' && t.last.transaction) {
        const sent = BigInt(t.last.transaction.sentAmount.amount);
        o.outcomes.push({ ok: true, payer: t.payer, ...(t.quoteId ? { quoteId: t.quoteId } : {}), sent, startedAt: t.startedAt, endedAt: end });
      } else if (t.quoteId) {
        o.outcomes.push({ ok: false, payer: t.payer, quoteId: t.quoteId, error: `execute:${t.last.status}`, startedAt: t.startedAt, endedAt: end });
      }
    }
  }

  /** One upload (a fresh PDF under its own key), its download compared by digest, and every fifth round the holder's list. */
  async function documentRound(holder: string, client: number, seq: number) {
    const key = `chaos-doc-${client}-${seq}`;
    const multi = seq % 8 === 7;
    const content = pdfOf(key, multi ? 520 * 1024 : 2048 + (seq % 13) * 97);
    const digest = sha256(content);
    uploadDigests.set(digest, key);
    const form = multipartForm(
      { documentType: 'PASSPORT', country: 'US', documentHolder: holder, documentNumber: `P${client}${String(seq).padStart(7, '0')}` },
      { name: `${key}.pdf`, type: 'application/pdf', pieces: [content] },
    );
    docStats.attempted++;
    const r = await request('POST', '/documents', Buffer.concat([...form.body]), { ...form.headers, 'idempotency-key': key });
    if (r.status !== 201) {
      problems.push(`POST /documents (${key}) answered ${r.status} ${r.text.slice(0, 160)}`);
      return;
    }
    uploads.set(key, { id: r.json.id, sha256: digest, size: content.length });
    if (multi) docStats.multiChunk++;
    const f = await request('GET', `/documents/${enc(r.json.id)}/file`, undefined, {});
    docStats.downloaded++;
    const got = f.status === 200 ? sha256(Buffer.from(f.text, 'latin1')) : undefined;
    if (got !== digest) {
      docStats.differing++;
      problems.push(`document ${r.json.id} (${key}) downloaded ${f.status} ${got ? `with digest ${got.slice(0, 12)}…, uploaded ${digest.slice(0, 12)}…` : f.text.slice(0, 120)}`);
    }
    if (seq % 5 === 4) {
      const l = await request('GET', `/documents?documentHolder=${enc(holder)}&limit=20`, undefined, {});
      docStats.listed++;
      if (l.status !== 200) {
        problems.push(`GET /documents (${key}) answered ${l.status} ${l.text.slice(0, 120)}`);
        return;
      }
      const ids = (l.json.data as { id: string }[]).map((d) => d.id);
      if (new Set(ids).size !== ids.length) problems.push(`GET /documents listed a document twice: ${ids.join(', ')}`);
      if (!ids.includes(r.json.id)) problems.push(`GET /documents (newest first) does not list the upload just answered: ${r.json.id}`);
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
        (async () => {
          try {
            for (let seq = 0; !done(); seq++) {
              await agentRound(agentClients[c]!, c, seq);
              await sleep(AGENT_PACE_MS);
            }
          } catch (err) {
            problems.push(`the agents client stopped: ${(err as Error).message}`);
          }
          await settleAgentActions();
        })(),
        (async () => {
          for (let seq = 0; !done(); seq++) {
            await documentRound(documentHolders[c]!, c, seq);
            await sleep(DOCUMENT_PACE_MS);
          }
        })(),
      );
    }
    return out;
  }

  /**
   * After the load (payments settled): customers once each, transfers terminal, signing requests
   * used once, agent actions final and executed once within the limits, documents stored once and whole.
   * `faults`: the faults injected (unreferenced document chunks are expected only after a compliance
   * SIGKILL or a Postgres outage).
   */
  async function check(platformId: string, faults: readonly string[] = []): Promise<{ figures: MixedFigures; problems: string[] }> {
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

    const agents = await checkAgents(platformId);
    const documents = await checkDocuments(platformId, faults);

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
        agents,
        documents,
      },
      problems,
    };
  }

  /**
   * Agents, from agents.agent_actions and payments.transactions: every action final; each APPROVED
   * one has exactly one transaction (a transfer's request key is its action id; a quote's is the
   * quote's), COMPLETED, naming the agent, for the amount reserved; no other transaction names an
   * agent, none belongs to a REJECTED or FAILED action; each client key made one action and each
   * action answered is stored as it was last answered (the decision asked for); no agent executed
   * more than its daily limits on any UTC day; the usage counters equal the reservations still
   * held; no transfer past a limit stored; each action that waited had its webhook.
   */
  async function checkAgents(platformId: string): Promise<MixedFigures['agents']> {
    const actions = await pool.query<{
      id: string; agent_id: string; type: string; state: string; quote_id: string | null; transaction_id: string | null;
      request_key: string | null; reserved_day: string; reserved_month: string; reserved_amount: string; failure_reason: string | null;
    }>(
      `SELECT id, agent_id, type, state, quote_id, transaction_id, request_key, reserved_day, reserved_month,
              reserved_amount::text AS reserved_amount, failure_reason
         FROM agents.agent_actions WHERE platform_id = $1 AND agent_id = ANY($2::text[])`,
      [platformId, agentIds],
    );
    const txs = await pool.query<{ id: string; status: string; quote_id: string | null; request_key: string | null; agent_id: string | null; sent: string }>(
      `SELECT id, status, quote_id, request_key, agent_id, sent_amount::text AS sent FROM payments.transactions
        WHERE platform_id = $1 AND source_account_id = ANY($2::text[])`,
      [platformId, agentClients.map((c) => c.payer.accountId)],
    );
    const states: Record<string, number> = {};
    for (const a of actions.rows) states[a.state] = (states[a.state] ?? 0) + 1;
    const byId = new Map(actions.rows.map((a) => [a.id, a]));
    // Each action's transactions: a transfer's request key is the action id; a quote's transaction is the quote's (executed: not EXPIRED).
    const txOf = (a: (typeof actions.rows)[number]) =>
      txs.rows.filter((t) => (a.type === 'EXECUTE_QUOTE' ? t.quote_id === a.quote_id && t.status !== 'EXPIRED' : t.request_key === a.id));
    const notFinal = actions.rows.filter((a) => !['APPROVED', 'REJECTED', 'FAILED'].includes(a.state));
    if (notFinal.length) problems.push(`${notFinal.length} agent actions not final: ${notFinal.slice(0, 3).map((a) => `${a.id} ${a.state}`).join('; ')}`);
    const wrong: string[] = [];
    const ownTx = new Set<string>();
    for (const a of actions.rows) {
      const ts = txOf(a);
      if (a.state === 'APPROVED') {
        const t = ts[0];
        if (ts.length !== 1) wrong.push(`${a.id} APPROVED with ${ts.length} transactions (${ts.map((x) => `${x.id} ${x.status}`).join(', ')})`);
        else if (t!.id !== a.transaction_id || t!.status !== 'COMPLETED' || t!.agent_id !== a.agent_id || t!.sent !== a.reserved_amount)
          wrong.push(`${a.id} APPROVED (transaction ${a.transaction_id}, ${a.reserved_amount} reserved): ${t!.id} ${t!.status} agent ${t!.agent_id} sent ${t!.sent}`);
        for (const x of ts) ownTx.add(x.id);
      } else if (ts.some((t) => t.status === 'COMPLETED' || t.agent_id) && !(a.quote_id && actions.rows.some((b) => b.quote_id === a.quote_id && b.state === 'APPROVED')))
        wrong.push(`${a.id} ${a.state} (${a.failure_reason ?? 'rejected'}) yet moved money: ${ts.map((t) => `${t.id} ${t.status}`).join(', ')}`);
    }
    const stray = txs.rows.filter((t) => t.agent_id && !ownTx.has(t.id));
    if (stray.length) wrong.push(`${stray.length} transactions name an agent but belong to no APPROVED action: ${stray.slice(0, 3).map((t) => `${t.id} ${t.status}`).join(', ')}`);
    const perKey = new Map<string, number>();
    for (const a of actions.rows) if (a.request_key) perKey.set(`${a.agent_id} ${a.request_key}`, (perKey.get(`${a.agent_id} ${a.request_key}`) ?? 0) + 1);
    const twice = [...perKey].filter(([, n]) => n > 1);
    if (twice.length) wrong.push(`${twice.length} Idempotency-Keys made more than one action: ${twice.slice(0, 3).map(([k, n]) => `${k} ×${n}`).join('; ')}`);
    const perQuote = new Map<string, number>();
    for (const a of actions.rows) if (a.quote_id && a.state === 'APPROVED') perQuote.set(a.quote_id, (perQuote.get(a.quote_id) ?? 0) + 1);
    const quoteTwice = [...perQuote].filter(([, n]) => n > 1);
    if (quoteTwice.length) wrong.push(`${quoteTwice.length} quotes with more than one APPROVED action: ${quoteTwice.slice(0, 3).map(([q, n]) => `${q} ×${n}`).join('; ')}`);
    for (const t of tracked.values()) {
      const a = byId.get(t.id);
      const expected = t.last.status === 'APPROVED' && !t.last.transaction ? undefined : t.last.status;
      if (!a) wrong.push(`${t.id} (${t.key}) was answered ${t.last.status} but is not stored`);
      else if (a.request_key && a.request_key !== t.key && t.type === 'TRANSFER_OUT') wrong.push(`${t.id} answered for ${t.key} is stored under ${a.request_key}`);
      else if (expected && expected !== a.state) wrong.push(`${t.id} (${t.key}) last read ${expected}, stored ${a.state}`);
      else if (t.decision === 'reject' && a.state !== 'REJECTED') wrong.push(`${t.id} (${t.key}) rejected by the platform, stored ${a.state}`);
      else if (t.decision === 'approve' && a.state === 'REJECTED') wrong.push(`${t.id} (${t.key}) approved by the platform, stored REJECTED`);
    }
    // Spend per agent and UTC day: what the APPROVED actions executed, against the daily limits.
    const daily = new Map<string, { spend: number; count: number }>();
    for (const a of actions.rows) {
      if (a.state !== 'APPROVED') continue;
      const k = `${a.agent_id} ${a.reserved_day}`;
      const d = daily.get(k) ?? { spend: 0, count: 0 };
      d.spend += Number(txOf(a)[0]?.sent ?? a.reserved_amount);
      d.count++;
      daily.set(k, d);
    }
    const maxDaily = { spend: 0, count: 0, spendLimit: AGENT_LIMITS.dailyLimit, countLimit: AGENT_LIMITS.dailyTransactionLimit };
    for (const [k, d] of daily) {
      maxDaily.spend = Math.max(maxDaily.spend, d.spend);
      maxDaily.count = Math.max(maxDaily.count, d.count);
      if (d.spend > AGENT_LIMITS.dailyLimit || d.count > AGENT_LIMITS.dailyTransactionLimit)
        wrong.push(`agent ${k} executed ${d.spend} in ${d.count} transactions, past its daily limits (${AGENT_LIMITS.dailyLimit}, ${AGENT_LIMITS.dailyTransactionLimit})`);
    }
    // The usage counters hold exactly the reservations of the actions that did not give theirs back.
    const counters = await pool.query<{ id: string; is_connected: boolean; usage_day: string | null; usage_month: string | null; daily_spend: string; daily_transaction_count: string; monthly_spend: string }>(
      `SELECT id, is_connected, usage_day, usage_month, daily_spend::text, daily_transaction_count::text, monthly_spend::text
         FROM agents.agents WHERE platform_id = $1 AND customer_id = ANY($2::text[])`,
      [platformId, agentClients.map((c) => c.payer.customerId)],
    );
    for (const g of counters.rows) {
      const held = actions.rows.filter((a) => a.agent_id === g.id && a.state !== 'REJECTED' && a.state !== 'FAILED');
      const day = held.filter((a) => a.reserved_day === g.usage_day);
      const month = held.filter((a) => a.reserved_month === g.usage_month);
      const sum = (xs: typeof held) => xs.reduce((n, a) => n + BigInt(a.reserved_amount), 0n);
      if (BigInt(g.daily_spend) !== sum(day) || Number(g.daily_transaction_count) !== day.length || BigInt(g.monthly_spend) !== sum(month))
        wrong.push(
          `agent ${g.id} counters (day ${g.daily_spend} in ${g.daily_transaction_count}, month ${g.monthly_spend}) ≠ reservations held (day ${sum(day)} in ${day.length}, month ${sum(month)})`,
        );
    }
    const overStored = actions.rows.filter((a) => a.request_key && overLimitKeys.includes(a.request_key));
    if (overStored.length) wrong.push(`${overStored.length} transfers past a limit were stored: ${overStored.map((a) => `${a.id} ${a.state}`).join('; ')}`);
    if (wrong.length) problems.push(`agents: ${wrong.length} wrong: ${wrong.slice(0, 5).join('; ')}${wrong.length > 5 ? '; …' : ''}`);

    // AGENT_ACTION.PENDING_APPROVAL: each action that waited, at least once (waiting while deliveries keep arriving).
    const waitedIds = [...tracked.values()].filter((t) => t.waited).map((t) => t.id);
    const arrived = () => new Set(o.webhooks().filter((w) => w.type === 'AGENT_ACTION.PENDING_APPROVAL').map((w) => w.dataId));
    let missing = waitedIds.filter((id) => !arrived().has(id));
    let lastCount = o.webhooks().length;
    let lastProgress = Date.now();
    while (missing.length && Date.now() - lastProgress < 30_000) {
      await sleep(500);
      const seen = arrived();
      missing = missing.filter((id) => !seen.has(id));
      if (o.webhooks().length > lastCount) {
        lastCount = o.webhooks().length;
        lastProgress = Date.now();
      }
    }
    if (missing.length)
      problems.push(`${missing.length} agent actions that waited for approval never had their AGENT_ACTION.PENDING_APPROVAL webhook: ${missing.slice(0, 3).join('; ')}`);
    // Every agent the clients created was connected: a stray one is a create that was made twice.
    const strayAgents = counters.rows.filter((g) => !g.is_connected).map((g) => g.id);
    if (strayAgents.length) problems.push(`${strayAgents.length} stray agents, never connected (a create made twice): ${strayAgents.slice(0, 3).join('; ')}`);

    return {
      provisioned: agentIds.length,
      codesReissued,
      neverConnected: strayAgents.length,
      submitted,
      states,
      waited: waitedIds.length,
      decisions,
      expiredBeforeExecuted: agentQuotesExpired,
      overLimit,
      transactions: txs.rows.filter((t) => t.agent_id).length,
      maxDaily,
      webhooks: { expected: waitedIds.length, received: waitedIds.length - missing.length },
    };
  }

  /**
   * Documents, from compliance.documents and compliance.document_chunks: each upload answered 201
   * stored exactly once (its content's digest in one row, the row answered) and nothing stored for
   * an upload not answered 201; every row's chunks all there (0..chunk_count-1) with its size; no
   * chunk blob without its row unless a compliance SIGKILL or a Postgres outage cut an upload, and
   * then each with its compliance.unreferenced_blobs row, by which the orphan sweeper deletes them
   * an hour later (docs/compliance.md; a run is shorter, so they are counted, not expected gone).
   */
  async function checkDocuments(platformId: string, faults: readonly string[]): Promise<MixedFigures['documents']> {
    const rows = await pool.query<{ id: string; sha256: string; size: string; chunk_count: number; chunks: string; top: number | null }>(
      `SELECT d.id, d.sha256, d.size_bytes::text AS size, d.chunk_count,
              (SELECT count(*) FROM compliance.document_chunks c WHERE c.blob_id = d.blob_id) AS chunks,
              (SELECT max(idx) FROM compliance.document_chunks c WHERE c.blob_id = d.blob_id) AS top
         FROM compliance.documents d WHERE d.platform_id = $1 AND d.document_holder = ANY($2::text[])`,
      [platformId, documentHolders],
    );
    const unreferenced = await pool.query<{ n: string; untracked: string }>(
      `SELECT count(DISTINCT blob_id) AS n,
              count(DISTINCT blob_id) FILTER (WHERE NOT EXISTS (SELECT 1 FROM compliance.unreferenced_blobs u WHERE u.blob_id = c.blob_id)) AS untracked
         FROM compliance.document_chunks c
        WHERE NOT EXISTS (SELECT 1 FROM compliance.documents d WHERE d.blob_id = c.blob_id)`,
    );
    const wrong: string[] = [];
    const byDigest = new Map<string, string[]>();
    for (const r of rows.rows) byDigest.set(r.sha256, [...(byDigest.get(r.sha256) ?? []), r.id]);
    let duplicates = 0;
    for (const [key, u] of uploads) {
      const ids = byDigest.get(u.sha256) ?? [];
      if (ids.length > 1) duplicates++;
      if (ids.length !== 1 || ids[0] !== u.id) wrong.push(`${key} answered ${u.id}, stored as ${ids.join(', ') || 'nothing'}`);
    }
    const answeredDigests = new Set([...uploads.values()].map((u) => u.sha256));
    for (const [digest, ids] of byDigest)
      if (!answeredDigests.has(digest))
        wrong.push(`${ids.join(', ')} stored for ${uploadDigests.get(digest) ?? 'no upload of this client'}, never answered 201`);
    const sizeOf = new Map([...uploads.values()].map((u) => [u.id, u.size]));
    const half = rows.rows.filter((r) => Number(r.chunks) !== r.chunk_count || r.top !== r.chunk_count - 1);
    for (const r of half) wrong.push(`${r.id} has ${r.chunks} of its ${r.chunk_count} chunks`);
    for (const r of rows.rows)
      if (sizeOf.has(r.id) && Number(r.size) !== sizeOf.get(r.id)) wrong.push(`${r.id} stored ${r.size} bytes of ${sizeOf.get(r.id)}`);
    const unreferencedBlobs = Number(unreferenced.rows[0]?.n ?? 0);
    const untrackedBlobs = Number(unreferenced.rows[0]?.untracked ?? 0);
    const cutUploads = faults.some((f) => f.startsWith('compliance') && f.endsWith('SIGKILL')) || faults.some((f) => f.startsWith('postgres'));
    if (unreferencedBlobs && !cutUploads)
      wrong.push(`${unreferencedBlobs} blobs of document chunks without their document, though neither compliance was killed nor Postgres cut`);
    if (untrackedBlobs)
      wrong.push(`${untrackedBlobs} blobs of document chunks without their document nor an unreferenced_blobs row: the orphan sweeper will never delete them`);
    if (wrong.length) problems.push(`documents: ${wrong.length} wrong: ${wrong.slice(0, 5).join('; ')}${wrong.length > 5 ? '; …' : ''}`);
    return {
      attempted: docStats.attempted,
      uploaded: uploads.size,
      multiChunk: docStats.multiChunk,
      downloaded: docStats.downloaded,
      differing: docStats.differing,
      listed: docStats.listed,
      stored: rows.rows.length,
      duplicates,
      halfStored: half.length,
      unreferencedBlobs,
      untrackedBlobs,
    };
  }

  return { setup, loops, check };
}
