import { describe, expect, it } from 'vitest';
import { OptionsError, parseOptions } from './options.js';

describe('bench options', () => {
  it('defaults to every system, both scenarios, 1/8/32 clients, 20 s after a 3 s warm-up', () => {
    const o = parseOptions([], {});
    expect(o).toMatchObject({
      concurrency: [1, 8, 32],
      durationSec: 20,
      warmupSec: 3,
      systems: ['gateway', 'baseline', 'pgbench'],
      scenarios: ['spread', 'hot'],
      amount: 200,
      timeScale: 0.01,
      logLevel: 'warn',
      pgbenchScale: 10,
      pgbenchDurationSec: 10,
      webhooks: false,
      help: false,
    });
    expect(o.out).toBeUndefined();
  });

  it('takes flags (both forms) over BENCH_* variables', () => {
    const o = parseOptions(
      ['--concurrency', '16,2,2', '--duration=5', '--only', 'baseline', '--webhooks', '--note', 'quiet'],
      { BENCH_DURATION: '30', BENCH_WARMUP: '0', BENCH_SCENARIOS: 'hot' },
    );
    expect(o).toMatchObject({
      concurrency: [2, 16],
      durationSec: 5,
      warmupSec: 0,
      systems: ['baseline'],
      scenarios: ['hot'],
      webhooks: true,
      note: 'quiet',
    });
  });

  it('--quick is the one-minute check: gateway, spread, N = 8, 10 s, transactions by process; flags still win', () => {
    expect(parseOptions(['--quick'])).toMatchObject({
      concurrency: [8],
      durationSec: 10,
      warmupSec: 2,
      systems: ['gateway'],
      scenarios: ['spread'],
      byProcess: true,
      quick: true,
    });
    expect(parseOptions(['--quick', '--concurrency', '32'], { BENCH_SCENARIOS: 'hot' })).toMatchObject({
      concurrency: [32],
      scenarios: ['hot'],
      systems: ['gateway'],
    });
    expect(parseOptions([]).byProcess).toBe(false);
  });

  it('refuses what it cannot use', () => {
    expect(() => parseOptions(['--concurrency', '0'])).toThrow(OptionsError);
    expect(() => parseOptions(['--concurrency', '1.5'])).toThrow(OptionsError);
    expect(() => parseOptions(['--duration', 'x'])).toThrow(OptionsError);
    expect(() => parseOptions(['--only', 'gateway,redis'])).toThrow(/unknown "redis"/);
    expect(() => parseOptions(['--amount', '100'])).toThrow(/at least 119/);
    expect(() => parseOptions(['--bogus'])).toThrow(/unknown argument/);
    expect(() => parseOptions(['--out'])).toThrow(/needs a value/);
  });
});
