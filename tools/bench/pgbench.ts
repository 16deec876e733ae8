/**
 * pgbench's TPC-B-like transaction on the same Postgres, in a scratch
 * database: the machine's reference figure for "small write transactions with
 * a durable commit".
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface PgbenchResult {
  clients: number;
  threads: number;
  seconds: number;
  tps?: number;
  latencyAvgMs?: number;
  transactions?: number;
  error?: string;
}

/** `/usr/bin/pgbench`, or the one on PATH (PGBENCH overrides). */
export function pgbenchPath(): string {
  if (process.env.PGBENCH) return process.env.PGBENCH;
  return existsSync('/usr/bin/pgbench') ? '/usr/bin/pgbench' : 'pgbench';
}

/** libpq connection arguments of a postgres:// URL. */
export function connectionArgs(databaseUrl: string): { args: string[]; env: Record<string, string> } {
  const u = new URL(databaseUrl);
  const args = [
    '-h',
    u.hostname || '127.0.0.1',
    '-p',
    u.port || '5432',
    '-U',
    decodeURIComponent(u.username || 'postgres'),
  ];
  const env: Record<string, string> = {};
  if (u.password) env.PGPASSWORD = decodeURIComponent(u.password);
  return { args, env };
}

/** The final figures of a pgbench run's output. */
export function parsePgbenchOutput(text: string): {
  tps?: number;
  latencyAvgMs?: number;
  transactions?: number;
} {
  const tps =
    /tps = ([\d.]+) \((?:without initial connection time|excluding connections establishing)\)/.exec(text);
  const lat = /latency average = ([\d.]+) ms/.exec(text);
  const tx = /number of transactions actually processed: (\d+)/.exec(text);
  return {
    ...(tps ? { tps: Number(tps[1]) } : {}),
    ...(lat ? { latencyAvgMs: Number(lat[1]) } : {}),
    ...(tx ? { transactions: Number(tx[1]) } : {}),
  };
}

function run(
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(pgbenchPath(), args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    p.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, out });
    });
  });
}

/** `pgbench -i -s <scale>` (quiet) in `database`. */
export async function pgbenchInit(databaseUrl: string, database: string, scale: number): Promise<void> {
  const c = connectionArgs(databaseUrl);
  const r = await run(['-i', '-q', '-s', String(scale), ...c.args, database], c.env, 600_000);
  if (r.code !== 0) throw new Error(`pgbench -i failed (${r.code}): ${r.out.slice(-500)}`);
}

/** `pgbench -c N -j min(2, N) -T <seconds>` (the default TPC-B-like script). */
export async function pgbenchRun(
  databaseUrl: string,
  database: string,
  clients: number,
  seconds: number,
): Promise<PgbenchResult> {
  const c = connectionArgs(databaseUrl);
  const threads = Math.min(2, clients);
  const r = await run(
    ['-c', String(clients), '-j', String(threads), '-T', String(Math.round(seconds)), ...c.args, database],
    c.env,
    (seconds + 120) * 1000,
  );
  const parsed = parsePgbenchOutput(r.out);
  if (r.code !== 0 || parsed.tps === undefined)
    return { clients, threads, seconds, ...parsed, error: `pgbench exited ${r.code}: ${r.out.slice(-300)}` };
  return { clients, threads, seconds, ...parsed };
}
