import type { AttemptResult, Delivery } from './delivery.js';

/** How a request–response webhook ended, as the dispatcher saw it (the owner judges the answer). */
export type AnswerOutcome = 'RESPONDED' | 'TIMED_OUT' | 'NO_RESPONSE' | 'NO_ENDPOINT';

/** The platform's answer to a request–response webhook, relayed to the event's owner. */
export interface WebhookAnswer {
  transactionId: string;
  webhookId: string;
  outcome: AnswerOutcome;
  responseStatus?: number;
  responseBody?: string;
  error?: string;
  answeredAt: string;
}

/** The resource id a webhook body is about (`data.id`), if it has one. */
export function resourceIdOf(payload: string): string | undefined {
  try {
    const body = JSON.parse(payload) as { data?: { id?: unknown } };
    return typeof body.data?.id === 'string' ? body.data.id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The answer of an attempt of a request–response delivery: the HTTP status and body when the
 * endpoint answered, else why not. `result` undefined: the platform has no endpoint (nothing was
 * sent). Undefined when the body names no resource (not a request–response webhook body).
 */
export function answerOf(
  d: Delivery,
  result: AttemptResult | undefined,
  at: Date,
): WebhookAnswer | undefined {
  const transactionId = resourceIdOf(d.payload);
  if (!transactionId) return undefined;
  const base = { transactionId, webhookId: d.webhookId };
  if (!result) return { ...base, outcome: 'NO_ENDPOINT', answeredAt: at.toISOString() };
  const answeredAt = new Date(result.attemptedAt.getTime() + result.durationMs).toISOString();
  if (result.status !== undefined) {
    return {
      ...base,
      outcome: 'RESPONDED',
      responseStatus: result.status,
      ...(result.body !== undefined ? { responseBody: result.body } : {}),
      answeredAt,
    };
  }
  return {
    ...base,
    outcome: result.timedOut ? 'TIMED_OUT' : 'NO_RESPONSE',
    ...(result.error ? { error: result.error } : {}),
    answeredAt,
  };
}
