/* eslint-disable @typescript-eslint/no-explicit-any -- set-up answers are read field by field */
import { Agent } from 'node:http';
import fc from 'fast-check';
import type pg from 'pg';
import { badRequests, describeCase, type BadRequest } from './cases.js';
import { changedTables, newRows, settledDigest } from './digest.js';
import { judge, send } from './oracle.js';
import { ApiDocument } from './operations.js';

/**
 * Generated bad input over every operation of the gateway's own OpenAPI document
 * (`<base>/openapi.json`), judged by the oracle (oracle.ts), with a digest of every table before
 * and after: a bad request changes nothing. The CLI (run.ts) and the end-to-end file
 * (tests/e2e/generated-input.spec.ts) both run this against real processes.
 */

export interface FuzzOptions {
  /** The versioned API, e.g. `http://127.0.0.1:3000/v1`. */
  baseUrl: string;
  /** A valid `Authorization` of a platform (Basic). */
  authorization: string;
  /** Its token id (bad credentials reuse it with a wrong secret). */
  tokenId: string;
  /** The gateway's BODY_LIMIT_BYTES. */
  bodyLimit: number;
  /** The stack's database, for the digest. */
  db: pg.Pool;
  count: number;
  seed: number;
  /** Record every failing case and go on (no shrinking), instead of stopping at the first. */
  keepGoing?: boolean;
  progress?: (done: number) => void;
}

export interface Failure {
  request: string;
  problems: string[];
  answer: string;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  /** Cases the schema check found valid after all (not sent). */
  skipped: number;
  /** Cases whose field at fault was not checked: the generator's base request was not valid by the document. */
  fieldUnchecked: number;
  operations: number;
  byOperation: Record<string, number>;
  byStatus: Record<string, number>;
  byFault: Record<string, number>;
  serverErrors: number;
  failures: Failure[];
  /** The first failing case, shrunk by fast-check (not with keepGoing). */
  minimized?: Failure;
  changedTables: string[];
  /** Some rows of each changed table that were not there before. */
  newRows: Record<string, string[]>;
  seconds: number;
}

const bump = (m: Record<string, number>, k: string) => {
  m[k] = (m[k] ?? 0) + 1;
};

/** The bad requests of every operation of `api`, each operation weighted alike. */
export function everyOperation(api: ApiDocument, o: { tokenId: string; bodyLimit: number }): fc.Arbitrary<BadRequest> {
  return fc.oneof(...api.operations.map((op) => badRequests(api, op, o)));
}

/**
 * What the bad requests are sent into: USD enabled, a customer, and an agent of it connected
 * (its bearer token, so agent operations are reached past authentication too).
 */
async function seedWorld(baseUrl: string, authorization: string): Promise<{ agentAuthorization: string }> {
  const call = async (method: string, path: string, body?: unknown, auth: string | null = authorization) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...(auth ? { authorization: auth } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`set-up ${method} ${path} answered ${res.status}: ${text}`);
    return JSON.parse(text) as Record<string, any>;
  };
  await call('PATCH', '/config', { supportedCurrencies: [{ currencyCode: 'USD' }] });
  const customer = await call('POST', '/customers', { customerType: 'INDIVIDUAL', platformCustomerId: 'fuzz-ada', currencies: ['USD'] });
  const created = await call('POST', '/agents', {
    name: 'Fuzz bot',
    customerId: customer.id,
    policy: {
      permissions: ['VIEW_TRANSACTIONS', 'CREATE_TRANSFERS', 'CREATE_QUOTES', 'EXECUTE_QUOTES'],
      defaultExecutionMode: 'AUTO',
      spendingLimits: { currency: 'USD', perTransactionLimit: 50_000, dailyLimit: 100_000, dailyTransactionLimit: 20, monthlyLimit: 500_000 },
    },
  });
  const redeemed = await call('POST', `/agents/device-codes/${encodeURIComponent(created.deviceCode.code)}/redeem`, undefined, null);
  return { agentAuthorization: `Bearer ${redeemed.accessToken}` };
}

export async function runFuzz(o: FuzzOptions): Promise<FuzzReport> {
  const started = Date.now();
  const { agentAuthorization } = await seedWorld(o.baseUrl, o.authorization);
  const docRes = await fetch(`${o.baseUrl}/openapi.json`);
  if (docRes.status !== 200) throw new Error(`openapi.json answered ${docRes.status}`);
  const api = new ApiDocument(await docRes.json());
  const operations = new Map(api.operations.map((op) => [op.name, op]));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const report: FuzzReport = {
    seed: o.seed,
    requests: 0,
    skipped: 0,
    fieldUnchecked: 0,
    operations: api.operations.length,
    byOperation: {},
    byStatus: {},
    byFault: {},
    serverErrors: 0,
    failures: [],
    changedTables: [],
    newRows: {},
    seconds: 0,
  };
  const before = await settledDigest(o.db);
  let shrinking = false;
  let lastFailure: Failure | undefined;
  const property = fc.asyncProperty(everyOperation(api, o), async (c) => {
    const op = operations.get(c.operation)!;
    if (c.schemaFault !== undefined && api.valid(op.body!, c.schemaFault)) {
      if (!shrinking) report.skipped++;
      fc.pre(false);
    }
    let problems: string[];
    let answerText: string;
    try {
      const answer = await send(agent, o.baseUrl, op.auth === 'agent' ? agentAuthorization : o.authorization, c);
      problems = judge(api, op, c, answer);
      answerText = `${answer.status} ${answer.text.slice(0, 300)}`;
      if (!shrinking) {
        bump(report.byStatus, String(answer.status));
        if (answer.status >= 500) report.serverErrors++;
      }
    } catch (err) {
      problems = [`no answer: ${(err as Error).message}`];
      answerText = '(none)';
      if (!shrinking) bump(report.byStatus, 'no answer');
    }
    if (!shrinking) {
      report.requests++;
      bump(report.byOperation, c.operation);
      bump(report.byFault, c.fault);
      if (c.field && !c.baseValid) report.fieldUnchecked++;
      o.progress?.(report.requests);
    }
    if (problems.length === 0) return true;
    const failure = { request: describeCase(c), problems, answer: answerText };
    if (o.keepGoing) {
      report.failures.push(failure);
      return true;
    }
    if (!shrinking) report.failures.push(failure);
    shrinking = true;
    lastFailure = failure;
    return false;
  });
  try {
    const details = await fc.check(property, { numRuns: o.count, seed: o.seed, maxSkipsPerRun: 1_000 });
    if (details.failed && lastFailure) report.minimized = lastFailure;
  } finally {
    agent.destroy();
  }
  const after = await settledDigest(o.db);
  report.changedTables = changedTables(before, after);
  for (const t of report.changedTables) report.newRows[t] = await newRows(o.db, t, before);
  report.seconds = (Date.now() - started) / 1000;
  return report;
}

/** The report as the lines `npm run fuzz` prints. */
export function formatReport(r: FuzzReport): string[] {
  const table = (m: Record<string, number>) =>
    Object.entries(m)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([k, n]) => `  ${String(n).padStart(6)}  ${k}`);
  const lines = [
    `${r.requests} bad requests over ${Object.keys(r.byOperation).length} of ${r.operations} operations in ${r.seconds.toFixed(1)} s (seed ${r.seed}; ${r.skipped} generated cases were valid after all and not sent)`,
    `server errors (5xx): ${r.serverErrors}`,
    `field at fault checked in every case that has one but ${r.fieldUnchecked} (their generated base was not valid by the document)`,
    `cases the oracle refused: ${r.failures.length}`,
    `tables changed: ${r.changedTables.length ? r.changedTables.join(', ') : 'none'}`,
    'by status:',
    ...table(r.byStatus),
    'by class of bad input:',
    ...table(r.byFault),
    'by operation:',
    ...table(r.byOperation),
  ];
  for (const [t, rows] of Object.entries(r.newRows)) lines.push(`new rows of ${t}:`, ...rows.map((row) => `  ${row}`));
  for (const f of r.failures.slice(0, 50)) lines.push(`FAILED ${f.request}\n  ${f.problems.join('\n  ')}\n  answer: ${f.answer}`);
  if (r.minimized)
    lines.push(`MINIMIZED ${r.minimized.request}\n  ${r.minimized.problems.join('\n  ')}\n  answer: ${r.minimized.answer}`);
  return lines;
}
