import { notifyOnCommit } from '@sluice/events';
import { pgTextArray, type EntityManager } from '@sluice/store';
import { currentTraceparent } from '@sluice/tracing';
import type { Delivery, DeliveryAttempt, DeliveryOrigin, DeliveryStatus } from '../domain/delivery.js';
import type { DeliveryLogQuery } from '../domain/requests.js';

// Exact SQL (no ORM entities): claiming is one statement with window functions, SKIP LOCKED and an
// advisory lock per platform, and every change is a conditional UPDATE on the lease. Each table has one
// row type (as the driver returns it: timestamptz and bigint as text) and one mapper.

/** A row of `webhook_deliveries`. */
interface DeliveryRow {
  seq: string;
  id: string;
  webhook_id: string;
  platform_id: string;
  event_id: string | null;
  type: string;
  origin: DeliveryOrigin;
  payload: string;
  answered: boolean;
  status: DeliveryStatus;
  attempt_count: number;
  round_start: number;
  resource_id: string | null;
  next_attempt_at: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  url: string | null;
  last_attempt_at: string | null;
  last_response_status: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  traceparent: string | null;
}

/** A row of `webhook_delivery_attempts`. */
interface AttemptRow {
  id: string;
  delivery_id: string;
  attempt: number;
  url: string;
  attempted_at: string;
  duration_ms: number;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  succeeded: boolean;
}

/** The ids a statement returned. */
type IdRow = Pick<DeliveryRow, 'id'>;

const optDate = (v: string | null): Date | null => (v === null ? null : new Date(v));

function toDelivery(r: DeliveryRow): Delivery {
  return {
    seq: BigInt(r.seq),
    id: r.id,
    webhookId: r.webhook_id,
    platformId: r.platform_id,
    eventId: r.event_id,
    type: r.type,
    origin: r.origin,
    payload: r.payload,
    answered: r.answered,
    status: r.status,
    attemptCount: r.attempt_count,
    roundStart: r.round_start,
    resourceId: r.resource_id,
    nextAttemptAt: optDate(r.next_attempt_at),
    leaseOwner: r.lease_owner,
    leaseUntil: optDate(r.lease_until),
    url: r.url,
    lastAttemptAt: optDate(r.last_attempt_at),
    lastResponseStatus: r.last_response_status,
    lastError: r.last_error,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    completedAt: optDate(r.completed_at),
    traceparent: r.traceparent ?? null,
  };
}

function toAttempt(r: AttemptRow): DeliveryAttempt {
  return {
    deliveryId: r.delivery_id,
    attempt: r.attempt,
    url: r.url,
    attemptedAt: new Date(r.attempted_at),
    durationMs: r.duration_ms,
    responseStatus: r.response_status,
    responseBody: r.response_body,
    error: r.error,
    succeeded: r.succeeded,
  };
}

/** The channel the delivery queue notifies when a delivery is queued (listened to by every worker). */
export const DELIVERY_QUEUE_CHANNEL = 'sluice_webhook_deliveries';

/**
 * The channel notified when what the dispatcher knows of a platform's endpoint changes (whether it
 * has one, whether it disabled it): every replica forgets its cached endpoint states.
 */
export const ENDPOINT_STATE_CHANNEL = 'sluice_webhook_platforms';

/** What the dispatcher knows of a platform's endpoint. */
export interface EndpointState {
  hasEndpoint: boolean;
  disabled: boolean;
}

/** SQL over the webhooks schema. Every method runs on the caller's entity manager (and transaction). */
export class DeliveryRepository {
  /**
   * Whether a platform has a webhook endpoint, as far as the dispatcher knows: true, false, or
   * undefined when it has never heard of the platform.
   */
  async platformHasEndpoint(em: EntityManager, platformId: string): Promise<boolean | undefined> {
    return (await this.endpointState(em, platformId))?.hasEndpoint;
  }

  /** What the dispatcher knows of a platform's endpoint: whether it has one, and whether it disabled it. */
  async endpointState(
    em: EntityManager,
    platformId: string,
  ): Promise<EndpointState | undefined> {
    const rows = await em.execute<{ has_endpoint: boolean; disabled_at: string | null }[]>(
      `SELECT has_endpoint, disabled_at FROM webhook_platforms WHERE platform_id = ?`,
      [platformId],
    );
    const r = rows[0];
    return r ? { hasEndpoint: r.has_endpoint, disabled: r.disabled_at !== null } : undefined;
  }

  /**
   * A page of the platform's delivery log, newest first (created_at, id), with the total count of
   * the filtered log. `after` is the keyset position of the previous page's last row.
   */
  async list(em: EntityManager, q: DeliveryLogQuery): Promise<{ rows: Delivery[]; total: number }> {
    const where = ['platform_id = ?'];
    const params: unknown[] = [q.platformId];
    const add = (clause: string, value: unknown) => {
      where.push(clause);
      params.push(value);
    };
    if (q.type !== undefined) add('type = ?', q.type);
    if (q.status !== undefined) add('status = ?', q.status);
    if (q.createdAfter) add('created_at >= ?', q.createdAfter);
    if (q.createdBefore) add('created_at < ?', q.createdBefore);
    if (q.resourceId !== undefined) add('resource_id = ?', q.resourceId);
    const filter = where.join(' AND ');
    const total = await em.execute<{ n: string }[]>(
      `SELECT count(*) AS n FROM webhook_deliveries WHERE ${filter}`,
      params,
    );
    const page = q.after ? ' AND (created_at, id) < (?::timestamptz, ?)' : '';
    const rows = await em.execute<DeliveryRow[]>(
      `SELECT * FROM webhook_deliveries WHERE ${filter}${page} ORDER BY created_at DESC, id DESC LIMIT ?`,
      [...params, ...(q.after ? [q.after.createdAt, q.after.id] : []), q.limit],
    );
    return { rows: rows.map(toDelivery), total: Number(total[0]!.n) };
  }

  /**
   * Queues a platform's delivery again (by delivery or webhook id), due now, from the start of the
   * retry schedule, with the same webhook id and body. A delivery being attempted right now (PENDING
   * under a live lease) is left as it is. Undefined when the platform has no such delivery.
   */
  async redeliver(
    em: EntityManager,
    platformId: string,
    id: string,
    now: Date,
  ): Promise<Delivery | undefined> {
    const rows = await em.execute<DeliveryRow[]>(
      `UPDATE webhook_deliveries SET status = 'PENDING', next_attempt_at = ?, round_start = attempt_count,
         last_error = NULL, completed_at = NULL, updated_at = ?
       WHERE platform_id = ? AND (id = ? OR webhook_id = ?) AND (status <> 'PENDING' OR lease_owner IS NULL)
       RETURNING *`,
      [now, now, platformId, id, id],
    );
    if (rows.length) {
      notifyOnCommit(em, DELIVERY_QUEUE_CHANNEL);
      return toDelivery(rows[0]!);
    }
    const found = await em.execute<DeliveryRow[]>(
      `SELECT * FROM webhook_deliveries WHERE platform_id = ? AND (id = ? OR webhook_id = ?)`,
      [platformId, id, id],
    );
    return found[0] ? toDelivery(found[0]) : undefined;
  }

  /**
   * Queues again, due now and from the start of the schedule, every delivery of the platform created
   * in [since, until) that did not reach it (FAILED, SKIPPED; DELIVERED too when asked); request–
   * response webhooks excepted. Returns how many.
   */
  async replay(
    em: EntityManager,
    o: { platformId: string; since: Date; until: Date; includeDelivered: boolean; now: Date },
  ): Promise<number> {
    const rows = await em.execute<IdRow[]>(
      `UPDATE webhook_deliveries SET status = 'PENDING', next_attempt_at = ?, round_start = attempt_count,
         last_error = NULL, completed_at = NULL, lease_owner = NULL, lease_until = NULL, updated_at = ?
       WHERE platform_id = ? AND origin = 'EVENT' AND NOT answered AND created_at >= ? AND created_at < ?
         AND (status IN ('FAILED', 'SKIPPED') OR (? AND status = 'DELIVERED'))
         AND type <> 'WEBHOOK_ENDPOINT.DISABLED'
       RETURNING id`,
      [o.now, o.now, o.platformId, o.since, o.until, o.includeDelivered],
    );
    if (rows.length) notifyOnCommit(em, DELIVERY_QUEUE_CHANNEL);
    return rows.length;
  }

  /**
   * Records whether a platform has an endpoint as of `asOf`, unless a later fact is already known.
   * A platform the dispatcher disabled stays disabled (no endpoint) until identity says, after the
   * disabling, that it has one again (`fromIdentityEvent`: the platform set its endpoint anew).
   */
  async rememberEndpoint(
    em: EntityManager,
    platformId: string,
    hasEndpoint: boolean,
    asOf: Date,
    fromIdentityEvent = false,
  ): Promise<void> {
    // `before` is the row as the statement found it: a changed state notifies the replicas' caches.
    const rows = await em.execute<{ changed: boolean }[]>(
      `WITH before AS (SELECT has_endpoint, disabled_at FROM webhook_platforms WHERE platform_id = ?)
       INSERT INTO webhook_platforms (platform_id, has_endpoint, as_of) VALUES (?, ?, ?)
       ON CONFLICT (platform_id) DO UPDATE SET
         has_endpoint = excluded.has_endpoint AND (webhook_platforms.disabled_at IS NULL OR (? AND excluded.as_of > webhook_platforms.disabled_at)),
         disabled_at = CASE WHEN excluded.has_endpoint AND ? AND excluded.as_of > webhook_platforms.disabled_at THEN NULL ELSE webhook_platforms.disabled_at END,
         failing_since = CASE WHEN excluded.has_endpoint AND ? AND excluded.as_of > webhook_platforms.disabled_at THEN NULL ELSE webhook_platforms.failing_since END,
         as_of = excluded.as_of
       WHERE webhook_platforms.as_of <= excluded.as_of
       RETURNING NOT EXISTS (SELECT 1 FROM before b
         WHERE b.has_endpoint = webhook_platforms.has_endpoint
           AND (b.disabled_at IS NULL) = (webhook_platforms.disabled_at IS NULL)) AS changed`,
      [platformId, platformId, hasEndpoint, asOf, fromIdentityEvent, fromIdentityEvent, fromIdentityEvent],
    );
    if (rows[0]?.changed) notifyOnCommit(em, ENDPOINT_STATE_CHANNEL);
  }

  /** Whether the dispatcher disabled the platform's endpoint (and has not seen it set anew since). */
  async isDisabled(em: EntityManager, platformId: string): Promise<boolean> {
    const rows = await em.execute<{ disabled_at: string | null }[]>(
      `SELECT disabled_at FROM webhook_platforms WHERE platform_id = ?`,
      [platformId],
    );
    return !!rows[0]?.disabled_at;
  }

  /**
   * Notes an attempt's outcome for the endpoint's health: a success clears `failing_since`, a
   * failure sets it if unset. Returns since when the endpoint has been failing (null if healthy).
   */
  async noteAttempt(em: EntityManager, platformId: string, ok: boolean, now: Date): Promise<Date | null> {
    const rows = await em.execute<{ failing_since: string | null }[]>(
      `INSERT INTO webhook_platforms (platform_id, has_endpoint, as_of, failing_since) VALUES (?, true, ?, CASE WHEN ? THEN NULL ELSE ?::timestamptz END)
       ON CONFLICT (platform_id) DO UPDATE SET
         failing_since = CASE WHEN ? THEN NULL ELSE COALESCE(webhook_platforms.failing_since, ?::timestamptz) END
       RETURNING failing_since`,
      [platformId, now, ok, now, ok, now],
    );
    return optDate(rows[0]?.failing_since ?? null);
  }

  /** Disables the platform's endpoint; false when it already was. */
  async disable(em: EntityManager, platformId: string, reason: string, now: Date): Promise<boolean> {
    const rows = await em.execute<{ platform_id: string }[]>(
      `UPDATE webhook_platforms SET has_endpoint = false, disabled_at = ?, disabled_reason = ?
       WHERE platform_id = ? AND disabled_at IS NULL RETURNING platform_id`,
      [now, reason, platformId],
    );
    if (rows.length === 1) notifyOnCommit(em, ENDPOINT_STATE_CHANNEL);
    return rows.length === 1;
  }

  /** Ends every PENDING delivery of a platform as FAILED with `reason` (its endpoint was disabled). */
  async failPending(em: EntityManager, platformId: string, reason: string, now: Date): Promise<number> {
    const rows = await em.execute<IdRow[]>(
      `UPDATE webhook_deliveries SET status = 'FAILED', next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL,
         last_error = ?, updated_at = ?, completed_at = ?
       WHERE platform_id = ? AND status = 'PENDING' RETURNING id`,
      [reason, now, now, platformId],
    );
    return rows.length;
  }

  /** Records, for the delivery log, an event that was not sent (SKIPPED with `reason`). */
  async insertSkipped(
    em: EntityManager,
    d: {
      id: string;
      webhookId: string;
      platformId: string;
      eventId: string;
      type: string;
      payload: string;
      reason: string;
      now: Date;
    },
  ): Promise<void> {
    await em.execute(
      `INSERT INTO webhook_deliveries (id, webhook_id, platform_id, event_id, type, origin, payload, status, attempt_count,
         last_error, created_at, updated_at, completed_at)
       VALUES (?, ?, ?, ?, ?, 'EVENT', ?, 'SKIPPED', 0, ?, ?, ?, ?)
       ON CONFLICT (webhook_id) DO NOTHING`,
      [d.id, d.webhookId, d.platformId, d.eventId, d.type, d.payload, d.reason, d.now, d.now, d.now],
    );
  }

  /** When the next PENDING delivery falls due (or its lease runs out), if any. */
  /** How many pending deliveries are due (or under way) at `now`, and the oldest one's due time (the metrics' backlog). */
  async dueBacklog(em: EntityManager, now: Date): Promise<{ due: number; oldest: Date | undefined }> {
    const [row] = await em.execute<{ due: string | number; oldest: string | Date | null }[]>(
      `SELECT count(*) AS due, min(next_attempt_at) AS oldest FROM webhook_deliveries
       WHERE status = 'PENDING' AND next_attempt_at <= ?`,
      [now],
    );
    return { due: Number(row?.due ?? 0), oldest: row?.oldest ? new Date(row.oldest) : undefined };
  }

  async nextDueAt(em: EntityManager): Promise<Date | undefined> {
    const rows = await em.execute<{ at: string | null }[]>(
      `SELECT min(GREATEST(next_attempt_at, COALESCE(lease_until, next_attempt_at))) AS at
       FROM webhook_deliveries WHERE status = 'PENDING'`,
    );
    return rows[0]?.at ? new Date(rows[0].at) : undefined;
  }

  /**
   * Creates the PENDING delivery of an event, due now. Idempotent on the webhook
   * id: returns false when the event already has its delivery.
   */
  async insertPending(
    em: EntityManager,
    d: {
      id: string;
      webhookId: string;
      platformId: string;
      eventId: string;
      type: string;
      payload: string;
      answered: boolean;
      now: Date;
    },
  ): Promise<boolean> {
    const rows = await em.execute<IdRow[]>(
      `INSERT INTO webhook_deliveries (id, webhook_id, platform_id, event_id, type, origin, payload, answered, status, attempt_count, next_attempt_at, created_at, updated_at, traceparent)
       VALUES (?, ?, ?, ?, ?, 'EVENT', ?, ?, 'PENDING', 0, ?, ?, ?, ?)
       ON CONFLICT (webhook_id) DO NOTHING RETURNING id`,
      [d.id, d.webhookId, d.platformId, d.eventId, d.type, d.payload, d.answered, d.now, d.now, d.now, currentTraceparent() ?? null],
    );
    // Wakes the workers of every replica when the transaction commits.
    if (rows.length === 1) notifyOnCommit(em, DELIVERY_QUEUE_CHANNEL);
    return rows.length === 1;
  }

  /** Records a delivery that was attempted once, synchronously, and is already final (test webhooks). */
  async insertFinal(
    em: EntityManager,
    d: {
      id: string;
      webhookId: string;
      platformId: string;
      type: string;
      payload: string;
      status: 'DELIVERED' | 'FAILED';
      url: string;
      now: Date;
    },
    attempt: Omit<DeliveryAttempt, 'deliveryId' | 'attempt'>,
  ): Promise<void> {
    await em.execute(
      `INSERT INTO webhook_deliveries (id, webhook_id, platform_id, event_id, type, origin, payload, status, attempt_count, url,
         last_attempt_at, last_response_status, last_error, created_at, updated_at, completed_at)
       VALUES (?, ?, ?, NULL, ?, 'TEST', ?, ?, 1, ?, ?, ?, ?, ?, ?, ?)`,
      [
        d.id,
        d.webhookId,
        d.platformId,
        d.type,
        d.payload,
        d.status,
        d.url,
        attempt.attemptedAt,
        attempt.responseStatus,
        attempt.error,
        d.now,
        d.now,
        d.now,
      ],
    );
    await this.insertAttempt(em, { ...attempt, deliveryId: d.id, attempt: 1 });
  }

  /**
   * Leases due deliveries to `owner`: the oldest due rows of at most
   * `maxPlatforms` platforms, at most `perPlatform` rows each, skipping any
   * platform that already has leased deliveries (so a platform's webhooks go
   * out one at a time, roughly in order, while other platforms proceed). Rows
   * are locked with FOR UPDATE SKIP LOCKED and re-checked after locking, so
   * replicas claiming at the same time never lease the same row, and a
   * transaction-scoped advisory lock per platform keeps two concurrent claims
   * from splitting one platform's rows between them. Every claimed row gets
   * the same lease, `now + leaseMs`: one attempt's worth. The worker renews it
   * for the rows it still holds as each attempt starts (`renewLease`), so a
   * live worker keeps its platform however long the batch takes, while a
   * crashed one frees it one lease after its last claim or attempt started.
   * Returned in creation order.
   */
  async claimDue(
    em: EntityManager,
    o: { owner: string; now: Date; maxPlatforms: number; perPlatform: number; leaseMs: number },
  ): Promise<Delivery[]> {
    const rows = await em.execute<DeliveryRow[]>(
      `WITH due AS (
         SELECT d.id, d.platform_id, d.next_attempt_at, d.seq,
                row_number() OVER (PARTITION BY d.platform_id ORDER BY d.seq) AS rn
         FROM webhook_deliveries d
         WHERE d.status = 'PENDING' AND d.next_attempt_at <= ?
           AND (d.lease_until IS NULL OR d.lease_until < ?)
           AND NOT EXISTS (
             SELECT 1 FROM webhook_deliveries f
             WHERE f.platform_id = d.platform_id AND f.status = 'PENDING' AND f.lease_until >= ?)
       ),
       platforms AS (
         SELECT platform_id FROM due GROUP BY platform_id ORDER BY min(next_attempt_at), min(seq) LIMIT ?
       ),
       picked AS (
         SELECT d.id FROM webhook_deliveries d
         JOIN due ON due.id = d.id
         JOIN platforms p ON p.platform_id = due.platform_id
         WHERE due.rn <= ? AND d.status = 'PENDING' AND (d.lease_until IS NULL OR d.lease_until < ?)
           -- One claimer per platform at a time (row locks alone would let two claimers split a platform's rows).
           AND pg_try_advisory_xact_lock(hashtext('webhook-dispatcher:claim'), hashtext(d.platform_id))
         FOR UPDATE OF d SKIP LOCKED
       )
       UPDATE webhook_deliveries d
       SET lease_owner = ?, lease_until = ?, updated_at = ?
       FROM picked WHERE d.id = picked.id
       RETURNING d.*`,
      [
        o.now,
        o.now,
        o.now,
        o.maxPlatforms,
        o.perPlatform,
        o.now,
        o.owner,
        new Date(o.now.getTime() + o.leaseMs),
        o.now,
      ],
    );
    return rows.map(toDelivery).sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
  }

  /**
   * Renews `owner`'s lease to `now + leaseMs` on those of `ids` (deliveries
   * of `platformId`) it still holds, PENDING and leased to it, and returns
   * their ids. A row whose lease ran out is still held as long as no other
   * worker claimed it (claiming sets `lease_owner`), so renewing it is safe; a
   * row another worker claimed, or that is no longer PENDING, is neither
   * renewed nor returned. Takes the platform's claim lock first (must run in a
   * transaction), so a claim of the platform and a renewal never interleave: a
   * claim either sees the renewed leases or has committed before the renewal
   * looks at the rows.
   */
  async renewLease(
    em: EntityManager,
    o: { platformId: string; ids: string[]; owner: string; now: Date; leaseMs: number },
  ): Promise<Set<string>> {
    if (o.ids.length === 0) return new Set();
    await em.execute(`SELECT pg_advisory_xact_lock(hashtext('webhook-dispatcher:claim'), hashtext(?))`, [
      o.platformId,
    ]);
    const rows = await em.execute<IdRow[]>(
      `UPDATE webhook_deliveries SET lease_until = ?, updated_at = ?
       WHERE id = ANY(?::text[]) AND lease_owner = ? AND status = 'PENDING'
       RETURNING id`,
      [new Date(o.now.getTime() + o.leaseMs), o.now, pgTextArray(o.ids), o.owner],
    );
    return new Set(rows.map((r) => r.id));
  }

  async insertAttempt(em: EntityManager, a: DeliveryAttempt): Promise<void> {
    await em.execute(
      `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, url, attempted_at, duration_ms, response_status, response_body, error, succeeded)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        a.deliveryId,
        a.attempt,
        a.url,
        a.attemptedAt,
        a.durationMs,
        a.responseStatus,
        a.responseBody,
        a.error,
        a.succeeded,
      ],
    );
  }

  /**
   * Applies the outcome of an attempt made under `owner`'s lease: DELIVERED,
   * FAILED, or PENDING again at `nextAttemptAt`. Returns false (and changes
   * nothing) when the lease was lost meanwhile.
   */
  async finishAttempt(
    em: EntityManager,
    o: {
      id: string;
      owner: string;
      status: 'PENDING' | 'DELIVERED' | 'FAILED';
      nextAttemptAt: Date | null;
      url: string;
      attemptedAt: Date;
      responseStatus: number | null;
      error: string | null;
      now: Date;
    },
  ): Promise<boolean> {
    const rows = await em.execute<IdRow[]>(
      `UPDATE webhook_deliveries
       SET status = ?, attempt_count = attempt_count + 1, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL,
           url = ?, last_attempt_at = ?, last_response_status = ?, last_error = ?, updated_at = ?,
           completed_at = CASE WHEN ? = 'PENDING' THEN NULL ELSE ?::timestamptz END
       WHERE id = ? AND lease_owner = ? AND status = 'PENDING'
       RETURNING id`,
      [
        o.status,
        o.nextAttemptAt,
        o.url,
        o.attemptedAt,
        o.responseStatus,
        o.error,
        o.now,
        o.status,
        o.now,
        o.id,
        o.owner,
      ],
    );
    return rows.length === 1;
  }

  /** Marks leased deliveries SKIPPED (the platform has no webhook endpoint); returns the ids marked. */
  async markSkipped(
    em: EntityManager,
    ids: string[],
    owner: string,
    reason: string,
    now: Date,
  ): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await em.execute<IdRow[]>(
      `UPDATE webhook_deliveries
       SET status = 'SKIPPED', next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL, last_error = ?, updated_at = ?, completed_at = ?
       WHERE id = ANY(?::text[]) AND lease_owner = ? AND status = 'PENDING'
       RETURNING id`,
      [reason, now, now, pgTextArray(ids), owner],
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Gives leased deliveries back, due at `dueAt` (or when they were due), without counting an attempt. */
  async release(em: EntityManager, ids: string[], owner: string, now: Date, dueAt?: Date): Promise<void> {
    if (ids.length === 0) return;
    await em.execute(
      `UPDATE webhook_deliveries
       SET lease_owner = NULL, lease_until = NULL, next_attempt_at = GREATEST(next_attempt_at, COALESCE(?::timestamptz, next_attempt_at)), updated_at = ?
       WHERE id = ANY(?::text[]) AND lease_owner = ? AND status = 'PENDING'`,
      [dueAt ?? null, now, pgTextArray(ids), owner],
    );
  }

  /** Deletes up to `limit` finished deliveries (and their attempts) completed before `before`; returns how many. */
  async purgeCompleted(em: EntityManager, before: Date, limit: number): Promise<number> {
    const rows = await em.execute<IdRow[]>(
      `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries WHERE status <> 'PENDING' AND completed_at < ? ORDER BY completed_at LIMIT ?)
       RETURNING id`,
      [before, limit],
    );
    return rows.length;
  }

  /** A platform's delivery by `WebhookDelivery:` id or by the `Webhook:` id it was sent with, with its attempts. */
  async findForPlatform(
    em: EntityManager,
    platformId: string,
    id: string,
  ): Promise<{ delivery: Delivery; attempts: DeliveryAttempt[] } | undefined> {
    const rows = await em.execute<DeliveryRow[]>(
      `SELECT * FROM webhook_deliveries WHERE platform_id = ? AND (id = ? OR webhook_id = ?)`,
      [platformId, id, id],
    );
    if (rows.length === 0) return undefined;
    const delivery = toDelivery(rows[0]!);
    const attempts = await em.execute<AttemptRow[]>(
      `SELECT * FROM webhook_delivery_attempts WHERE delivery_id = ? ORDER BY attempt, id`,
      [delivery.id],
    );
    return { delivery, attempts: attempts.map(toAttempt) };
  }
}
