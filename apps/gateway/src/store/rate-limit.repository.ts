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

/**
 * Fixed-window request counters in Postgres (`gateway.rate_limit_counters`, UNLOGGED), shared by every
 * gateway replica. `hit` is the one statement a limited request costs: an INSERT .. ON CONFLICT that
 * adds 1 to the key's counter of the current window and returns it. Ended windows are deleted by `purge`.
 */
export class RateLimitStore {
  constructor(
    private readonly orm: MikroORM,
    /** Length of a window in seconds. */
    readonly windowSeconds: number,
  ) {}

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
