/** The results of a run: the summary rows with their ratios, and the printed tables (pure). */
import type { CpuReport } from './cpu.js';
import type { Scenario } from './options.js';
import type { PgbenchResult } from './pgbench.js';
import { ratio, type CaseMetrics } from './stats.js';
import type { Settlement } from './system.js';
import type { TransactionsByProcess } from './transactions.js';

/** One case of one system (gateway or baseline). */
export interface SystemCase {
  scenario: Scenario;
  clients: number;
  metrics: CaseMetrics;
  settlement?: Settlement;
  cpu?: CpuReport;
  /** Database transactions (commits + rollbacks, every process) per second during the window, and per completion. */
  dbTransactionsPerSec?: number;
  dbTransactionsPerCompletion?: number;
  /** The same per completion, less what the system does at rest (pollers, relays) in as long. */
  dbTransactionsPerCompletionNet?: number;
  /** Backends of the case's database, sampled 4×/s: on average how many were active, and how many waited on a lock. */
  backendsActiveAvg?: number;
  backendsWaitingOnLockAvg?: number;
  /** --by-process: the window's database transactions per completion, by process (counted in each app). */
  transactionsByProcess?: TransactionsByProcess;
}

/** CPU rows that are not the system under test (other people's work on a shared machine). */
export const FOREIGN_CPU = ['other processes', 'postgres: other databases'];

/** % of one core used by the system under test (its processes, their Postgres backends, nats-server, …). */
export function ownCpuPct(cpu: CpuReport): number {
  return Object.entries(cpu.byProcess)
    .filter(([label]) => !FOREIGN_CPU.includes(label))
    .reduce((sum, [, pct]) => sum + pct, 0);
}

/** Milliseconds of CPU (all of the system's processes) per completion. */
export function cpuMsPerCompletion(c: SystemCase): number | undefined {
  if (!c.cpu || !c.metrics.completionsPerSec) return undefined;
  return (ownCpuPct(c.cpu) / 100 / c.metrics.completionsPerSec) * 1000;
}

/** The system at rest (after set-up, before the first case): what its pollers cost. */
export interface IdleSample {
  seconds: number;
  cpu: CpuReport;
  dbTransactionsPerSec: number;
}

export interface Figures {
  completionsPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

export interface SummaryRow {
  scenario: Scenario;
  clients: number;
  gateway?: Figures;
  baseline?: Figures;
  pgbenchTps?: number;
  gatewayToBaseline?: number;
  gatewayToPgbench?: number;
  baselineToPgbench?: number;
}

function figures(c: SystemCase | undefined): Figures | undefined {
  if (!c) return undefined;
  return {
    completionsPerSec: c.metrics.completionsPerSec,
    p50Ms: c.metrics.pair.p50,
    p99Ms: c.metrics.pair.p99,
  };
}

/** One row per (scenario, clients) measured by any system, spread first, then by clients. */
export function buildRows(
  gateway: readonly SystemCase[],
  baseline: readonly SystemCase[],
  pgbench: readonly PgbenchResult[],
): SummaryRow[] {
  const keys = new Map<string, { scenario: Scenario; clients: number }>();
  for (const c of [...gateway, ...baseline]) keys.set(`${c.scenario}:${c.clients}`, c);
  const order = (s: Scenario) => (s === 'spread' ? 0 : 1);
  return [...keys.values()]
    .sort((a, b) => order(a.scenario) - order(b.scenario) || a.clients - b.clients)
    .map(({ scenario, clients }) => {
      const g = figures(gateway.find((c) => c.scenario === scenario && c.clients === clients));
      const b = figures(baseline.find((c) => c.scenario === scenario && c.clients === clients));
      const tps = pgbench.find((p) => p.clients === clients)?.tps;
      const row: SummaryRow = { scenario, clients };
      if (g) row.gateway = g;
      if (b) row.baseline = b;
      if (tps !== undefined) row.pgbenchTps = tps;
      const gb = ratio(g?.completionsPerSec, b?.completionsPerSec);
      const gp = ratio(g?.completionsPerSec, tps);
      const bp = ratio(b?.completionsPerSec, tps);
      if (gb !== undefined) row.gatewayToBaseline = gb;
      if (gp !== undefined) row.gatewayToPgbench = gp;
      if (bp !== undefined) row.baselineToPgbench = bp;
      return row;
    });
}

/** A number for a table cell: fixed digits, '—' when unknown. */
export function cell(v: number | undefined, digits = 1): string {
  return v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits);
}

/** A plain-text table with right-aligned cells (the first column left-aligned). */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatSummary(rows: readonly SummaryRow[]): string {
  return table(
    [
      'case',
      'N',
      'gateway/s',
      'p50 ms',
      'p99 ms',
      'baseline/s',
      'p50 ms',
      'p99 ms',
      'pgbench tps',
      'gw/base',
      'gw/pgb',
      'base/pgb',
    ],
    rows.map((r) => [
      r.scenario,
      String(r.clients),
      cell(r.gateway?.completionsPerSec),
      cell(r.gateway?.p50Ms),
      cell(r.gateway?.p99Ms),
      cell(r.baseline?.completionsPerSec),
      cell(r.baseline?.p50Ms),
      cell(r.baseline?.p99Ms),
      cell(r.pgbenchTps, 0),
      cell(r.gatewayToBaseline, 2),
      cell(r.gatewayToPgbench, 3),
      cell(r.baselineToPgbench, 3),
    ]),
  );
}

const caseLabel = (c: Pick<SystemCase, 'scenario' | 'clients'>) => `${c.scenario} N=${c.clients}`;

/** Per case of one system: calls, errors, database transactions and settlement. */
export function formatDetails(cases: readonly SystemCase[]): string {
  return table(
    [
      'case',
      'done',
      'errors',
      'create p50/p99',
      'execute p50/p99',
      'max ms',
      'db tx/s',
      'db tx/done (net)',
      'lock waits',
      'CPU ms/done',
      'settle drain s',
      'settled/s',
      'settle lag p50/p99 s',
    ],
    cases.map((c) => {
      const m = c.metrics;
      const errors = Object.entries(m.errors)
        .map(([k, v]) => `${k}×${v}`)
        .join(' ');
      const s = c.settlement;
      return [
        caseLabel(c),
        String(m.completions),
        errors || '0',
        `${cell(m.create.p50)}/${cell(m.create.p99)}`,
        `${cell(m.execute.p50)}/${cell(m.execute.p99)}`,
        cell(m.pair.max, 0),
        cell(c.dbTransactionsPerSec, 0),
        `${cell(c.dbTransactionsPerCompletion, 1)} (${cell(c.dbTransactionsPerCompletionNet, 1)})`,
        `${cell(c.backendsWaitingOnLockAvg, 2)}/${cell(c.backendsActiveAvg, 1)}`,
        cell(cpuMsPerCompletion(c), 0),
        s ? `${cell(s.drainSec, 1)}${s.timedOut ? ' (timed out)' : ''}` : '—',
        s ? cell(s.settledPerSec, 1) : '—',
        s ? `${cell(s.lagP50Sec, 2)}/${cell(s.lagP99Sec, 2)}` : '—',
      ];
    }),
  );
}

/**
 * CPU per process group (% of one core) at rest and in each case: rows =
 * processes (those above 0.5 % somewhere), columns = cases.
 */
export function formatCpu(cases: readonly SystemCase[], idle?: IdleSample): string {
  const measured: { label: string; cpu: CpuReport }[] = [
    ...(idle ? [{ label: 'at rest', cpu: idle.cpu }] : []),
    ...cases.filter((c) => c.cpu).map((c) => ({ label: caseLabel(c), cpu: c.cpu! })),
  ];
  if (!measured.length) return '(no CPU samples)';
  const labels = new Map<string, number>();
  for (const c of measured)
    for (const [k, v] of Object.entries(c.cpu.byProcess)) labels.set(k, Math.max(labels.get(k) ?? 0, v));
  const sorted = [...labels.entries()].filter(([, max]) => max >= 0.5).sort((a, b) => b[1] - a[1]);
  const rows = sorted.map(([label]) => [label, ...measured.map((c) => cell(c.cpu.byProcess[label] ?? 0, 0))]);
  rows.push(['machine busy (all cores)', ...measured.map((c) => cell(c.cpu.machineBusyPct, 0))]);
  return table(['% of one core', ...measured.map((c) => c.label)], rows);
}

/**
 * --by-process: database transactions per completion by process (rows) and case (columns), then,
 * per case, the transactions by their first statement.
 */
export function formatTransactionsByProcess(cases: readonly SystemCase[]): string {
  const counted = cases.filter((c) => c.transactionsByProcess);
  if (!counted.length) return '(not counted)';
  const labels = new Map<string, number>();
  for (const c of counted)
    for (const [k, v] of Object.entries(c.transactionsByProcess!.byProcess))
      labels.set(k, Math.max(labels.get(k) ?? 0, v));
  const sorted = [...labels.entries()].filter(([, max]) => max >= 0.05).sort((a, b) => b[1] - a[1]);
  const rows = sorted.map(([label]) => [
    label,
    ...counted.map((c) => cell(c.transactionsByProcess!.byProcess[label] ?? 0, 2)),
  ]);
  rows.push([
    'all processes',
    ...counted.map((c) =>
      cell(
        Object.values(c.transactionsByProcess!.byProcess).reduce((a, b) => a + b, 0),
        2,
      ),
    ),
  ]);
  const statements = (c: SystemCase) => c.transactionsByProcess!.statementsByProcess ?? {};
  rows.push([
    'statements (round trips) per pair',
    ...counted.map((c) => cell(Object.values(statements(c)).reduce((a, b) => a + b, 0), 1)),
  ]);
  for (const [label] of sorted)
    rows.push([`  of which ${label}`, ...counted.map((c) => cell(statements(c)[label] ?? 0, 1))]);
  const out = [table(['transactions per pair', ...counted.map(caseLabel)], rows)];
  for (const c of counted) {
    out.push('');
    out.push(`${caseLabel(c)}: transactions per pair by their first statement`);
    const rows = c.transactionsByProcess!.byStatement;
    const width = Math.max(0, ...rows.map((r) => r.process.length));
    for (const r of rows)
      out.push(`${cell(r.perCompletion, 2).padStart(6)}  ${r.process.padEnd(width)}  ${r.statement}`);
  }
  return out.join('\n');
}

/** One row of issue 15's table of targets: what this run measured against it. */
export interface TargetRow {
  figure: string;
  target: string;
  measured: string;
  /** Undefined when this run did not measure it (a system or a client count left out). */
  met?: boolean;
}

/** `lo–hi` of some figures (one value when they agree at that precision). */
function span(values: readonly number[], digits: number): string {
  const lo = cell(Math.min(...values), digits);
  const hi = cell(Math.max(...values), digits);
  return lo === hi ? lo : `${lo}–${hi}`;
}

/**
 * The performance targets (docs/performance.md, issue 15) against what this run measured: each row
 * with its figures over the cases it concerns, and whether all of them meet it. `npm start` and a
 * service's restart are measured by their own scripts (docs/performance.md, _Starting the stack_ and
 * _Restarting one service_), not by a run of the load.
 */
export function targetRows(
  rows: readonly SummaryRow[],
  gateway: readonly SystemCase[],
  baseline: readonly SystemCase[],
  idle?: IdleSample,
): TargetRow[] {
  /** A target's row: what was measured and whether it meets it, or a dash when nothing was. */
  const row = (figure: string, target: string, result?: { measured: string; met: boolean }): TargetRow =>
    result ? { figure, target, ...result } : { figure, target, measured: '—' };
  /** The figures of the cases a target concerns, met when every one of them is. */
  const over = (values: (number | undefined)[], digits: number, ok: (v: number) => boolean) => {
    const known = values.filter((x): x is number => x !== undefined && Number.isFinite(x));
    return known.length ? { measured: span(known, digits), met: known.every(ok) } : undefined;
  };
  const atMost = (limit: number) => (v: number) => v <= limit;
  const atLeast = (limit: number) => (v: number) => v >= limit;
  const single = rows.filter((r) => r.clients === 1 && r.gateway);
  const settled = gateway.filter((c) => c.settlement);
  const at32 = (s: Scenario) =>
    baseline.find((c) => c.scenario === s && c.clients === 32)?.metrics.completionsPerSec;
  return [
    row(
      'CPU ms per pair through the gateway, N = 8 and 32',
      '≤ 12',
      over(gateway.filter((c) => c.clients === 8 || c.clients === 32).map(cpuMsPerCompletion), 0, atMost(12)),
    ),
    row(
      'database transactions per pair through the gateway, net of idle, N ≥ 8',
      '≤ 8',
      over(
        gateway.filter((c) => c.clients >= 8).map((c) => c.dbTransactionsPerCompletionNet),
        1,
        atMost(8),
      ),
    ),
    row(
      'gateway / pgbench, N = 32',
      '≥ 0.05',
      over(
        rows.filter((r) => r.clients === 32).map((r) => r.gatewayToPgbench),
        3,
        atLeast(0.05),
      ),
    ),
    row(
      'gateway / baseline, every N',
      '≥ 0.75',
      over(
        rows.map((r) => r.gatewayToBaseline),
        2,
        atLeast(0.75),
      ),
    ),
    row(
      'pair latency p50 / p99 at N = 1, ms',
      '≤ 15 / 40',
      single.length
        ? {
            measured: `${span(
              single.map((r) => r.gateway!.p50Ms),
              1,
            )} / ${span(
              single.map((r) => r.gateway!.p99Ms),
              1,
            )}`,
            met: single.every((r) => r.gateway!.p50Ms <= 15 && r.gateway!.p99Ms <= 40),
          }
        : undefined,
    ),
    row(
      'settle drain after the load, s (settled/s ÷ accepted/s)',
      '≤ 1',
      settled.length
        ? {
            measured: `${span(
              settled.map((c) => c.settlement!.drainSec),
              1,
            )} (${span(
              settled.map((c) => c.settlement!.settledPerSec / c.metrics.completionsPerSec),
              2,
            )})`,
            met: settled.every((c) => !c.settlement!.timedOut && c.settlement!.drainSec <= 1),
          }
        : undefined,
    ),
    row(
      'idle stack, database transactions per second',
      '≤ 5',
      over([idle?.dbTransactionsPerSec], 1, atMost(5)),
    ),
    row(
      'hot account / spread at N = 32, baseline',
      '≥ 0.9',
      over([ratio(at32('hot'), at32('spread'))], 2, atLeast(0.9)),
    ),
  ];
}

export function formatTargets(targets: readonly TargetRow[]): string {
  return table(
    ['figure', 'target', 'measured', 'met'],
    targets.map((t) => [t.figure, t.target, t.measured, t.met === undefined ? '—' : t.met ? 'yes' : 'no']),
  );
}
