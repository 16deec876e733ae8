/**
 * Database transactions by process (`--by-process`, `--quick`): the counts that
 * tools/bench/transaction-counter.mjs writes from inside each app, read at the edges of a measured
 * window and turned into transactions per completion (the reading is pure but for `readCounts`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The counter file of one process (cumulative since it started). */
export interface ProcessCounts {
  label: string;
  pid: number;
  transactions: number;
  statements: number;
  /** Transactions by their first statement ("(autocommit) …" for one sent outside a transaction). */
  byFirstStatement: Record<string, number>;
}

/** Per completion over a window: by process (label), and by process and first statement (largest first). */
export interface TransactionsByProcess {
  byProcess: Record<string, number>;
  /** Statements per completion by process: every round trip to Postgres, BEGIN and COMMIT included. */
  statementsByProcess: Record<string, number>;
  byStatement: { process: string; statement: string; perCompletion: number }[];
}

/** The environment that loads the counter into a child process, writing to `dir`. */
export function counterEnv(dir: string): Record<string, string> {
  const hook = resolve(fileURLToPath(new URL('.', import.meta.url)), 'transaction-counter.mjs');
  const inherited = process.env.NODE_OPTIONS ? `${process.env.NODE_OPTIONS} ` : '';
  return { NODE_OPTIONS: `${inherited}--import ${hook}`, BENCH_TRANSACTIONS_DIR: dir };
}

/** Every process's counts now, by file. */
export function readCounts(dir: string): Map<string, ProcessCounts> {
  const out = new Map<string, ProcessCounts>();
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return out;
  }
  for (const f of files) {
    try {
      out.set(f, JSON.parse(readFileSync(join(dir, f), 'utf8')) as ProcessCounts);
    } catch {
      // being rewritten right now: read at the next edge
    }
  }
  return out;
}

/**
 * What each process added between two readings, per completion (processes of one label summed).
 * `idle`: two readings `seconds` apart at rest; what each process and statement did then is taken
 * off at that rate over `seconds` (the span of before → after). `minPerCompletion` drops the
 * statement rows below it.
 */
export function perCompletion(
  before: ReadonlyMap<string, ProcessCounts>,
  after: ReadonlyMap<string, ProcessCounts>,
  completions: number,
  o: {
    idle?: {
      before: ReadonlyMap<string, ProcessCounts>;
      after: ReadonlyMap<string, ProcessCounts>;
      seconds: number;
    };
    seconds?: number;
    minPerCompletion?: number;
  } = {},
): TransactionsByProcess {
  const byProcess: Record<string, number> = {};
  const statementsByProcess: Record<string, number> = {};
  const statements = new Map<string, { process: string; statement: string; n: number }>();
  if (completions <= 0) return { byProcess, statementsByProcess, byStatement: [] };
  /** What `file` did at rest over the case's span: its transactions, one first statement's, or (`'*'`) its statements. */
  const atRest = (file: string, statement?: string): number => {
    const i = o.idle;
    if (!i || !o.seconds || i.seconds <= 0) return 0;
    const [a, b] = [i.before.get(file), i.after.get(file)];
    if (!b) return 0;
    const n = (c: ProcessCounts | undefined) =>
      statement === undefined
        ? (c?.transactions ?? 0)
        : statement === '*'
          ? (c?.statements ?? 0)
          : (c?.byFirstStatement[statement] ?? 0);
    return ((n(b) - n(a)) / i.seconds) * o.seconds;
  };
  for (const [file, now] of after) {
    const was = before.get(file);
    const sent = now.statements - (was?.statements ?? 0) - atRest(file, '*');
    if (Math.abs(sent) >= 1e-9)
      statementsByProcess[now.label] = (statementsByProcess[now.label] ?? 0) + sent / completions;
    const delta = now.transactions - (was?.transactions ?? 0) - atRest(file);
    if (Math.abs(delta) < 1e-9) continue;
    byProcess[now.label] = (byProcess[now.label] ?? 0) + delta / completions;
    for (const [statement, n] of Object.entries(now.byFirstStatement)) {
      const d = n - (was?.byFirstStatement[statement] ?? 0) - atRest(file, statement);
      if (Math.abs(d) < 1e-9) continue;
      const k = `${now.label}\n${statement}`;
      const row = statements.get(k) ?? { process: now.label, statement, n: 0 };
      row.n += d;
      statements.set(k, row);
    }
  }
  const byStatement = [...statements.values()]
    .map((r) => ({ process: r.process, statement: r.statement, perCompletion: r.n / completions }))
    .filter((r) => r.perCompletion >= (o.minPerCompletion ?? 0.05))
    .sort((a, b) => b.perCompletion - a.perCompletion || a.process.localeCompare(b.process));
  return { byProcess, statementsByProcess, byStatement };
}
