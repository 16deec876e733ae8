import pg from 'pg';
import type { Logger } from '@sluice/logging';

const OUTBOX_CHANNEL_PREFIX = 'sluice_outbox_';

/** The channel a service's outbox notifies when it commits events (one per schema, within a database). */
export function outboxChannel(schema: string): string {
  return `${OUTBOX_CHANNEL_PREFIX}${schema}`;
}

/** The application_name of the LISTEN connection of these channels (at most 63 bytes, Postgres' limit). */
export function listenerName(channels: readonly string[]): string {
  return `sluice listen ${channels.join(',')}`.slice(0, 63);
}

const CHANNELS = Symbol('sluice.notifyOnCommit');

/**
 * Asks for `channel` to be notified once the transaction of `em` commits (nothing if it rolls
 * back). Not a NOTIFY inside the transaction: Postgres serializes the commits of every transaction
 * that issued one (a database-wide lock), which stalls busy producers; instead the PgNotifications
 * of the process sees the commit (MikroORM's afterTransactionCommit) and wakes its own listener at
 * once; only when that listener does not take the work (its `onNotify` does not answer `true`: no
 * worker of the channel runs in this process, or it is stopping) does one coalesced NOTIFY, outside
 * any business transaction, go to the other processes.
 */
export function notifyOnCommit(em: object, channel: string): void {
  const marked = em as { [CHANNELS]?: Set<string> };
  (marked[CHANNELS] ??= new Set()).add(channel);
}

/** The channels a committed transaction asked to notify. */
function channelsOf(em: unknown): ReadonlySet<string> | undefined {
  return (em as { [CHANNELS]?: Set<string> } | undefined)?.[CHANNELS];
}

/** The ORM's event manager as PgNotifications needs it (MikroORM's, typed structurally). */
interface CommitEvents {
  em: {
    getEventManager(): {
      registerSubscriber(s: { afterTransactionCommit(args: { em: unknown }): void }): void;
    };
  };
}

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
  /** Per channel: a NOTIFY in flight ('busy'), and another one asked meanwhile ('again'). */
  private readonly sending = new Map<string, 'busy' | 'again'>();

  constructor(
    private readonly o: {
      connectionString: string;
      channels: readonly string[];
      /**
       * A notification on `channel`. For this process's own commits, `true` means "a worker here
       * takes it": no NOTIFY is sent to the other processes (each would wake for a pass that
       * finds nothing, or race this one for the rows; a NOTIFY is a transaction of its own).
       */
      onNotify: (channel: string) => boolean | void;
      onReady?: () => void;
      logger?: Logger;
      /** The ORM whose committed transactions notify these channels (`notifyOnCommit`). */
      orm?: CommitEvents;
    },
  ) {
    o.orm?.em.getEventManager().registerSubscriber({
      afterTransactionCommit: (args) => {
        // Never let a wake-up break the commit it follows (the transaction is committed already).
        try {
          for (const ch of channelsOf(args?.em) ?? []) {
            if (!this.o.channels.includes(ch)) continue;
            const taken = this.o.onNotify(ch) === true; // this process at once
            if (!taken) this.notify(ch); // the others (replicas)
          }
        } catch (err) {
          this.o.logger?.warn({ err }, 'could not signal a committed change');
        }
      },
    });
  }

  /**
   * One NOTIFY of `channel` on the listening connection, for the other processes (nothing while not
   * connected); repeats asked while one is in flight collapse into one more.
   */
  notify(channel: string): void {
    const client = this.client;
    if (!client || this.stopped) return;
    if (this.sending.has(channel)) {
      this.sending.set(channel, 'again');
      return;
    }
    this.sending.set(channel, 'busy');
    client
      .query(`SELECT pg_notify($1, '')`, [channel])
      .catch(() => undefined)
      .finally(() => {
        const again = this.sending.get(channel) === 'again';
        this.sending.delete(channel);
        if (again) this.notify(channel);
      });
  }

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
    // Named after its channels, so an operator (or a test) finds it in pg_stat_activity.
    const client = new pg.Client({
      connectionString: this.o.connectionString,
      application_name: listenerName(this.o.channels),
    });
    // Postgres also delivers a NOTIFY to the session that sent it. This process woke its own
    // listeners when it committed (before sending it), so its own echo would only wake them again
    // for a pass that finds nothing: notifications from this connection's backend are skipped.
    let self: number | undefined;
    client.on('notification', (n) => {
      if (n.processId !== self) this.o.onNotify(n.channel);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      self = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
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
