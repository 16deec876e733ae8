/** Options of `npm run bench`, from flags (`--name value` or `--name=value`) over BENCH_* variables. */

export type System = 'gateway' | 'baseline' | 'pgbench';
export type Scenario = 'spread' | 'hot';

export interface BenchOptions {
  /** Concurrent clients of each case (and pgbench -c). */
  concurrency: number[];
  /** Measured seconds per case, after the warm-up. */
  durationSec: number;
  warmupSec: number;
  systems: System[];
  scenarios: Scenario[];
  /** lockedCurrencyAmount of every quote (USD cents, SENDING side). */
  amount: number;
  /** SANDBOX_TIME_SCALE of the services (sandbox settlement after ~1 s × this). */
  timeScale: number;
  /** LOG_LEVEL of the services. */
  logLevel: string;
  /** pgbench -i -s. */
  pgbenchScale: number;
  pgbenchDurationSec: number;
  /** Configure a webhook endpoint (served by the bench process, answering 200) on the platform. */
  webhooks: boolean;
  /** Run the bulk customer import benchmark (tools/bench/bulk-import.ts) with this many rows. */
  bulkImportRows?: number;
  /** How long to wait for every executed payment to settle after a case. */
  settleTimeoutSec: number;
  /** DATABASE_POOL_MAX of payments, in the stack and the baseline (default: the service's, 10). */
  paymentsPoolMax?: number;
  /** JSON output path (default bench-results/bench-<timestamp>.json). */
  out?: string;
  /** Free text stored with the results: the conditions of the run. */
  note?: string;
  /**
   * Count every stack process's database transactions (tools/bench/transaction-counter.cjs, loaded
   * into the apps) and print them per completion by process. On with --quick.
   */
  byProcess: boolean;
  /** --quick: the one-minute regression check (gateway, spread, N = 8, 10 s; transactions by process). */
  quick: boolean;
  help: boolean;
}

/** What --quick measures unless a flag says otherwise: about a minute in all. */
export const QUICK = { concurrency: '8', duration: '10', warmup: '2', only: 'gateway', scenarios: 'spread' };

export const USAGE = `npm run bench [-- options]

  --concurrency 1,8,32     concurrent clients per case (BENCH_CONCURRENCY)
  --duration 20            measured seconds per case (BENCH_DURATION)
  --warmup 3               warm-up seconds before each measured window (BENCH_WARMUP)
  --only gateway,baseline,pgbench
                           which systems to measure (BENCH_ONLY)
  --scenarios spread,hot   spread: each client pays from its own account; hot: all from one (BENCH_SCENARIOS)
  --amount 200             USD cents sent per quote (SENDING side) (BENCH_AMOUNT)
  --time-scale 0.01        SANDBOX_TIME_SCALE of the services (BENCH_TIME_SCALE)
  --log-level warn         LOG_LEVEL of the services (BENCH_LOG_LEVEL)
  --pgbench-scale 10       pgbench -i -s (BENCH_PGBENCH_SCALE)
  --pgbench-duration 10    pgbench -T per client count (BENCH_PGBENCH_DURATION)
  --webhooks               give the platform a webhook endpoint (served by the bench, answers 200), and
                           run the webhook delivery benchmark (tools/bench/webhooks.ts) with and without
                           an endpoint at the same client counts and duration
  --bulk-import <rows>     run the bulk customer import benchmark (tools/bench/bulk-import.ts) with a CSV
                           file of this many rows (at most 100000) (BENCH_BULK_IMPORT)
  --settle-timeout 60      seconds to wait for executed payments to settle after each case
                           (a case that does not settle in time stops the system's remaining cases)
  --payments-pool-max <n>  DATABASE_POOL_MAX of payments (default: the service's) (BENCH_PAYMENTS_POOL_MAX)
  --out <file>             JSON output (default bench-results/bench-<timestamp>.json) (BENCH_OUT)
  --note "<text>"          conditions of the run, stored in the JSON (BENCH_NOTE)
  --by-process             count each app's database transactions (a pg hook loaded into the apps)
                           and print them per completion by process (BENCH_BY_PROCESS)
  --quick                  the one-minute regression check: --only gateway --scenarios spread
                           --concurrency 8 --duration 10 --warmup 2 --by-process (flags given
                           override these); prints CPU ms and database transactions per pair

DATABASE_URL (a fresh database is created next to it) and NATS_URL as for npm start.
`;

const FLAGS: Record<string, string> = {
  concurrency: 'BENCH_CONCURRENCY',
  duration: 'BENCH_DURATION',
  warmup: 'BENCH_WARMUP',
  only: 'BENCH_ONLY',
  scenarios: 'BENCH_SCENARIOS',
  amount: 'BENCH_AMOUNT',
  'time-scale': 'BENCH_TIME_SCALE',
  'log-level': 'BENCH_LOG_LEVEL',
  'pgbench-scale': 'BENCH_PGBENCH_SCALE',
  'pgbench-duration': 'BENCH_PGBENCH_DURATION',
  webhooks: 'BENCH_WEBHOOKS',
  'bulk-import': 'BENCH_BULK_IMPORT',
  'settle-timeout': 'BENCH_SETTLE_TIMEOUT',
  'payments-pool-max': 'BENCH_PAYMENTS_POOL_MAX',
  out: 'BENCH_OUT',
  note: 'BENCH_NOTE',
  'by-process': 'BENCH_BY_PROCESS',
  quick: '',
  help: '',
};
const BOOLEAN = new Set(['webhooks', 'by-process', 'quick', 'help']);

export class OptionsError extends Error {
  override name = 'OptionsError';
}

function positive(name: string, raw: string, integer: boolean): number {
  const v = Number(raw);
  if (!Number.isFinite(v) || v <= 0 || (integer && !Number.isInteger(v)))
    throw new OptionsError(
      `--${name} must be a positive ${integer ? 'integer' : 'number'} (got ${JSON.stringify(raw)})`,
    );
  return v;
}

function list<T extends string>(name: string, raw: string, allowed: readonly T[]): T[] {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const i of items)
    if (!allowed.includes(i as T))
      throw new OptionsError(`--${name}: unknown "${i}" (one of ${allowed.join(', ')})`);
  if (!items.length) throw new OptionsError(`--${name} must name at least one of ${allowed.join(', ')}`);
  return [...new Set(items as T[])];
}

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv = {}): BenchOptions {
  const given: Record<string, string> = {};
  for (const [flag, variable] of Object.entries(FLAGS))
    if (variable && env[variable]) given[flag] = env[variable]!;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h') {
      given.help = 'true';
      continue;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m || !(m[1]! in FLAGS))
      throw new OptionsError(`unknown argument ${JSON.stringify(arg)}\n\n${USAGE}`);
    const name = m[1]!;
    if (BOOLEAN.has(name)) given[name] = m[2] ?? 'true';
    else if (m[2] !== undefined) given[name] = m[2];
    else if (i + 1 < argv.length) given[name] = argv[++i]!;
    else throw new OptionsError(`--${name} needs a value`);
  }
  const bool = (name: string) => /^(1|true|yes)$/i.test(given[name] ?? '');
  const quick = bool('quick');
  if (quick) for (const [name, value] of Object.entries(QUICK)) given[name] ??= value;
  const concurrency = (given.concurrency ?? '1,8,32')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => positive('concurrency', s, true));
  if (!concurrency.length) throw new OptionsError('--concurrency must list at least one number');
  if (Math.max(...concurrency) > 200) throw new OptionsError('--concurrency: at most 200 clients');
  const durationSec = positive('duration', given.duration ?? '20', false);
  const warmup = given.warmup ?? '3';
  const warmupSec = Number(warmup);
  if (!Number.isFinite(warmupSec) || warmupSec < 0)
    throw new OptionsError(`--warmup must be 0 or more seconds (got ${JSON.stringify(warmup)})`);
  const amount = positive('amount', given.amount ?? '200', true);
  if (amount < 119) throw new OptionsError('--amount: at least 119 cents, or the EUR side is below 1.00 EUR');
  const timeScale = positive('time-scale', given['time-scale'] ?? '0.01', false);
  return {
    concurrency: [...new Set(concurrency)].sort((a, b) => a - b),
    durationSec,
    warmupSec,
    systems: list<System>('only', given.only ?? 'gateway,baseline,pgbench', [
      'gateway',
      'baseline',
      'pgbench',
    ]),
    scenarios: list<Scenario>('scenarios', given.scenarios ?? 'spread,hot', ['spread', 'hot']),
    amount,
    timeScale,
    logLevel: given['log-level'] ?? 'warn',
    pgbenchScale: positive('pgbench-scale', given['pgbench-scale'] ?? '10', true),
    pgbenchDurationSec: positive('pgbench-duration', given['pgbench-duration'] ?? '10', false),
    webhooks: bool('webhooks'),
    ...(given['bulk-import'] ? { bulkImportRows: positive('bulk-import', given['bulk-import'], true) } : {}),
    settleTimeoutSec: positive('settle-timeout', given['settle-timeout'] ?? '60', false),
    ...(given['payments-pool-max']
      ? { paymentsPoolMax: positive('payments-pool-max', given['payments-pool-max'], true) }
      : {}),
    ...(given.out ? { out: given.out } : {}),
    ...(given.note ? { note: given.note } : {}),
    byProcess: quick || bool('by-process'),
    quick,
    help: bool('help'),
  };
}
