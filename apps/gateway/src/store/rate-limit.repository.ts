import type { MikroORM } from '@sluice/store';

/** A counter's state in the current window. */
export interface WindowCount {
  /** Requests counted under the key in the current window (this one included, for `hit`). */
  count: number;
  /** Whole seconds until the window ends (≥ 1). */
  resetSeconds: number;
}

/** The current fixed window of `?` seconds, by the database clock (every replica agrees on it). */
const WINDOW_START = `to_timestamp(floor(extract(epoch FROM now()) / ?::int) * ?::int)`;
const RESET = `greatest(1, ceil(extract(epoch FROM window_start) + ?::int - extract(epoch FROM now())))::int`;

/** What `take` answers: whether the request may go on, and the window's figures for its headers. */
export interface Taken extends WindowCount {
  allowed: boolean;
}

/**
 * The share of a limit a replica reserves at once (`leaseSize`): a fiftieth of the limit, at least 1
 * and at most 100 requests. A limit under 100 is counted request by request, exactly.
 */
export function leaseSize(limit: number): number {
  return Math.max(1, Math.min(100, Math.floor(limit / 50)));
}

/** A replica's reservation under one key in one window. */
interface Lease {
  /** The window's end, by this process's clock (ms). */
  endsAt: number;
  /** Requests reserved and not yet spent here. */
  left: number;
  /** Every replica's reservations of the window as of this replica's last one, capped at the limit. */
  reserved: number;
  /** The reservation in flight, which requests finding the lease empty wait for. */
  pending?: Promise<void>;
}

/**
 * Fixed-window request counters in Postgres (`gateway.rate_limit_counters`, UNLOGGED), shared by every
 * gateway replica. Ended windows are deleted by `purge`.
 *
 * `take` (the per-token, per-agent and per-address limits) does not write a statement per request: a
 * replica reserves a lease of `leaseSize(limit)` requests of the key's window in one INSERT .. ON
 * CONFLICT and spends it in memory, reserving again when it is spent. The database never grants more
 * than the limit in a window across all replicas (a reservation is granted only what is left), so the
 * limit holds exactly; what a lease costs is that requests reserved by one replica and not spent by the
 * window's end cannot be spent by another: a client spreading its requests over R replicas may be
 * refused up to R × (lease − 1) requests before the limit (under 2 % of it per replica). Once the window
 * is exhausted a replica refuses locally until it ends. Concurrent requests of one key on one replica
 * share one reservation. `hit` and `peek` (failed authentications) count request by request.
 */
export class RateLimitStore {
  private readonly leases = new Map<string, Lease>();

  constructor(
    private readonly orm: MikroORM,
    /** Length of a window in seconds. */
    readonly windowSeconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Takes one request under `key` with `limit` per window: allowed while the window has room, with
   * `count` the requests counted so far (this one included; other replicas' unspent reservations
   * count as taken) and the seconds until the window ends.
   */
  async take(key: string, limit: number): Promise<Taken> {
    for (;;) {
      let lease = this.leases.get(key);
      const now = this.now();
      if (lease && lease.endsAt <= now && !lease.pending) {
        this.leases.delete(key);
        lease = undefined;
      }
      if (lease?.pending) {
        await lease.pending;
        continue;
      }
      if (lease && (lease.left > 0 || lease.reserved >= limit)) {
        const allowed = lease.left > 0;
        if (allowed) lease.left--;
        return {
          allowed,
          count: allowed ? lease.reserved - lease.left : limit + 1,
          resetSeconds: Math.max(1, Math.ceil((lease.endsAt - now) / 1000)),
        };
      }
      const next: Lease = lease ?? { endsAt: 0, left: 0, reserved: 0 };
      next.pending = this.reserve(key, limit, next).finally(() => {
        next.pending = undefined;
      });
      this.leases.set(key, next);
      try {
        await next.pending;
      } catch (err) {
        this.leases.delete(key);
        throw err;
      }
    }
  }

  /** Reserves a lease of `key`'s current window into `lease` (one statement). */
  private async reserve(key: string, limit: number, lease: Lease): Promise<void> {
    const w = this.windowSeconds;
    const want = leaseSize(limit);
    // The counter grows by `want` each time; what is granted is what was left of the limit before.
    const rows = await this.orm.em.getConnection().execute<{ count: number; reset_ms: number }[]>(
      `INSERT INTO rate_limit_counters AS c (key, window_start, count)
       VALUES (?, ${WINDOW_START}, ?)
       ON CONFLICT (key, window_start) DO UPDATE SET count = c.count + excluded.count
       RETURNING count, (extract(epoch FROM window_start) + ?::int - extract(epoch FROM clock_timestamp())) * 1000 AS reset_ms`,
      [key, w, w, want, w],
      'all',
    );
    const count = Number(rows[0]!.count);
    const granted = Math.min(want, Math.max(0, limit - (count - want)));
    lease.left = granted; // a lease is renewed only once spent
    lease.reserved = Math.min(limit, count);
    lease.endsAt = this.now() + Math.max(0, Number(rows[0]!.reset_ms));
  }

  private async one(sql: string, params: unknown[]): Promise<WindowCount | undefined> {
    const rows = await this.orm.em
      .getConnection()
      .execute<{ count: number; reset: number }[]>(sql, params, 'all');
    const row = rows[0];
    return row ? { count: Number(row.count), resetSeconds: Number(row.reset) } : undefined;
  }

  /** Counts one request under `key` and returns the count of the current window. */
  async hit(key: string): Promise<WindowCount> {
    const w = this.windowSeconds;
    const counted = await this.one(
      `INSERT INTO rate_limit_counters AS c (key, window_start, count)
       VALUES (?, ${WINDOW_START}, 1)
       ON CONFLICT (key, window_start) DO UPDATE SET count = c.count + 1
       RETURNING count, ${RESET} AS reset`,
      [key, w, w, w],
    );
    return counted!;
  }

  /** The count of the current window under `key`, without counting (0 when none). */
  async peek(key: string): Promise<WindowCount> {
    const w = this.windowSeconds;
    const row = await this.one(
      `SELECT count, ${RESET} AS reset FROM rate_limit_counters WHERE key = ? AND window_start = ${WINDOW_START}`,
      [w, key, w, w],
    );
    return row ?? { count: 0, resetSeconds: w };
  }

  /** Deletes the counters of ended windows (safe on every replica at once); returns how many. */
  async purge(): Promise<number> {
    const now = this.now();
    for (const [key, lease] of this.leases) if (lease.endsAt <= now && !lease.pending) this.leases.delete(key);
    const rows = await this.orm.em
      .getConnection()
      .execute<unknown[]>(
        `DELETE FROM rate_limit_counters WHERE window_start < now() - ?::int * interval '1 second' RETURNING 1`,
        [this.windowSeconds],
        'all',
      );
    return rows.length;
  }
}
