import type { EntityManager, MikroORM } from '@sluice/store';
import { PollLoop } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import { notifyOnCommit, PgNotifications } from './notifications.js';

/** How a NotifiedLoop wakes (see the class comment). */
export interface NotifiedLoopOptions {
  /** Whose database is listened to, and whose committed transactions notify the channel. */
  orm: MikroORM;
  /** The Postgres channel that announces new work (one per purpose). */
  channel: string;
  logger?: Logger;
  /** Listen for the channel's notifications (default true); without, it polls every `fallbackMs`. */
  listen?: boolean;
  /**
   * Whether this process's loop takes the channel's work at all (default: always). A loop that
   * does not (a scheduler without a handler) has its process's commits NOTIFY the other processes.
   */
  takesWork?: () => boolean;
  /** Poll interval while listening: how late a lost notification is noticed at worst. */
  safetyMs: number;
  /** Poll interval while not listening (before the LISTEN connection is up, or while it is lost). */
  fallbackMs: number;
  onError: (err: unknown) => void;
}

/**
 * The one wake-up mechanism of the background workers that drain a table (outbox relays, the
 * payments scheduler): a PollLoop that, instead of polling an idle table, sleeps until
 *
 * - a notification on its channel: a transaction that created work calls `notifyOnCommit(em)`;
 *   when it commits (never if it rolls back) this process's loop on the channel wakes at once and
 *   takes the work; only while this loop is not running (not started, or stopping), or takes no
 *   work of the channel (`takesWork`), does a NOTIFY
 *   reach the other processes (replicas) through their LISTEN connection (PgNotifications, one
 *   dedicated connection, reconnecting with backoff). Waking the replicas too cost a transaction
 *   per commit and woke each for a pass that found nothing (or raced this one for the rows);
 *   were this process to die before its pass, their safety poll finds the work;
 * - the time its owner gave to `wakeIn` after a pass (the next job or retry falling due), if
 *   sooner than the safety poll;
 * - the safety poll (`safetyMs`), for a notification lost while the LISTEN connection was down
 *   or between a commit and its NOTIFY (the process died in between): work is never lost, only
 *   found this late; after (re)connecting it looks once at once;
 * - while not listening, every `fallbackMs`, as if notifications did not exist.
 */
export class NotifiedLoop {
  private readonly loop: PollLoop;
  private readonly notifications: PgNotifications | undefined;
  private fallback: NodeJS.Timeout | undefined;
  private dueTimer: NodeJS.Timeout | undefined;
  /** The earliest due time announced by this process's commits since, and its timer. */
  private soonest: { at: number; timer: NodeJS.Timeout } | undefined;
  /** Marks, on a transaction's entity manager, the earliest later due time it announced to this loop. */
  private readonly later = Symbol('NotifiedLoop.later');

  constructor(
    tick: () => Promise<boolean>,
    private readonly o: NotifiedLoopOptions,
  ) {
    const url = o.orm.config.get('clientUrl');
    const listen = (o.listen ?? true) && !!url;
    this.loop = new PollLoop(tick, { idleMs: listen ? o.safetyMs : o.fallbackMs, onError: o.onError });
    if (listen) {
      this.notifications = new PgNotifications({
        connectionString: url!,
        channels: [o.channel],
        onNotify: () => {
          this.loop.nudge();
          return this.takesWork();
        },
        onReady: () => this.loop.nudge(),
        logger: o.logger,
        orm: o.orm,
      });
    }
    o.orm.em.getEventManager().registerSubscriber({
      afterTransactionCommit: (args: { em: unknown }) => {
        const at = (args.em as Record<symbol, number> | undefined)?.[this.later];
        if (at !== undefined) this.wakeAt(at);
      },
    });
  }

  start(): void {
    this.loop.start();
    if (!this.notifications) return;
    void this.notifications.start();
    // Until (and whenever not) listening, poll as often as without notifications.
    this.fallback = setInterval(() => {
      if (!this.notifications!.listening) this.loop.nudge();
    }, this.o.fallbackMs);
    this.fallback.unref();
  }

  /** Stops listening, then stops after the tick in progress (if any). */
  async stop(): Promise<void> {
    clearInterval(this.fallback);
    clearTimeout(this.dueTimer);
    clearTimeout(this.soonest?.timer);
    this.soonest = undefined;
    await this.notifications?.stop();
    await this.loop.stop();
  }

  /** True while the channel's notifications arrive (and so the loop does not poll). */
  get listening(): boolean {
    return this.notifications?.listening ?? false;
  }

  /** Runs the next tick now. */
  nudge(): void {
    this.loop.nudge();
  }

  /**
   * Announces work written by `em`: on commit if `em` is in a transaction (the work is visible
   * then, and never if it rolls back), else now (an autocommitted write). Work due later (`dueAt`
   * in the future) only sets this process's timer for it, on commit: no pass and no `NOTIFY`
   * until then (this process runs it; if it dies first, another replica's next-due timer or
   * safety poll finds it).
   */
  announce(em: EntityManager, dueAt?: number): void {
    if (dueAt !== undefined && dueAt > Date.now() && em.isInTransaction()) {
      const marked = em as unknown as Record<symbol, number | undefined>;
      marked[this.later] = Math.min(marked[this.later] ?? Infinity, dueAt);
    } else if (dueAt !== undefined && dueAt > Date.now()) this.wakeAt(dueAt);
    else if (em.isInTransaction()) notifyOnCommit(em, this.o.channel);
    else this.announceNow();
  }

  /** Wakes the loop at `at` (epoch ms) unless a wake-up announced before comes sooner; kept across passes. */
  private wakeAt(at: number): void {
    if (this.soonest && this.soonest.at <= at) return;
    clearTimeout(this.soonest?.timer);
    const timer = setTimeout(
      () => {
        this.soonest = undefined;
        this.loop.nudge();
      },
      Math.max(0, at - Date.now()) + 5,
    );
    timer.unref();
    this.soonest = { at, timer };
  }

  /** Announces work that is committed already (to this process at once; to the others by NOTIFY while this loop is not running). */
  announceNow(): void {
    this.loop.nudge();
    if (!this.takesWork()) this.notifications?.notify(this.o.channel);
  }

  /** True when this process's loop runs and takes the channel's work (so no NOTIFY is needed). */
  private takesWork(): boolean {
    return this.loop.isRunning && (this.o.takesWork?.() ?? true);
  }

  /**
   * Wakes the loop in `inMs` (work that falls due then: a scheduled job, a retry) if that is
   * sooner than the safety poll; replaces the previous such wake-up. `undefined`: nothing is due.
   */
  wakeIn(inMs: number | undefined): void {
    clearTimeout(this.dueTimer);
    this.dueTimer = undefined;
    if (inMs === undefined || inMs >= this.o.safetyMs) return;
    // Not sooner than 25 ms: work due already but not claimable (a row another transaction holds
    // for a moment) must not make the loop spin.
    this.dueTimer = setTimeout(() => this.loop.nudge(), Math.max(25, inMs + 5));
    this.dueTimer.unref();
  }
}
