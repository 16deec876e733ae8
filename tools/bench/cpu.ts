/**
 * CPU use per process while a case runs, from /proc (Linux only): the
 * utime + stime deltas of every process, attributed to the stack's apps (and
 * their children), to the Postgres backends of the benchmark's database (by
 * the app that holds the client end of the connection), to the other
 * Postgres processes, nats-server, the bench process itself and everything
 * else on the machine. Figures are in % of one core (a 2-core machine has 200).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface CpuReport {
  seconds: number;
  cores: number;
  /** Busy time of the whole machine (all cores), % of one core. */
  machineBusyPct: number;
  /** % of one core per process group, largest first. */
  byProcess: Record<string, number>;
}

interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  ticks: number;
  starttime: number;
}

let clkTckCache: number | undefined;
function clkTck(): number {
  if (clkTckCache === undefined) {
    try {
      clkTckCache = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTckCache = 100;
    }
  }
  return clkTckCache;
}

function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // comm may contain spaces and parentheses: the fields start after the last ')'.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const f = text
    .slice(close + 2)
    .trim()
    .split(' ');
  // f[0] is field 3 (state): ppid = field 4, utime = 14, stime = 15, starttime = 22.
  return { pid, ppid: Number(f[1]), comm, ticks: Number(f[11]) + Number(f[12]), starttime: Number(f[19]) };
}

/** CPU time a process has used so far (utime + stime), in µs; 0 for a process that is gone. */
export function processCpuMicros(pid: number): number {
  return ((readStat(pid)?.ticks ?? 0) * 1_000_000) / clkTck();
}

function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  return { busy: total - idle, total };
}

function uptimeTicks(): number {
  return Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * clkTck();
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+/g, ' ').trim();
  } catch {
    return '';
  }
}

function pids(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

/** Local port → socket inode of every TCP socket of this network namespace. */
function socketInodesByLocalPort(): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const port = parseInt(cols[1]!.split(':')[1]!, 16);
      const list = out.get(port) ?? [];
      list.push(cols[9]!);
      out.set(port, list);
    }
  }
  return out;
}

function socketInodesOf(pid: number): Set<string> {
  const out = new Set<string>();
  let fds: string[] = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

/** `postgres: 15/main: <user> <database> <host>(<port>) <state>` → database and client port. */
export function parsePostgresTitle(title: string): { database?: string; clientPort?: number } | undefined {
  if (!title.startsWith('postgres')) return undefined;
  const m = /^postgres: (?:[^:]+: )?\S+ (\S+) [^\s(]+\((\d+)\)/.exec(title);
  if (!m) return {};
  return { database: m[1]!, clientPort: Number(m[2]) };
}

export class CpuSampler {
  private readonly last = new Map<number, number>();
  private readonly labels = new Map<number, string>();
  private readonly totals = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private startedAtMs = 0;
  private startedAtBootTicks = 0;
  private machineStart = { busy: 0, total: 0 };

  /**
   * @param roots process ids whose whole process tree is one group (the apps, the bench process)
   * @param database the benchmark's database: its backends are grouped by the app at the client end
   */
  constructor(
    private readonly roots: Map<number, string>,
    private readonly database: string | undefined,
    private readonly intervalMs = 1000,
  ) {}

  start(): void {
    this.startedAtMs = Date.now();
    this.startedAtBootTicks = uptimeTicks();
    this.machineStart = machineTicks();
    this.sample(true);
    this.timer = setInterval(() => this.sample(false), this.intervalMs);
    this.timer.unref();
  }

  stop(): CpuReport {
    if (this.timer) clearInterval(this.timer);
    this.sample(false);
    const seconds = (Date.now() - this.startedAtMs) / 1000;
    const m = machineTicks();
    const cores = (m.total - this.machineStart.total) / clkTck() / Math.max(seconds, 1e-9);
    const pct = (ticks: number) => (ticks / clkTck() / Math.max(seconds, 1e-9)) * 100;
    const byProcess = Object.fromEntries(
      [...this.totals.entries()]
        .map(([k, v]) => [k, Math.round(pct(v) * 10) / 10] as const)
        .filter(([, v]) => v > 0)
        .sort((a, b) => b[1] - a[1]),
    );
    return {
      seconds,
      cores: Math.round(cores * 10) / 10,
      machineBusyPct: Math.round(pct(m.busy - this.machineStart.busy) * 10) / 10,
      byProcess,
    };
  }

  private sample(first: boolean): void {
    const stats = new Map<number, ProcStat>();
    for (const pid of pids()) {
      const s = readStat(pid);
      if (s) stats.set(pid, s);
    }
    for (const s of stats.values()) {
      const prev = this.last.get(s.pid);
      this.last.set(s.pid, s.ticks);
      let delta: number;
      if (prev !== undefined) delta = s.ticks - prev;
      else if (!first && s.starttime >= this.startedAtBootTicks)
        delta = s.ticks; // born during the window
      else delta = 0;
      if (delta <= 0) continue;
      const label = this.labelOf(s, stats);
      this.totals.set(label, (this.totals.get(label) ?? 0) + delta);
    }
  }

  private labelOf(s: ProcStat, stats: Map<number, ProcStat>): string {
    const known = this.labels.get(s.pid);
    if (known) return known;
    let label: string | undefined;
    for (let p: ProcStat | undefined = s, hops = 0; p && hops < 64; p = stats.get(p.ppid), hops++) {
      const root = this.roots.get(p.pid);
      if (root) {
        label = root;
        break;
      }
      if (p.ppid <= 1) break;
    }
    if (!label) {
      const title = cmdline(s.pid);
      const pg = parsePostgresTitle(title) ?? (s.comm === 'postgres' ? {} : undefined);
      if (pg) {
        if (pg.database === undefined) label = 'postgres: background processes';
        else if (pg.database !== this.database) label = 'postgres: other databases';
        else label = `postgres ← ${this.appOfClientPort(pg.clientPort!) ?? 'unknown client'}`;
      } else if (s.comm === 'nats-server') label = 'nats-server';
      else label = 'other processes';
    }
    this.labels.set(s.pid, label);
    return label;
  }

  private appOfClientPort(port: number): string | undefined {
    const inodes = socketInodesByLocalPort().get(port) ?? [];
    if (!inodes.length) return undefined;
    for (const [pid, label] of this.roots) {
      const mine = socketInodesOf(pid);
      if (inodes.some((i) => mine.has(i))) return label;
    }
    return undefined;
  }
}
