import pg from 'pg';
import type { Logger } from '@sluice/logging';

const OUTBOX_CHANNEL_PREFIX = 'sluice_outbox_';

/** The channel a service's outbox notifies when it commits events (one per schema, within a database). */
export function outboxChannel(schema: string): string {
  return `${OUTBOX_CHANNEL_PREFIX}${schema}`;
}

/**
 * SQL that notifies the outbox channel of the connection's schema (the first of its search_path)
 * when the caller's transaction commits; Postgres delivers a channel's repeats within one
 * transaction once.
 */
export const NOTIFY_OUTBOX_SQL = `SELECT pg_notify('${OUTBOX_CHANNEL_PREFIX}' || current_schema(), '')`;

/**
 * One dedicated Postgres connection that LISTENs on channels and calls `onNotify` for each
 * notification, instead of polling an idle table. Reconnects after a lost connection (with
 * backoff); `onReady` is called each time it listens again, so the owner looks once for what may
 * have been written while it was not listening. `listening` says whether notifications flow now;
 * owners keep a slow safety poll either way.
 */
export class PgNotifications {
  private client: pg.Client | undefined;
  private stopped = false;
  private retryMs = 250;
  private timer: NodeJS.Timeout | undefined;
  private _listening = false;

  constructor(
    private readonly o: {
      connectionString: string;
      channels: readonly string[];
      onNotify: (channel: string) => void;
      onReady?: () => void;
      logger?: Logger;
    },
  ) {}

  get listening(): boolean {
    return this._listening;
  }

  /** Connects and listens; resolves when listening (or after the first failure, retrying in the background). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this._listening = false;
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.o.connectionString });
    client.on('notification', (n) => this.o.onNotify(n.channel));
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      for (const ch of this.o.channels) await client.query(`LISTEN "${ch.replace(/"/g, '""')}"`);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this._listening = true;
    this.retryMs = 250;
    this.o.onReady?.();
  }

  private lost(client: pg.Client, err?: unknown): void {
    if (this.client && this.client !== client) return;
    this.client = undefined;
    const was = this._listening;
    this._listening = false;
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    if (this.stopped) return;
    if (was) this.o.logger?.warn({ err }, 'lost the Postgres LISTEN connection; polling until it is back');
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.connect(), this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(this.retryMs * 2, 10_000);
  }
}
