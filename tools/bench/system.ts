/**
 * What the runner needs from a system under test (the real processes behind
 * the gateway, or the one-process baseline), the fixtures both use, and the
 * database reads that check the money afterwards.
 */
import pg from 'pg';
import { sentByPayer, type PairOutcome } from './stats.js';

/** A funded USD internal account with an EUR external account of the same customer. */
export interface Payer {
  index: number;
  customerId: string;
  accountId: string;
  externalAccountId: string;
  funded: bigint;
}

export type PairResult = Omit<PairOutcome, 'startedAt' | 'endedAt'>;

/**
 * How the bench's clients answer payments' admission — a new execute refused with 503
 * SERVICE_UNAVAILABLE and Retry-After while settlement is behind (docs/payments.md, _Admission_) —
 * as a platform's client should: they wait that long and send the execute again (the same
 * Idempotency-Key), at most this many attempts in all. The wait counts in the pair's latency.
 */
export const EXECUTE_ATTEMPTS = 5;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Calls `execute` until it answers anything but "retry later" (`retryAfterMs` gives how long to wait
 * for that answer, undefined for any other), at most EXECUTE_ATTEMPTS times: the one retry rule of
 * the bench's clients.
 */
export async function executeRetryingLater<T>(
  execute: () => Promise<T>,
  retryAfterMs: (answer: T) => number | undefined,
): Promise<{ answer: T; retries: number }> {
  let answer = await execute();
  let retries = 0;
  for (
    let wait = retryAfterMs(answer);
    wait !== undefined && retries < EXECUTE_ATTEMPTS - 1;
    wait = retryAfterMs(answer)
  ) {
    retries++;
    await pause(wait);
    answer = await execute();
  }
  return { answer, retries };
}

export interface BenchSystem {
  name: 'gateway' | 'baseline';
  /** Its own fresh database. */
  databaseUrl: string;
  databaseName: string;
  platformId: string;
  /** Processes whose CPU is attributed by name (pid → label). */
  cpuRoots(): Map<number, string>;
  /** A customer with a USD internal account funded with `fund` cents and an EUR external account. */
  createPayer(index: number, fund: bigint): Promise<Payer>;
  /** POST /quotes (USD → EUR, SENDING `amount`) then execute it. */
  pair(payer: Payer, amount: number, idempotencyKey: string): Promise<PairResult>;
  /** accounts ReconcileLedger of the platform. */
  reconcile(): Promise<{ consistent: boolean; detail: string }>;
  close(): Promise<void>;
}

/** A German IBAN (mod-97 valid) for a 10-digit account number. */
export function germanIban(account: string): string {
  const bban = `37040044${account}`;
  const numeric = `${bban}131400`; // + "DE00", letters as D=13 E=14
  let rem = 0;
  for (const ch of numeric) rem = (rem * 10 + Number(ch)) % 97;
  return `DE${String(98 - rem).padStart(2, '0')}${bban}`;
}

/**
 * The EUR external account of payer `index`: its IBAN ends in 000, which the
 * sandbox quote rail completes after ~1 s × SANDBOX_TIME_SCALE (docs/payments.md).
 */
export function eurAccountInfo(index: number) {
  return {
    accountType: 'EUR_ACCOUNT' as const,
    iban: germanIban(`05${String(index).padStart(5, '0')}000`),
    beneficiary: {
      beneficiaryType: 'INDIVIDUAL' as const,
      fullName: `Bench Payee ${index}`,
      address: { line1: '1 Hauptstr.', postalCode: '10115', country: 'DE' },
    },
  };
}

/**
 * A USD external account of payer `index` (the chaos transfers' destination): its account
 * number ends in 789, which the sandbox rail completes (docs/payments.md; 00x fail, 1xx pick
 * the beneficiary verification).
 */
export function usdAccountInfo(index: number) {
  return {
    accountType: 'USD_ACCOUNT' as const,
    accountNumber: `5550${String(index).padStart(4, '0')}789`,
    routingNumber: '021000021',
    beneficiary: {
      beneficiaryType: 'INDIVIDUAL' as const,
      fullName: `Bench Payee ${index}`,
      address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
    },
  };
}

export function databaseUrlFor(baseUrl: string, name: string): string {
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(baseUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: databaseUrlFor(baseUrl, 'postgres') });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export async function createDatabase(baseUrl: string, name: string): Promise<string> {
  await admin(baseUrl, (c) => c.query(`CREATE DATABASE "${name}"`));
  return databaseUrlFor(baseUrl, name);
}

export async function dropDatabase(baseUrl: string, name: string): Promise<void> {
  await admin(baseUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

export async function postgresVersion(baseUrl: string): Promise<string> {
  return admin(
    baseUrl,
    async (c) => (await c.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0]!.v,
  );
}

/** Transactions / commits of the database so far (pg_stat_database, flushed about once a second). */
export async function commitCount(pool: pg.Pool, database: string): Promise<number> {
  const r = await pool.query<{ n: string }>(
    'SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1',
    [database],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/** What settling the payments of one case took. */
export interface Settlement {
  /** Seconds from the end of the load until no payment of the case was left in flight. */
  drainSec: number;
  /** Transactions of the case by status once drained (or at the timeout). */
  statuses: Record<string, number>;
  /** Executed payments settled, and settled per second from the first creation to the last settlement. */
  settled: number;
  settledPerSec: number;
  /** Seconds from a transaction's creation to its settlement (COMPLETED). */
  lagP50Sec: number;
  lagP99Sec: number;
  timedOut: boolean;
}

const IN_FLIGHT = ['CREATED', 'PENDING', 'PROCESSING'];

/**
 * Waits until every OUTGOING transaction created since `since` is final and no
 * quote is PROCESSING, then measures the settlement of that set.
 */
export async function awaitSettlement(
  pool: pg.Pool,
  since: Date,
  loadEndedAt: number,
  timeoutMs: number,
): Promise<Settlement> {
  const statuses = async () => {
    const r = await pool.query<{ status: string; n: string }>(
      `SELECT status, count(*) AS n FROM payments.transactions
        WHERE type = 'OUTGOING' AND created_at >= $1 GROUP BY status`,
      [since],
    );
    const q = await pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM payments.quotes WHERE status = 'PROCESSING' AND created_at >= $1`,
      [since],
    );
    const out = Object.fromEntries(r.rows.map((x) => [x.status, Number(x.n)]));
    return { out, quotesProcessing: Number(q.rows[0]!.n) };
  };
  let s = await statuses();
  let timedOut = false;
  while (IN_FLIGHT.some((k) => (s.out[k] ?? 0) > 0) || s.quotesProcessing > 0) {
    if (Date.now() - loadEndedAt > timeoutMs) {
      timedOut = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
    s = await statuses();
  }
  const drainSec = (Date.now() - loadEndedAt) / 1000;
  const r = await pool.query<{ n: string; p50: number | null; p99: number | null; span: number | null }>(
    `SELECT count(*) AS n,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM settled_at - created_at)) AS p50,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM settled_at - created_at)) AS p99,
            extract(epoch FROM max(settled_at) - min(created_at)) AS span
       FROM payments.transactions
      WHERE type = 'OUTGOING' AND status = 'COMPLETED' AND created_at >= $1`,
    [since],
  );
  const row = r.rows[0]!;
  const settled = Number(row.n);
  const span = Number(row.span ?? 0);
  return {
    drainSec,
    statuses: { ...s.out, ...(s.quotesProcessing ? { 'quotes PROCESSING': s.quotesProcessing } : {}) },
    settled,
    settledPerSec: span > 0 ? settled / span : 0,
    lagP50Sec: Number(row.p50 ?? Number.NaN),
    lagP99Sec: Number(row.p99 ?? Number.NaN),
    timedOut,
  };
}

export interface MoneyCheck {
  ok: boolean;
  problems: string[];
  /** Not money lost, but worth knowing (e.g. an execute answered 5xx that went through). */
  warnings: string[];
  accounts: {
    accountId: string;
    funded: string;
    balance: string;
    pendingDebits: string;
    completedByPayments: string;
    completedByClients: string;
  }[];
  reconcile: { consistent: boolean; detail: string };
}

/** One line per kind of per-account problem: how many accounts, and the first few. */
function perAccount(kind: string, items: string[]): string[] {
  if (!items.length) return [];
  const shown = items.slice(0, 3).join('; ');
  return [`${items.length} account(s) ${kind}: ${shown}${items.length > 3 ? '; …' : ''}`];
}

/**
 * The money after the run, from the ledger and from payments, against what
 * the clients saw: every executed quote COMPLETED, no payment failed or left
 * in flight, each account's balance = funding − Σ sent of its COMPLETED
 * transactions = funding − Σ totalSendingAmount (for a transfer, which has
 * no quote, its sent amount) the clients were answered (plus the executes
 * answered with an error that went through anyway, which are reported as a
 * warning), no pending debits left, and ReconcileLedger consistent.
 */
export async function checkMoney(
  pool: pg.Pool,
  system: BenchSystem,
  payers: readonly Payer[],
  outcomes: readonly PairOutcome[],
): Promise<MoneyCheck> {
  const problems: string[] = [];
  const warnings: string[] = [];
  // Transfers (no quote) count in what the clients were answered, not here.
  const executed = outcomes.filter((o) => o.ok && o.quoteId).map((o) => o.quoteId!);
  const clientSent = sentByPayer(outcomes);
  const quotes = await pool.query<{ status: string; n: string }>(
    `SELECT status, count(*) AS n FROM payments.quotes WHERE id = ANY($1::text[]) GROUP BY status`,
    [executed],
  );
  const byStatus = Object.fromEntries(quotes.rows.map((r) => [r.status, Number(r.n)]));
  const completed = byStatus.COMPLETED ?? 0;
  if (completed !== executed.length)
    problems.push(
      `${executed.length} quotes were executed (2xx) but ${completed} are COMPLETED: ${JSON.stringify(byStatus)}`,
    );
  // Executes answered with an error (e.g. 503 after the gateway's deadline) may still have gone through.
  const uncertain = outcomes.filter((o) => !o.ok && o.quoteId && o.error?.startsWith('execute:'));
  if (uncertain.length) {
    const r = await pool.query<{ id: string; status: string; total: string }>(
      `SELECT id, status, total_sending_amount::text AS total FROM payments.quotes WHERE id = ANY($1::text[])`,
      [uncertain.map((o) => o.quoteId!)],
    );
    const went = r.rows.filter((q) => q.status !== 'PENDING' && q.status !== 'EXPIRED');
    for (const q of went) {
      const o = uncertain.find((u) => u.quoteId === q.id)!;
      clientSent.set(o.payer, (clientSent.get(o.payer) ?? 0n) + BigInt(q.total));
    }
    if (went.length)
      warnings.push(
        `${went.length} of ${uncertain.length} executes answered with an error went through anyway ` +
          `(${JSON.stringify(countBy(went.map((q) => q.status)))}): the client did not learn the outcome; ` +
          'a retry with the same Idempotency-Key returns the executed quote',
      );
  }
  const tx = await pool.query<{ status: string; n: string }>(
    `SELECT status, count(*) AS n FROM payments.transactions WHERE platform_id = $1 GROUP BY status`,
    [system.platformId],
  );
  for (const r of tx.rows)
    if (r.status !== 'COMPLETED') problems.push(`${r.n} transactions are ${r.status} (expected none)`);
  const ids = payers.map((p) => p.accountId);
  const ledger = await pool.query<{ id: string; balance: string; pending_debits: string }>(
    `SELECT id, (posted_credits - posted_debits)::text AS balance, pending_debits::text AS pending_debits
       FROM accounts.ledger_accounts WHERE id = ANY($1::text[])`,
    [ids],
  );
  const sums = await pool.query<{ id: string; sent: string }>(
    `SELECT source_account_id AS id, sum(sent_amount)::text AS sent FROM payments.transactions
      WHERE status = 'COMPLETED' AND type = 'OUTGOING' AND source_account_id = ANY($1::text[]) GROUP BY 1`,
    [ids],
  );
  const accounts: MoneyCheck['accounts'] = [];
  const wrongBalance: string[] = [];
  const clientsDiffer: string[] = [];
  const stillHeld: string[] = [];
  for (const p of payers) {
    const l = ledger.rows.find((r) => r.id === p.accountId);
    const byPayments = BigInt(sums.rows.find((r) => r.id === p.accountId)?.sent ?? '0');
    const byClients = clientSent.get(p.index) ?? 0n;
    if (!l) {
      problems.push(`${p.accountId}: no ledger account`);
      continue;
    }
    const balance = BigInt(l.balance);
    const pending = BigInt(l.pending_debits);
    if (balance !== p.funded - byPayments)
      wrongBalance.push(
        `${p.accountId} balance ${balance} ≠ funding ${p.funded} − completed payments ${byPayments}`,
      );
    if (byPayments !== byClients)
      clientsDiffer.push(`${p.accountId} completed ${byPayments}, answered ${byClients}`);
    if (pending !== 0n) stillHeld.push(`${p.accountId} ${pending}`);
    accounts.push({
      accountId: p.accountId,
      funded: String(p.funded),
      balance: String(balance),
      pendingDebits: String(pending),
      completedByPayments: String(byPayments),
      completedByClients: String(byClients),
    });
  }
  problems.push(
    ...perAccount('with a ledger balance that does not match payments', wrongBalance),
    ...perAccount('whose completed payments differ from what the clients were answered', clientsDiffer),
    ...perAccount('with funds still held (pending debits)', stillHeld),
  );
  const reconcile = await system.reconcile();
  if (!reconcile.consistent) problems.push(`ReconcileLedger is not consistent: ${reconcile.detail}`);
  return { ok: problems.length === 0, problems, warnings, accounts, reconcile };
}

function countBy(items: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[i] = (out[i] ?? 0) + 1;
  return out;
}
