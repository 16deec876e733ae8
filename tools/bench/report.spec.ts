import { describe, expect, it } from 'vitest';
import {
  buildRows,
  cell,
  cpuMsPerCompletion,
  formatDetails,
  formatSummary,
  formatTargets,
  ownCpuPct,
  targetRows,
  table,
  type SystemCase,
} from './report.js';
import { parsePgbenchOutput, connectionArgs } from './pgbench.js';
import { parsePostgresTitle } from './cpu.js';
import { summarize } from './stats.js';

function systemCase(
  scenario: 'spread' | 'hot',
  clients: number,
  perSec: number,
  pairMs: number[],
): SystemCase {
  const pair = summarize(pairMs);
  return {
    scenario,
    clients,
    metrics: {
      clients,
      seconds: 10,
      attempts: perSec * 10,
      completions: perSec * 10,
      completionsPerSec: perSec,
      pair,
      create: pair,
      execute: pair,
      errors: {},
      completionsTotal: perSec * 12,
    },
  };
}

describe('buildRows', () => {
  const gateway = [systemCase('hot', 8, 40, [10, 20]), systemCase('spread', 8, 100, [5, 6, 7])];
  const baseline = [systemCase('spread', 8, 400, [1, 2]), systemCase('spread', 1, 50, [3])];
  const pgbench = [
    { clients: 8, threads: 2, seconds: 10, tps: 2000 },
    { clients: 1, threads: 1, seconds: 10, tps: 500 },
  ];

  it('has one row per scenario and client count, spread first, with the ratios of what was measured', () => {
    const rows = buildRows(gateway, baseline, pgbench);
    expect(rows.map((r) => `${r.scenario}:${r.clients}`)).toEqual(['spread:1', 'spread:8', 'hot:8']);
    expect(rows[1]).toEqual({
      scenario: 'spread',
      clients: 8,
      gateway: { completionsPerSec: 100, p50Ms: 6, p99Ms: 7 },
      baseline: { completionsPerSec: 400, p50Ms: 1, p99Ms: 2 },
      pgbenchTps: 2000,
      gatewayToBaseline: 0.25,
      gatewayToPgbench: 0.05,
      baselineToPgbench: 0.2,
    });
    // spread N=1: no gateway figure, so no ratio with it.
    expect(rows[0]).toEqual({
      scenario: 'spread',
      clients: 1,
      baseline: { completionsPerSec: 50, p50Ms: 3, p99Ms: 3 },
      pgbenchTps: 500,
      baselineToPgbench: 0.1,
    });
    expect(rows[2]!.gatewayToPgbench).toBe(0.02);
    expect(rows[2]!.gatewayToBaseline).toBeUndefined();
  });

  it('prints the summary with a dash for what is missing', () => {
    const text = formatSummary(buildRows(gateway, baseline, []));
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^case\s+N\s+gateway\/s/);
    expect(lines).toHaveLength(2 + 3);
    expect(lines[3]).toMatch(
      /^spread\s+8\s+100\.0\s+6\.0\s+7\.0\s+400\.0\s+1\.0\s+2\.0\s+—\s+0\.25\s+—\s+—$/,
    );
  });

  it('prints per-case details with errors and settlement', () => {
    const c = systemCase('hot', 8, 40, [10, 20]);
    c.metrics.errors = { 'execute:400 INSUFFICIENT_FUNDS': 3 };
    c.settlement = {
      drainSec: 1.25,
      statuses: { COMPLETED: 480 },
      settled: 480,
      settledPerSec: 38.4,
      lagP50Sec: 0.3,
      lagP99Sec: 0.9,
      timedOut: false,
    };
    const text = formatDetails([c]);
    expect(text).toContain('execute:400 INSUFFICIENT_FUNDS×3');
    expect(text).toContain('38.4');
    expect(text).toContain('0.30/0.90');
  });
});

describe('CPU per completion', () => {
  const cpu = {
    seconds: 20,
    cores: 2,
    machineBusyPct: 200,
    byProcess: {
      'other processes': 80,
      payments: 30,
      'postgres ← payments': 20,
      'postgres: other databases': 10,
    },
  };

  it('counts only the system under test, not other people’s processes and databases', () => {
    expect(ownCpuPct(cpu)).toBe(50);
  });

  it('is the own CPU divided by the completions per second, in ms', () => {
    const c = systemCase('spread', 8, 25, [1]);
    expect(cpuMsPerCompletion(c)).toBeUndefined();
    c.cpu = cpu;
    expect(cpuMsPerCompletion(c)).toBe(20); // 0.5 core / 25 per s = 20 ms
    c.metrics.completionsPerSec = 0;
    expect(cpuMsPerCompletion(c)).toBeUndefined();
  });
});

describe('table and cell', () => {
  it('aligns the first column left and the others right', () => {
    expect(
      table(
        ['a', 'bb'],
        [
          ['xyz', '1'],
          ['w', '22'],
        ],
      ),
    ).toBe('a    bb\n---  --\nxyz   1\nw    22');
  });

  it('formats numbers, and a dash for unknown', () => {
    expect(cell(1.234)).toBe('1.2');
    expect(cell(1.234, 2)).toBe('1.23');
    expect(cell(undefined)).toBe('—');
    expect(cell(Number.NaN)).toBe('—');
  });
});

describe('pgbench and /proc parsing', () => {
  it('reads tps, latency and transactions from pgbench output', () => {
    const out = [
      'transaction type: <builtin: TPC-B (sort of)>',
      'number of transactions actually processed: 3290',
      'latency average = 3.040 ms',
      'initial connection time = 35.613 ms',
      'tps = 328.901383 (without initial connection time)',
    ].join('\n');
    expect(parsePgbenchOutput(out)).toEqual({ tps: 328.901383, latencyAvgMs: 3.04, transactions: 3290 });
    expect(parsePgbenchOutput('connection to server failed')).toEqual({});
  });

  it('turns a postgres URL into libpq arguments', () => {
    expect(connectionArgs('postgres://bob:s%40cret@db.local:5433/x')).toEqual({
      args: ['-h', 'db.local', '-p', '5433', '-U', 'bob'],
      env: { PGPASSWORD: 's@cret' },
    });
  });

  it('reads the database and client port from a backend title', () => {
    expect(
      parsePostgresTitle('postgres: 15/main: postgres sluice_bench_gateway_1a2b3c 127.0.0.1(56222) idle'),
    ).toEqual({ database: 'sluice_bench_gateway_1a2b3c', clientPort: 56222 });
    expect(parsePostgresTitle('postgres: 15/main: walwriter')).toEqual({});
    expect(parsePostgresTitle('node --import tsx apps/payments/src/main.ts')).toBeUndefined();
  });
});

describe('targets', () => {
  const settled = (drainSec: number, settledPerSec: number) => ({
    drainSec,
    statuses: { COMPLETED: 1 },
    settled: 1,
    settledPerSec,
    lagP50Sec: 0.1,
    lagP99Sec: 0.2,
    timedOut: false,
  });
  const withCpu = (c: SystemCase, pct: number, net: number, drain: number) =>
    Object.assign(c, {
      cpu: { seconds: 10, cores: 2, machineBusyPct: pct, byProcess: { payments: pct } },
      dbTransactionsPerCompletionNet: net,
      settlement: settled(drain, c.metrics.completionsPerSec),
    });
  const gateway = [
    withCpu(systemCase('spread', 1, 50, [10, 30]), 50, 12, 0.1),
    withCpu(systemCase('spread', 8, 100, [60, 70]), 100, 7.5, 0.3), // 10 ms of CPU per pair
    withCpu(systemCase('spread', 32, 100, [200, 300]), 150, 8.4, 2.5), // 15 ms; drains in 2.5 s
  ];
  const baseline = [
    systemCase('spread', 1, 60, [5]),
    systemCase('spread', 8, 120, [20]),
    systemCase('spread', 32, 125, [50]),
    systemCase('hot', 32, 100, [60]),
  ];
  const rows = buildRows(gateway, baseline, [{ clients: 32, threads: 2, seconds: 10, tps: 2500 }]);

  it('measures each target over the cases it concerns, met only when every one of them meets it', () => {
    const t = Object.fromEntries(
      targetRows(rows, gateway, baseline, {
        seconds: 5,
        cpu: gateway[0]!.cpu!,
        dbTransactionsPerSec: 1.9,
      }).map((r) => [r.figure, [r.measured, r.met]]),
    );
    expect(t).toEqual({
      'CPU ms per pair through the gateway, N = 8 and 32': ['10–15', false],
      'database transactions per pair through the gateway, net of idle, N ≥ 8': ['7.5–8.4', false],
      'gateway / pgbench, N = 32': ['0.040', false],
      'gateway / baseline, every N': ['0.80–0.83', true],
      'pair latency p50 / p99 at N = 1, ms': ['10.0 / 30.0', true],
      'settle drain after the load, s (settled/s ÷ accepted/s)': ['0.1–2.5 (1.00)', false],
      'idle stack, database transactions per second': ['1.9', true],
      'hot account / spread at N = 32, baseline': ['0.80', false],
    });
  });

  it('says what a run did not measure, instead of calling it met', () => {
    const only = targetRows(buildRows([], baseline.slice(0, 1), []), [], baseline.slice(0, 1));
    expect(only.every((r) => r.measured === '—' && r.met === undefined)).toBe(true);
    expect(formatTargets(only).split('\n')[2]).toMatch(/^CPU ms per pair .*\s—\s+—$/);
  });
});
