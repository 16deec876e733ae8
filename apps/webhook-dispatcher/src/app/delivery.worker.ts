import { randomUUID } from 'node:crypto';
import { LeaseWrites, newId, PollLoop } from '@sluice/core';
import { withContext } from '@sluice/logging';
import { withTraceparent } from '@sluice/tracing';
import { transactional, type EntityManager } from '@sluice/store';
import { DELAY_BUCKETS, type Metrics } from '@sluice/metrics';
import { answerOf } from '../domain/answers.js';
import { attemptRecord, type AttemptResult, type Delivery } from '../domain/delivery.js';
import { disableReason } from '../domain/endpoint-health.js';
import { retryAfterMs, retryDelay } from '../domain/retry-schedule.js';
import { serializePayload, webhookIdForEvent } from '../domain/webhook-types.js';
import type { WebhookTarget } from './ports.js';
import type { DispatchDeps } from './dispatch-deps.js';

export interface DeliveryWorkerOptions extends DispatchDeps {
  /** Delays between attempts (ms); see domain/retry-schedule.ts. */
  schedule: readonly number[];
  /** Platforms served at the same time (each platform's deliveries go one by one). */
  concurrency: number;
  /** Deliveries of one platform leased per claim. */
  perPlatform?: number;
  pollIntervalMs: number;
  /** HTTP timeout of one attempt; the lease per delivery adds a margin to it. */
  timeoutMs: number;
  /** Delay before retrying when identity could not be asked for the target. */
  targetRetryMs?: number;
  /** Finished deliveries older than this are deleted (0 keeps them forever). */
  retentionDays?: number;
  /** Identifies this worker's leases (unique per process). */
  owner?: string;
  /** Sandbox platforms' retry delays are multiplied by this (SANDBOX_TIME_SCALE). */
  sandboxTimeScale?: number;
  /** An endpoint failing every attempt for this long is disabled (default 72 h). */
  disableAfterMs?: number;
  random?: () => number;
  /** Counts attempts by outcome and measures them (see deliveryMetrics). */
  metrics?: Metrics;
}

/**
 * Webhook delivery metrics: `webhook_delivery_attempts_total` by `outcome`
 * (`delivered`; `retry`: failed, another attempt is scheduled; `failed`: failed
 * with the retry schedule exhausted), the `webhook_delivery_attempt_seconds`
 * histogram of each HTTP attempt, and `webhook_delivery_latency_seconds`, from
 * the delivery's creation (the event received) to its successful attempt.
 * Labels are bounded: never the platform, the URL or the webhook id.
 */
function deliveryMetrics(metrics: Metrics) {
  return {
    attempts: metrics.counter({
      name: 'webhook_delivery_attempts_total',
      help: 'HTTP attempts to deliver a webhook, by outcome',
      labelNames: ['outcome'],
    }),
    attemptSeconds: metrics.histogram({
      name: 'webhook_delivery_attempt_seconds',
      help: 'Duration of one HTTP attempt to deliver a webhook',
      labelNames: ['outcome'],
    }),
    latency: metrics.histogram({
      name: 'webhook_delivery_latency_seconds',
      help: 'Time from receiving the event to delivering its webhook (retries included)',
      buckets: DELAY_BUCKETS,
    }),
  };
}

/**
 * Delivers due webhooks. Each loop leases due deliveries (FOR UPDATE SKIP
 * LOCKED, safe with any number of replicas), groups them by platform, asks
 * identity for each platform's target, and sends them one at a time per
 * platform while platforms proceed in parallel. Every attempt is recorded;
 * a failure is retried on the schedule until it is exhausted (FAILED). A
 * platform without an endpoint gets its deliveries SKIPPED.
 *
 * Leases: a claim leases every delivery of a platform's batch for one attempt
 * (`leaseMs`: the HTTP timeout + 30 s), and as each attempt starts the lane renews the lease of the
 * deliveries it still holds (that one and the rest of the batch) for one more
 * attempt. A platform is claimable only when none of its deliveries has a live
 * lease, so while a worker lives its platform stays its own however long the
 * batch takes, and when it dies every lease it held runs out at most one
 * `leaseMs` after its last claim or attempt started: another replica (or the
 * restarted one) then takes the platform over, sending the cut delivery again
 * (at least once, same `webhook-id`). An attempt is only made right after a
 * successful renewal, so it ends (HTTP timeout) before its lease does, and no
 * other worker can attempt the same webhook meanwhile. A lane that finds a
 * delivery no longer held (it stalled past its lease and the platform was
 * taken over) stops and gives back the rest. A lane that fails (the database went away while it
 * recorded an attempt) gives back what it still holds, due after `targetRetryMs`, retrying that
 * write until the lease would have ended: the platform's webhooks go out again seconds after the
 * database is back, not a lease later (the failed attempt's webhook may go twice: at least once).
 */
export class DeliveryWorker {
  private readonly loop: PollLoop;
  private readonly lanes = new Set<Promise<void>>();
  private readonly owner: string;
  private readonly perPlatform: number;
  /** The lease of one attempt (see the class comment), in ms. */
  readonly leaseMs: number;
  private stopping = false;
  private nextPurgeAt = 0;
  /** Wakes the loop when the next delivery falls due (between notifications and safety polls). */
  private dueTimer: NodeJS.Timeout | undefined;
  private readonly metrics: ReturnType<typeof deliveryMetrics> | undefined;
  /** Releases of a failed lane's deliveries that could not be written at once (the database went away). */
  private readonly releases = new LeaseWrites();

  constructor(private readonly o: DeliveryWorkerOptions) {
    this.owner = o.owner ?? `worker:${randomUUID()}`;
    this.perPlatform = o.perPlatform ?? 10;
    this.metrics = o.metrics && deliveryMetrics(o.metrics);
    if (o.metrics) this.observeBacklog(o.metrics);
    // Covers what happens between two renewals: the HTTP attempt and recording it (or, from the claim to
    // the first attempt, the identity lookup), with a margin for slow queries and clock skew between replicas.
    this.leaseMs = o.timeoutMs + 30_000;
    this.loop = new PollLoop(() => this.tick(), {
      idleMs: o.pollIntervalMs,
      onError: (err) => this.o.logger.error({ err }, 'claiming webhook deliveries failed'),
    });
  }

  start(): void {
    this.loop.start();
  }

  /**
   * `webhook_deliveries_due` and `webhook_oldest_due_delivery_age_seconds`: the
   * pending deliveries whose attempt is due (or under way), read when scraped
   * with a query on the due index.
   */
  private observeBacklog(metrics: Metrics): void {
    const read = async () => {
      const now = this.o.clock.now();
      return { now, ...(await this.o.repo.dueBacklog(this.o.orm.em.fork(), now)) };
    };
    const onError = (err: unknown) => this.o.logger.warn({ err }, 'webhook backlog not measured');
    metrics.scrapedGauge(
      {
        name: 'webhook_deliveries_due',
        help: 'Pending webhook deliveries whose attempt is due or under way',
      },
      async (g) => g.set((await read()).due),
      onError,
    );
    metrics.scrapedGauge(
      {
        name: 'webhook_oldest_due_delivery_age_seconds',
        help: 'How long the oldest due webhook delivery has waited for its attempt (0 when none)',
      },
      async (g) => {
        const { now, oldest } = await read();
        g.set(oldest ? Math.max(0, now.getTime() - oldest.getTime()) / 1000 : 0);
      },
      onError,
    );
  }

  /** Looks for due deliveries now instead of at the next poll. */
  nudge(): void {
    this.loop.nudge();
  }

  /** Stops claiming, lets in-flight attempts finish and gives back what was leased but not started. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.dueTimer);
    await this.loop.stop();
    await this.idle();
    await this.releases.drain();
  }

  /** Waits for the lanes started so far to finish. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.lanes]);
  }

  /** One claim round: leases due deliveries and starts their lanes. Returns how many were leased. */
  async claimOnce(): Promise<number> {
    const free = this.o.concurrency - this.lanes.size;
    if (free <= 0) return 0;
    const claimed = await transactional(this.o.orm, (em) =>
      this.o.repo.claimDue(em, {
        owner: this.owner,
        now: this.o.clock.now(),
        maxPlatforms: free,
        perPlatform: this.perPlatform,
        leaseMs: this.leaseMs,
      }),
    );
    const byPlatform = new Map<string, Delivery[]>();
    for (const d of claimed) {
      const list = byPlatform.get(d.platformId) ?? [];
      list.push(d);
      byPlatform.set(d.platformId, list);
    }
    for (const [platformId, deliveries] of byPlatform) {
      const leaseEnd = Date.now() + this.leaseMs;
      const lane: Promise<void> = withContext({ platformId }, () => this.runLane(platformId, deliveries))
        .catch((err) => {
          this.o.logger.error({ err, platformId }, 'webhook lane failed; giving its deliveries back');
          this.giveBack(deliveries.map((d) => d.id), leaseEnd);
        })
        .finally(() => {
          this.lanes.delete(lane);
          this.loop.nudge();
        });
      this.lanes.add(lane);
    }
    return claimed.length;
  }

  /**
   * Gives a failed lane's deliveries back (those it still holds; recorded ones are not leased), due
   * after `targetRetryMs`, retried until the lease would have ended (`leaseEnd`, wall clock).
   */
  private giveBack(ids: string[], leaseEnd: number): void {
    const release = () =>
      transactional(this.o.orm, (em) => {
        const now = this.o.clock.now();
        return this.o.repo.release(em, ids, this.owner, now, new Date(now.getTime() + (this.o.targetRetryMs ?? 5000)));
      });
    void release().then(
      () => this.loop.nudge(),
      () =>
        void this.releases.retry(release, leaseEnd).then((landed) => {
          if (landed) this.loop.nudge();
          else this.o.logger.error({ deliveries: ids.length }, 'failed lane not given back; its leases run out');
        }),
    );
  }

  /** Deletes finished deliveries past the retention period, in batches; returns how many. */
  async purgeOnce(): Promise<number> {
    const days = this.o.retentionDays ?? 0;
    if (days <= 0) return 0;
    const before = new Date(this.o.clock.now().getTime() - days * 86_400_000);
    let total = 0;
    for (;;) {
      const n = await transactional(this.o.orm, (em) => this.o.repo.purgeCompleted(em, before, 1000));
      total += n;
      if (n < 1000 || !this.loop.isRunning) break;
    }
    if (total) this.o.logger.info({ deleted: total, before }, 'old webhook deliveries deleted');
    return total;
  }

  /** One poll: purge hourly, claim; busy (poll again at once) while claims fill free lanes. */
  private async tick(): Promise<boolean> {
    if (Date.now() >= this.nextPurgeAt) {
      this.nextPurgeAt = Date.now() + 3_600_000;
      await this.purgeOnce().catch((err) =>
        this.o.logger.error({ err }, 'purging old webhook deliveries failed'),
      );
    }
    const claimed = await this.claimOnce();
    if (claimed === 0) await this.wakeAtNextDue();
    return claimed > 0 && this.lanes.size < this.o.concurrency;
  }

  /**
   * Nothing due now: sets a timer for when the next delivery falls due (a retry, a lease running
   * out), so the worker neither polls an idle queue nor waits a whole poll interval for a retry.
   * New deliveries wake it through the queue's notification (`nudge`).
   */
  private async wakeAtNextDue(): Promise<void> {
    const next = await this.o.repo.nextDueAt(this.o.orm.em.fork());
    clearTimeout(this.dueTimer);
    if (!next) return;
    const inMs = next.getTime() - this.o.clock.now().getTime();
    if (inMs >= this.o.pollIntervalMs) return;
    this.dueTimer = setTimeout(() => this.loop.nudge(), Math.max(0, inMs) + 5);
    this.dueTimer.unref();
  }

  private async runLane(platformId: string, deliveries: Delivery[]): Promise<void> {
    const ids = deliveries.map((d) => d.id);
    let target: WebhookTarget;
    try {
      target = await this.o.targets.get(platformId);
    } catch (err) {
      const retryAt = new Date(this.o.clock.now().getTime() + (this.o.targetRetryMs ?? 5000));
      this.o.logger.warn(
        { err, platformId, deliveries: ids.length },
        'could not get the webhook target; will retry',
      );
      await transactional(this.o.orm, (em) =>
        this.o.repo.release(em, ids, this.owner, this.o.clock.now(), retryAt),
      );
      return;
    }
    // What identity says now is the latest fact about the platform's endpoint (one the dispatcher
    // disabled stays disabled until the platform sets it anew).
    const disabled = await transactional(this.o.orm, async (em) => {
      await this.o.repo.rememberEndpoint(em, platformId, !!target.endpoint, this.o.clock.now());
      return this.o.repo.isDisabled(em, platformId);
    });
    if (disabled)
      target = { ...target, endpoint: undefined, missingReason: 'the webhook endpoint is disabled' };
    if (!target.endpoint) {
      const reason = target.missingReason ?? 'no webhook endpoint configured';
      const n = await transactional(this.o.orm, async (em) => {
        const now = this.o.clock.now();
        const skipped = await this.o.repo.markSkipped(em, ids, this.owner, reason, now);
        // A request–response webhook without an endpoint still gets its answer: there is no one to ask.
        for (const d of deliveries) {
          const answer = d.answered && skipped.has(d.id) ? answerOf(d, undefined, now) : undefined;
          if (answer) await this.o.events.answered(em, d.platformId, answer);
        }
        return skipped.size;
      });
      this.o.logger.info({ platformId, skipped: n, reason }, 'webhooks skipped');
      return;
    }
    const endpoint = target.endpoint;
    const renew = (em: EntityManager, rest: string[]) =>
      this.o.repo.renewLease(em, {
        platformId,
        ids: rest,
        owner: this.owner,
        now: this.o.clock.now(),
        leaseMs: this.leaseMs,
      });
    // The first attempt's lease, and the same for the rest of the batch, so the platform stays ours;
    // each later one is renewed in the transaction that records the attempt before it.
    let held = await transactional(this.o.orm, (em) => renew(em, ids));
    for (let i = 0; i < deliveries.length; i++) {
      const d = deliveries[i]!;
      const rest = ids.slice(i);
      const release = () =>
        transactional(this.o.orm, (em) => this.o.repo.release(em, rest, this.owner, this.o.clock.now()));
      if (this.stopping) {
        await release();
        return;
      }
      if (!held.has(d.id)) {
        this.o.logger.warn(
          { platformId, webhookId: d.webhookId, deliveryId: d.id, left: rest.length },
          'webhook lease was lost before the attempt; leaving the rest of the batch to the worker that took it',
        );
        await release();
        return;
      }
      const next = ids.slice(i + 1);
      // The attempt (its HTTP span, the SQL that records it) belongs to the trace of the request that caused the event.
      const recorded = await withTraceparent(d.traceparent, async () => {
        const result = await this.o.sender.send(endpoint, target.secrets, d.webhookId, d.payload);
        return this.record(d, result, target, (em) => renew(em, next));
      });
      // An endpoint disabled by this attempt takes the rest of the batch with it.
      if (recorded.disabled) return;
      held = recorded.held;
    }
  }

  /**
   * Records an attempt and, in the same transaction, renews the lease of the rest of the batch
   * (`renewRest`: the next attempt's lease). Returns whether it disabled the platform's endpoint
   * and which of the rest are still held.
   */
  private async record(
    d: Delivery,
    r: AttemptResult,
    target: WebhookTarget,
    renewRest: (em: EntityManager) => Promise<Set<string>>,
  ): Promise<{ disabled: boolean; held: Set<string> }> {
    const attempt = d.attemptCount + 1;
    const now = this.o.clock.now();
    let status: 'DELIVERED' | 'PENDING' | 'FAILED' = 'DELIVERED';
    let nextAttemptAt: Date | null = null;
    // A request–response webhook gets one attempt: its answer (or the lack of one) decides.
    if (!r.ok && d.answered) status = 'FAILED';
    else if (!r.ok) {
      const delay = retryDelay(attempt - d.roundStart, this.o.schedule, {
        scale: target.environment === 'SANDBOX' ? (this.o.sandboxTimeScale ?? 1) : 1,
        ...(r.retryAfter !== undefined ? { retryAfterMs: retryAfterMs(r.retryAfter, now) } : {}),
        ...(this.o.random ? { random: this.o.random } : {}),
      });
      if (delay === undefined) status = 'FAILED';
      else {
        status = 'PENDING';
        nextAttemptAt = new Date(now.getTime() + delay);
      }
    }
    let disabledFor: string | undefined;
    let held = new Set<string>();
    const kept = await transactional(this.o.orm, async (em) => {
      await this.o.repo.insertAttempt(em, { ...attemptRecord(r), deliveryId: d.id, attempt });
      const finished = await this.o.repo.finishAttempt(em, {
        id: d.id,
        owner: this.owner,
        status,
        nextAttemptAt,
        url: r.url,
        attemptedAt: r.attemptedAt,
        responseStatus: r.status ?? null,
        error: r.error ?? null,
        now,
      });
      const answer = finished && d.answered ? answerOf(d, r, now) : undefined;
      if (answer) await this.o.events.answered(em, d.platformId, answer);
      held = await renewRest(em);
      if (!finished) return finished;
      const failingSince = await this.o.repo.noteAttempt(em, d.platformId, r.ok, now);
      const reason = disableReason(r, failingSince, now, this.o.disableAfterMs ?? 72 * 3_600_000);
      if (reason && (await this.disable(em, d.platformId, r.url, reason, now))) disabledFor = reason;
      return finished;
    });
    const log = {
      webhookId: d.webhookId,
      deliveryId: d.id,
      type: d.type,
      attempt,
      status: r.status,
      ms: r.durationMs,
    };
    const outcome = status === 'DELIVERED' ? 'delivered' : status === 'PENDING' ? 'retry' : 'failed';
    this.metrics?.attempts.inc({ outcome });
    this.metrics?.attemptSeconds.observe({ outcome }, r.durationMs / 1000);
    if (r.ok) this.metrics?.latency.observe(Math.max(0, now.getTime() - d.createdAt.getTime()) / 1000);
    if (!kept) this.o.logger.warn(log, 'webhook lease was lost before the attempt was recorded');
    else if (r.ok) this.o.logger.info(log, 'webhook delivered');
    else if (status === 'FAILED')
      this.o.logger.error({ ...log, error: r.error }, 'webhook failed; retry schedule exhausted');
    else this.o.logger.warn({ ...log, error: r.error, nextAttemptAt }, 'webhook attempt failed; will retry');
    if (disabledFor)
      this.o.logger.warn({ platformId: d.platformId, reason: disabledFor }, 'webhook endpoint disabled');
    return { disabled: disabledFor !== undefined, held };
  }

  /**
   * Disables a platform's endpoint, in the transaction that recorded the attempt: its pending
   * deliveries end FAILED (replayable once it is set again), WEBHOOK_ENDPOINT.DISABLED tells identity
   * (GET /config shows it) and the delivery log records it. False when it already was disabled.
   */
  private async disable(
    em: EntityManager,
    platformId: string,
    url: string,
    reason: string,
    now: Date,
  ): Promise<boolean> {
    if (!(await this.o.repo.disable(em, platformId, reason, now))) return false;
    await this.o.repo.failPending(
      em,
      platformId,
      `not sent: the webhook endpoint was disabled (${reason})`,
      now,
    );
    const ev = await this.o.events.endpointDisabled(em, platformId, { url, reason, disabledAt: now });
    const webhookId = webhookIdForEvent(ev.eventId);
    const type = 'WEBHOOK_ENDPOINT.DISABLED';
    await this.o.repo.insertSkipped(em, {
      id: newId('WebhookDelivery'),
      webhookId,
      platformId,
      eventId: ev.eventId,
      type,
      payload: serializePayload({ id: webhookId, type, timestamp: ev.occurredAt, data: ev.data }),
      reason: 'not sent: it tells that the endpoint was disabled',
      now,
    });
    return true;
  }
}
