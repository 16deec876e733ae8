/** Where a delivery stands: PENDING until DELIVERED, FAILED (retry schedule exhausted) or SKIPPED (no endpoint). */
export type DeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED' | 'SKIPPED';
/** What made the delivery: a public webhook event, or SendTestWebhook. */
export type DeliveryOrigin = 'EVENT' | 'TEST';

/** One webhook to deliver, with the record of where it stands. */
export interface Delivery {
  /** Creation order (events in the order the dispatcher received them). */
  seq: bigint;
  id: string;
  webhookId: string;
  platformId: string;
  eventId: string | null;
  type: string;
  origin: DeliveryOrigin;
  /** The exact JSON body, frozen when the delivery was created. */
  payload: string;
  /**
   * A request–response webhook (INCOMING_PAYMENT.PENDING): one attempt, no retries, and the
   * platform's answer is relayed back to the event's owner.
   */
  answered: boolean;
  status: DeliveryStatus;
  attemptCount: number;
  /** Attempts made before the current round of the retry schedule (a redelivery starts a new one). */
  roundStart: number;
  /** The resource the webhook is about (`data.id` of its body), when it has one. */
  resourceId: string | null;
  nextAttemptAt: Date | null;
  leaseOwner: string | null;
  leaseUntil: Date | null;
  url: string | null;
  lastAttemptAt: Date | null;
  lastResponseStatus: number | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  /** The trace its attempts continue (W3C traceparent of the event's consumer span), when tracing was on. */
  traceparent: string | null;
}

/** One HTTP attempt of a delivery. */
export interface DeliveryAttempt {
  deliveryId: string;
  attempt: number;
  url: string;
  attemptedAt: Date;
  durationMs: number;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  succeeded: boolean;
}

/** The outcome of one HTTP attempt. `status` is absent when no response was obtained. */
export interface AttemptResult {
  url: string;
  attemptedAt: Date;
  durationMs: number;
  status?: number;
  body?: string;
  error?: string;
  /** True when the endpoint answered 2xx. */
  ok: boolean;
  /** True when no answer came within the attempt's timeout. */
  timedOut?: boolean;
  /** The endpoint's Retry-After header, if it sent one. */
  retryAfter?: string;
}

/** The record of an attempt's outcome (the recorder adds its delivery and number). */
export function attemptRecord(r: AttemptResult): Omit<DeliveryAttempt, 'deliveryId' | 'attempt'> {
  return {
    url: r.url,
    attemptedAt: r.attemptedAt,
    durationMs: r.durationMs,
    responseStatus: r.status ?? null,
    responseBody: r.body ?? null,
    error: r.error ?? null,
    succeeded: r.ok,
  };
}
