/**
 * Pure helpers of the benchmark: percentiles, latency summaries and the
 * aggregation of one load run into the figures the report prints.
 */

/** Latencies in milliseconds. */
export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/**
 * The p-th percentile (0 < p ≤ 100) of ascending `sorted` by the nearest-rank
 * method: the smallest value such that at least p % of the samples are ≤ it.
 * NaN when there are no samples.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** count, mean, p50/p90/p99 and max of unsorted samples (NaN figures when empty). */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: n,
    mean: n ? sum / n : Number.NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: n ? sorted[n - 1]! : Number.NaN,
  };
}

/** What one client's quote-create + execute pair came to. */
export interface PairOutcome {
  /** Both calls answered 2xx (through the gateway) or returned (in process). */
  ok: boolean;
  /** When the pair started and ended (ms, monotonic clock of the load generator). */
  startedAt: number;
  endedAt: number;
  /** Duration of the create call (absent when it was not made). */
  createMs?: number;
  /** Duration of the execute call (absent when it was not made). */
  executeMs?: number;
  /** `create:<status or code>` / `execute:<status or code>` for a failure. */
  error?: string;
  quoteId?: string;
  /** totalSendingAmount of an executed quote (minor units). */
  sent?: bigint;
  /** Index of the paying account. */
  payer: number;
  /** Executes answered "retry later" (payments' admission: 503 with Retry-After) and sent again. */
  retries?: number;
}

/** The raw result of a load run: every pair, and the measured window. */
export interface LoadRun {
  clients: number;
  /** Start and end of the measured window (after the warm-up), same clock as the outcomes. */
  windowStart: number;
  windowEnd: number;
  outcomes: PairOutcome[];
}

/** The figures of one case (one system, one scenario, one concurrency). */
export interface CaseMetrics {
  clients: number;
  /** Length of the measured window in seconds. */
  seconds: number;
  /** Pairs that ended inside the window, and how many of them completed. */
  attempts: number;
  completions: number;
  completionsPerSec: number;
  /** Latency of the whole pair and of each call, over the completions in the window. */
  pair: LatencySummary;
  create: LatencySummary;
  execute: LatencySummary;
  /** Failures in the window by `create:<status>` / `execute:<status>`. */
  errors: Record<string, number>;
  /** Pairs that completed at any time (warm-up and tail included): what moved money. */
  completionsTotal: number;
  /** Executes of the window's pairs sent again after a "retry later" (payments' admission). */
  retried?: number;
}

/**
 * Aggregates a run: only pairs that ended inside the measured window count
 * towards throughput and latency (the warm-up and the pairs still in flight
 * when the window closed are left out).
 */
export function aggregate(run: LoadRun): CaseMetrics {
  const seconds = (run.windowEnd - run.windowStart) / 1000;
  const inWindow = run.outcomes.filter((o) => o.endedAt >= run.windowStart && o.endedAt <= run.windowEnd);
  const ok = inWindow.filter((o) => o.ok);
  const errors: Record<string, number> = {};
  for (const o of inWindow) if (!o.ok) errors[o.error ?? 'unknown'] = (errors[o.error ?? 'unknown'] ?? 0) + 1;
  return {
    clients: run.clients,
    seconds,
    attempts: inWindow.length,
    completions: ok.length,
    completionsPerSec: seconds > 0 ? ok.length / seconds : 0,
    pair: summarize(ok.map((o) => o.endedAt - o.startedAt)),
    create: summarize(ok.map((o) => o.createMs!)),
    execute: summarize(ok.map((o) => o.executeMs!)),
    errors,
    completionsTotal: run.outcomes.filter((o) => o.ok).length,
    retried: inWindow.reduce((n, o) => n + (o.retries ?? 0), 0),
  };
}

/** Σ totalSendingAmount of the completed pairs per payer index. */
export function sentByPayer(outcomes: readonly PairOutcome[]): Map<number, bigint> {
  const out = new Map<number, bigint>();
  for (const o of outcomes)
    if (o.ok && o.sent !== undefined) out.set(o.payer, (out.get(o.payer) ?? 0n) + o.sent);
  return out;
}

/** a / b, undefined when either is missing or b is 0. */
export function ratio(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0)
    return undefined;
  return a / b;
}
