/**
 * `npm run bench` (not part of `npm test`): quote-create + execute completions
 * per second through the gateway with N concurrent clients, beside the same
 * database work in one process (no gateway, no gRPC) and pgbench's TPC-B on
 * the same Postgres, for a hot account (every payment from one account) and a
 * spread load (one account per client). Checks that the ledger reconciles and
 * every balance matches, prints the table and writes it as JSON.
 * See docs/performance.md.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { DEFAULTS, runLimited } from '../stack.js';
import { checkNats, checkPostgres, PreflightError } from '../lib/preflight.js';
import { CpuSampler } from './cpu.js';
import { startGatewaySystem, type GatewaySystem } from './gateway.js';
import { startInProcessSystem } from './in-process.js';
import { runLoad } from './load.js';
import { OptionsError, parseOptions, USAGE, type BenchOptions } from './options.js';
import { pgbenchInit, pgbenchRun, type PgbenchResult } from './pgbench.js';
import {
  buildRows,
  cell,
  cpuMsPerCompletion,
  formatCpu,
  formatDetails,
  formatSummary,
  formatTargets,
  formatTransactionsByProcess,
  targetRows,
  type IdleSample,
  type SystemCase,
} from './report.js';
import { aggregate, type PairOutcome } from './stats.js';
import {
  counterEnv,
  perCompletion,
  readCounts,
  type ProcessCounts,
  type TransactionsByProcess,
} from './transactions.js';
import {
  awaitSettlement,
  checkMoney,
  commitCount,
  createDatabase,
  dropDatabase,
  postgresVersion,
  type BenchSystem,
  type MoneyCheck,
  type Payer,
} from './system.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Every payer is funded with this much (USD cents): far more than any run spends. */
const FUNDING = 10_000_000_000n;

const say = (line: string) =>
  process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

/** Undone on exit, last first (also on Ctrl-C). */
const cleanups: (() => Promise<void>)[] = [];
let interrupted = false;
function checkInterrupted(): void {
  if (interrupted) throw new Error('interrupted');
}
let cleaning: Promise<void> = Promise.resolve();
/** Runs (once each, one after the other, also when called concurrently) the pending cleanups. */
function cleanUp(): Promise<void> {
  cleaning = cleaning.then(async () => {
    while (cleanups.length)
      await cleanups.pop()!().catch((e) => say(`cleanup failed: ${(e as Error).message}`));
  });
  return cleaning;
}

/** How long the system is watched at rest before the first case. */
const IDLE_MS = 5_000;
/** --by-process: after a case has settled, how long its last events take to be relayed and handled. */
const COUNT_SETTLE_MS = 1_500;

interface SystemRun {
  idle?: IdleSample;
  cases: SystemCase[];
  /** Cases not run because the system had stalled. */
  skipped: string[];
  money?: MoneyCheck;
  setupSec: number;
  webhooksReceived?: number;
  /** The apps' last log lines (LOG_LEVEL of the run), written beside the JSON. */
  logs?: Record<string, string[]>;
  error?: string;
}

async function measureSystem(
  kind: 'gateway' | 'baseline',
  opts: BenchOptions,
  baseUrl: string,
  natsUrl: string,
  problems: string[],
): Promise<SystemRun> {
  const tag = randomBytes(3).toString('hex');
  const databaseName = `sluice_bench_${kind}_${tag}`;
  const prefix = `bench${kind.slice(0, 2)}${tag}`;
  const maxClients = Math.max(...opts.concurrency);
  const started = Date.now();
  const out: SystemRun = { cases: [], skipped: [], setupSec: 0 };
  checkInterrupted();
  say(`${kind}: fresh database ${databaseName}, subject prefix ${prefix}`);
  const databaseUrl = await createDatabase(baseUrl, databaseName);
  cleanups.push(() => dropDatabase(baseUrl, databaseName));
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  cleanups.push(() => pool.end());
  let system: BenchSystem;
  // --by-process: each app counts its own transactions into this directory (tools/bench/transactions.ts).
  const countsDir =
    kind === 'gateway' && opts.byProcess ? join(os.tmpdir(), `sluice-bench-tx-${tag}`) : undefined;
  if (countsDir) cleanups.push(async () => rmSync(countsDir, { recursive: true, force: true }));
  if (kind === 'gateway') {
    say('gateway: starting every app as its own process (tools/stack.ts)');
    system = await startGatewaySystem({
      baseDatabaseUrl: baseUrl,
      databaseUrl,
      databaseName,
      natsUrl,
      prefix,
      timeScale: opts.timeScale,
      logLevel: opts.logLevel,
      maxClients,
      webhooks: opts.webhooks,
      ...(opts.paymentsPoolMax ? { paymentsPoolMax: opts.paymentsPoolMax } : {}),
      ...(countsDir ? { env: counterEnv(countsDir) } : {}),
    });
  } else {
    say('baseline: opening identity, accounts and payments stores in this process');
    system = await startInProcessSystem({
      databaseUrl,
      databaseName,
      natsUrl,
      prefix,
      timeScale: opts.timeScale,
      logLevel: opts.logLevel,
      ...(opts.paymentsPoolMax ? { paymentsPoolMax: opts.paymentsPoolMax } : {}),
    });
  }
  cleanups.push(() => system.close());
  let died: string | undefined;
  if (kind === 'gateway') {
    const stack = (system as GatewaySystem).stack;
    void stack.failed.then((e) => {
      died = `${e.app} exited (${e.signal ?? e.code}): ${stack.logs(e.app, 20).join('\n')}`;
    });
  }

  // Payers: index 0 is the hot account, 1..maxClients the spread accounts.
  const indexes = [
    ...(opts.scenarios.includes('hot') ? [0] : []),
    ...(opts.scenarios.includes('spread') ? Array.from({ length: maxClients }, (_, i) => i + 1) : []),
  ];
  const payers: Payer[] = [];
  await runLimited(indexes, 4, async (i) => {
    payers.push(await system.createPayer(i, FUNDING));
  });
  const payer = new Map(payers.map((p) => [p.index, p]));
  out.setupSec = (Date.now() - started) / 1000;
  say(`${kind}: ready in ${out.setupSec.toFixed(1)} s with ${payers.length} funded accounts`);

  // At rest: what the pollers (scheduler, outbox relays, consumers) cost without load.
  let idleCounts:
    | { before: Map<string, ProcessCounts>; at: number; after?: Map<string, ProcessCounts>; seconds?: number }
    | undefined;
  {
    const sampler = new CpuSampler(system.cpuRoots(), databaseName);
    const n0 = await commitCount(pool, databaseName);
    if (countsDir) idleCounts = { before: readCounts(countsDir), at: Date.now() };
    sampler.start();
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const cpu = sampler.stop();
    if (idleCounts)
      Object.assign(idleCounts, {
        after: readCounts(countsDir!),
        seconds: (Date.now() - idleCounts.at) / 1000,
      });
    const n1 = await commitCount(pool, databaseName);
    out.idle = { seconds: cpu.seconds, cpu, dbTransactionsPerSec: (n1 - n0) / cpu.seconds };
    say(
      `${kind}: at rest ${out.idle.dbTransactionsPerSec.toFixed(0)} db transactions/s, ` +
        `machine busy ${cpu.machineBusyPct.toFixed(0)} % of one core`,
    );
  }

  // Cases by client count, both scenarios side by side (a system that stalls loses only the last ones).
  const plan = opts.concurrency.flatMap((clients) =>
    opts.scenarios.map((scenario) => ({ scenario, clients })),
  );
  const outcomes: PairOutcome[] = [];
  const firstCase = new Date();
  let stalled: string | undefined;
  for (const { scenario, clients } of plan) {
    if (stalled) {
      out.skipped.push(`${scenario} N=${clients}`);
      continue;
    }
    checkInterrupted();
    const since = new Date();
    const sampler = new CpuSampler(system.cpuRoots(), databaseName);
    let commits0: Promise<number | undefined> | undefined;
    let commits1: Promise<number | undefined> | undefined;
    let cpu: ReturnType<CpuSampler['stop']> | undefined;
    // --by-process: from before the load until the case's payments are settled and their events handled.
    const counts0 = countsDir ? readCounts(countsDir) : undefined;
    const countedFrom = Date.now();
    const backends: { active: number; waiting: number }[] = [];
    let backendsTimer: NodeJS.Timeout | undefined;
    const pick = (client: number) => payer.get(scenario === 'hot' ? 0 : client + 1)!;
    const run = await runLoad({
      clients,
      warmupMs: opts.warmupSec * 1000,
      durationMs: opts.durationSec * 1000,
      pair: (client, seq) =>
        system.pair(pick(client), opts.amount, `bench-${scenario}-${clients}-${client}-${seq}-${tag}`),
      onWindowStart: () => {
        sampler.start();
        backendsTimer = setInterval(() => {
          void pool
            .query<{ active: string; waiting: string }>(
              `SELECT count(*) FILTER (WHERE state = 'active') AS active,
                      count(*) FILTER (WHERE wait_event_type = 'Lock') AS waiting
                 FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
              [databaseName],
            )
            .then((r) =>
              backends.push({ active: Number(r.rows[0]!.active), waiting: Number(r.rows[0]!.waiting) }),
            )
            .catch(() => undefined);
        }, 250);
        commits0 = commitCount(pool, databaseName).catch(() => undefined);
      },
      onWindowEnd: () => {
        clearInterval(backendsTimer);
        cpu = sampler.stop();
        commits1 = commitCount(pool, databaseName).catch(() => undefined);
      },
    });
    const loadEnded = Date.now();
    outcomes.push(...run.outcomes);
    const metrics = aggregate(run);
    const [c0, c1] = [await commits0, await commits1];
    const dbTx = c0 !== undefined && c1 !== undefined ? c1 - c0 : undefined;
    const settlement = await awaitSettlement(pool, since, loadEnded, opts.settleTimeoutSec * 1000);
    let transactionsByProcess: TransactionsByProcess | undefined;
    if (countsDir && counts0) {
      // The relays and consumers finish a settled payment's events within moments; then the counters flush.
      await new Promise((r) => setTimeout(r, COUNT_SETTLE_MS));
      const executed = run.outcomes.filter((o) => o.ok).length;
      const seconds = (Date.now() - countedFrom) / 1000;
      transactionsByProcess = perCompletion(counts0, readCounts(countsDir), executed, {
        ...(idleCounts?.after
          ? {
              idle: { before: idleCounts.before, after: idleCounts.after, seconds: idleCounts.seconds! },
              seconds,
            }
          : {}),
      });
    }
    const c: SystemCase = {
      scenario,
      clients,
      metrics,
      settlement,
      ...(cpu ? { cpu } : {}),
      ...(transactionsByProcess ? { transactionsByProcess } : {}),
      ...(backends.length
        ? {
            backendsActiveAvg: backends.reduce((a, b) => a + b.active, 0) / backends.length,
            backendsWaitingOnLockAvg: backends.reduce((a, b) => a + b.waiting, 0) / backends.length,
          }
        : {}),
      ...(dbTx !== undefined
        ? {
            dbTransactionsPerSec: dbTx / metrics.seconds,
            ...(metrics.completions
              ? {
                  dbTransactionsPerCompletion: dbTx / metrics.completions,
                  dbTransactionsPerCompletionNet:
                    (dbTx - (out.idle?.dbTransactionsPerSec ?? 0) * metrics.seconds) / metrics.completions,
                }
              : {}),
          }
        : {}),
    };
    out.cases.push(c);
    const errors = Object.entries(metrics.errors)
      .map(([k, v]) => `${k}×${v}`)
      .join(', ');
    say(
      `${kind} ${scenario} N=${clients}: ${metrics.completionsPerSec.toFixed(1)}/s, ` +
        `p50 ${metrics.pair.p50.toFixed(1)} ms, p99 ${metrics.pair.p99.toFixed(1)} ms` +
        `${errors ? `, errors ${errors}` : ''}` +
        `${metrics.retried ? `, ${metrics.retried} executes sent again after 503 Retry-After (admission)` : ''}` +
        `; settled ${settlement.settled} in ` +
        `${settlement.drainSec.toFixed(1)} s after the load${settlement.timedOut ? ' (TIMED OUT)' : ''}`,
    );
    if (died) throw new Error(`the stack failed during the run: ${died}`);
    if (settlement.timedOut) {
      stalled = `${scenario} N=${clients}`;
      problems.push(
        `${kind} ${scenario} N=${clients}: payments still in flight ${opts.settleTimeoutSec} s after the load ` +
          `(${JSON.stringify(settlement.statuses)}); the remaining cases were skipped`,
      );
      say(`${kind}: payments stalled; skipping the remaining cases`);
    }
  }
  if (stalled) {
    // A stalled system may still settle everything later: give it once more the time, then check the money.
    const again = await awaitSettlement(pool, firstCase, Date.now(), opts.settleTimeoutSec * 1000);
    say(
      `${kind}: ${again.timedOut ? 'still not settled' : 'settled'} ${again.drainSec.toFixed(1)} s later: ` +
        JSON.stringify(again.statuses),
    );
  }

  out.money = await checkMoney(pool, system, payers, outcomes);
  const executed = outcomes.filter((o) => o.ok).length;
  for (const w of out.money.warnings) say(`${kind}: note: ${w}`);
  if (out.money.ok)
    say(
      `${kind}: money checked — ${executed} executed quotes all COMPLETED, ${payers.length} balances match, ReconcileLedger consistent`,
    );
  else {
    for (const p of out.money.problems) say(`${kind}: MONEY CHECK FAILED: ${p}`);
    problems.push(...out.money.problems.map((p) => `${kind}: ${p}`));
  }
  if (kind === 'gateway') {
    const g = system as GatewaySystem;
    out.webhooksReceived = g.webhooksReceived();
    out.logs = g.logTails();
  }
  await cleanUp();
  return out;
}

async function measurePgbench(
  opts: BenchOptions,
  baseUrl: string,
): Promise<{ scale: number; results: PgbenchResult[] }> {
  checkInterrupted();
  const database = `sluice_bench_pgbench_${randomBytes(3).toString('hex')}`;
  say(`pgbench: -i -s ${opts.pgbenchScale} in ${database}`);
  const url = await createDatabase(baseUrl, database);
  cleanups.push(() => dropDatabase(baseUrl, database));
  await pgbenchInit(url, database, opts.pgbenchScale);
  const results: PgbenchResult[] = [];
  for (const clients of opts.concurrency) {
    checkInterrupted();
    const r = await pgbenchRun(url, database, clients, opts.pgbenchDurationSec);
    results.push(r);
    say(
      r.error
        ? `pgbench -c ${clients}: ${r.error}`
        : `pgbench -c ${clients} -j ${r.threads} -T ${r.seconds}: ${r.tps!.toFixed(0)} tps, latency avg ${r.latencyAvgMs} ms`,
    );
  }
  await cleanUp();
  return { scale: opts.pgbenchScale, results };
}

/** bigint as a string, fractions to 3 decimals (the JSON stays readable). */
function jsonValue(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && !Number.isInteger(v) && Number.isFinite(v)) return Math.round(v * 1000) / 1000;
  return v;
}

async function main(): Promise<number> {
  let opts: BenchOptions;
  try {
    opts = parseOptions(process.argv.slice(2), process.env);
  } catch (err) {
    if (err instanceof OptionsError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (opts.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const baseUrl = process.env.DATABASE_URL || DEFAULTS.databaseUrl;
  const natsUrl = process.env.NATS_URL || DEFAULTS.natsUrl;
  try {
    await Promise.all([
      checkPostgres(baseUrl),
      opts.systems.some((s) => s !== 'pgbench') ? checkNats(natsUrl) : null,
    ]);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    if (err instanceof PreflightError) process.stderr.write(err.hint.map((h) => `  ${h}\n`).join(''));
    return 1;
  }
  const startedAt = new Date();
  const outFile = resolve(
    ROOT,
    opts.out ?? `bench-results/bench-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`,
  );
  const machine = {
    hostname: os.hostname(),
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    postgres: await postgresVersion(baseUrl),
    loadAverageAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
  say(
    `${machine.cpus} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, Postgres ${machine.postgres}, ` +
      `load average ${machine.loadAverageAtStart.join(' ')}; cases ${opts.scenarios.join('/')} × N=${opts.concurrency.join(',')}, ` +
      `${opts.warmupSec} s warm-up + ${opts.durationSec} s each`,
  );

  const problems: string[] = [];
  const runs: { gateway?: SystemRun; baseline?: SystemRun } = {};
  for (const kind of ['gateway', 'baseline'] as const) {
    if (!opts.systems.includes(kind)) continue;
    try {
      runs[kind] = await measureSystem(kind, opts, baseUrl, natsUrl, problems);
    } catch (err) {
      say(`${kind}: FAILED: ${(err as Error).stack ?? err}`);
      problems.push(`${kind}: ${(err as Error).message}`);
      runs[kind] = { cases: [], skipped: [], setupSec: 0, error: (err as Error).message };
      await cleanUp();
    }
  }
  let pgbench: { scale: number; results: PgbenchResult[]; error?: string } | undefined;
  if (opts.systems.includes('pgbench')) {
    try {
      pgbench = await measurePgbench(opts, baseUrl);
    } catch (err) {
      say(`pgbench: FAILED: ${(err as Error).message}`);
      problems.push(`pgbench: ${(err as Error).message}`);
      pgbench = { scale: opts.pgbenchScale, results: [], error: (err as Error).message };
      await cleanUp();
    }
  }

  // --webhooks: the delivery benchmark too (tools/bench/webhooks.ts, its own stack), with the
  // platform's endpoint and without one, at the same client counts; its tables print as it runs.
  const webhookRuns: { endpoint: boolean; status: number | null }[] = [];
  if (opts.webhooks) {
    for (const endpoint of [true, false]) {
      say(`webhook delivery benchmark, ${endpoint ? 'with' : 'without'} an endpoint`);
      const r = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          resolve(ROOT, 'tools/bench/webhooks.ts'),
          '--clients',
          opts.concurrency.join(','),
          '--duration',
          String(opts.durationSec),
          ...(endpoint ? [] : ['--no-endpoint']),
        ],
        { cwd: ROOT, stdio: 'inherit', env: process.env },
      );
      webhookRuns.push({ endpoint, status: r.status });
      if (r.status !== 0)
        problems.push(
          `webhook delivery benchmark (${endpoint ? 'endpoint' : 'no endpoint'}): exit ${r.status}`,
        );
    }
  }

  // --bulk-import <rows>: the bulk customer import benchmark (its own stack); it prints as it runs.
  if (opts.bulkImportRows) {
    say(`bulk customer import benchmark, ${opts.bulkImportRows} rows`);
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', resolve(ROOT, 'tools/bench/bulk-import.ts'), '--rows', String(opts.bulkImportRows)],
      { cwd: ROOT, stdio: 'inherit', env: process.env },
    );
    if (r.status !== 0) problems.push(`bulk import benchmark: exit ${r.status}`);
  }

  const rows = buildRows(runs.gateway?.cases ?? [], runs.baseline?.cases ?? [], pgbench?.results ?? []);
  const targets = targetRows(rows, runs.gateway?.cases ?? [], runs.baseline?.cases ?? [], runs.gateway?.idle);
  const finishedAt = new Date();
  const report = {
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    machine: { ...machine, loadAverageAtEnd: os.loadavg().map((l) => Math.round(l * 100) / 100) },
    note: opts.note ?? null,
    options: opts,
    summary: rows,
    targets,
    gateway: runs.gateway ?? null,
    baseline: runs.baseline ?? null,
    pgbench: pgbench ?? null,
    webhookDeliveryRuns: webhookRuns,
    ok: problems.length === 0,
    problems,
  };
  mkdirSync(dirname(outFile), { recursive: true });
  const logs = runs.gateway?.logs;
  if (runs.gateway) delete runs.gateway.logs;
  writeFileSync(outFile, JSON.stringify(report, jsonValue, 2) + '\n');
  const logFile = outFile.replace(/\.json$/, '') + '.gateway-logs.txt';
  if (logs && Object.values(logs).some((l) => l.length))
    writeFileSync(
      logFile,
      Object.entries(logs)
        .map(([app, lines]) => `== ${app} (last ${lines.length} lines)\n${lines.join('\n')}\n`)
        .join('\n'),
    );

  const print = (s: string) => process.stdout.write(`${s}\n`);
  print('');
  print(
    'Quote-create + execute completions per second (a completion = both calls answered 2xx); latency of the pair',
  );
  print(formatSummary(rows));
  for (const kind of ['gateway', 'baseline'] as const) {
    const r = runs[kind];
    if (!r?.cases.length) continue;
    print('');
    print(`${kind}: per case`);
    print(formatDetails(r.cases));
    print('');
    print(
      `${kind}: CPU per process during the measured window (% of one core; ${machine.cpus} cores = ${machine.cpus * 100})`,
    );
    print(formatCpu(r.cases, r.idle));
    if (r.cases.some((c) => c.transactionsByProcess)) {
      print('');
      print(
        `${kind}: database transactions per executed pair by process — all of a case's pairs (warm-up included), ` +
          'from before its load until they are settled and their events handled, net of what each process does at rest ' +
          '(counted in each app: tools/bench/transaction-counter.mjs)',
      );
      print(formatTransactionsByProcess(r.cases));
    }
  }
  if (!opts.quick) {
    print('');
    print('Against the targets (docs/performance.md; issue 15), over the cases this run measured');
    print(formatTargets(targets));
    print(
      '(`npm start` and one service restarted until ready are timed by their own scripts: docs/performance.md, ' +
        '"Starting the stack" and "Restarting one service")',
    );
  }
  if (opts.quick)
    for (const c of runs.gateway?.cases ?? [])
      print(
        `\nquick (${c.scenario} N=${c.clients}, load average ${machine.loadAverageAtStart.join(' ')} at start): ` +
          `${cell(cpuMsPerCompletion(c), 1)} ms of CPU and ${cell(c.dbTransactionsPerCompletion, 1)} database ` +
          `transactions (${cell(c.dbTransactionsPerCompletionNet, 1)} net of idle) per pair, ` +
          `${cell(c.metrics.completionsPerSec, 1)} pairs/s`,
      );
  print('');
  print(`Results: ${relative(process.cwd(), outFile) || outFile}`);
  if (logs && Object.values(logs).some((l) => l.length))
    print(`The apps' ${opts.logLevel}+ log lines: ${relative(process.cwd(), logFile) || logFile}`);
  for (const kind of ['gateway', 'baseline'] as const)
    if (runs[kind]?.skipped.length)
      print(`${kind}: skipped after a stall: ${runs[kind]!.skipped.join(', ')}`);
  if (problems.length) {
    print('');
    print(`FAILED (${problems.length}):`);
    for (const p of problems) print(`  - ${p}`);
    return 1;
  }
  return 0;
}

// A stray rejection (a counter query refused by a full Postgres, ...) is reported, not fatal.
process.on('unhandledRejection', (err) => say(`unhandled: ${(err as Error)?.message ?? err}`));

process.once('SIGINT', () => {
  interrupted = true;
  say('interrupted; cleaning up');
  void cleanUp().finally(() => process.exit(130));
});

main().then(
  async (code) => {
    await cleanUp();
    process.exit(code);
  },
  async (err) => {
    process.stderr.write(`${(err as Error).stack ?? err}\n`);
    await cleanUp();
    process.exit(1);
  },
);
