import type { EntityManager } from '@sluice/store';
import type { WebhookAnswer } from '../domain/answers.js';
import type { AttemptResult } from '../domain/delivery.js';

// Every outbound port of the webhook-dispatcher; the adapters live in clients/ and compose.ts wires them.

/** Where and how a platform's webhooks are sent. */
export interface WebhookTarget {
  /** Absent when the platform has not configured an endpoint (or no longer exists). */
  endpoint?: string;
  /** `whsec_` secrets, current first (more than one during a rotation). */
  secrets: string[];
  /** The platform's environment (sandbox retry delays are scaled by SANDBOX_TIME_SCALE). */
  environment?: 'SANDBOX' | 'PRODUCTION';
  /** Why there is no endpoint, for the record. */
  missingReason?: string;
}

/**
 * A platform's webhook target (identity owns endpoints and secrets). An unknown platform has no
 * target; a failure to ask (identity down, deadline) rejects, so callers retry later without
 * counting an attempt.
 */
export interface WebhookTargetSource {
  get(platformId: string): Promise<WebhookTarget>;
}

/** Sends one signed webhook to a platform's endpoint. */
export interface WebhookSender {
  /**
   * POSTs `payload` (the exact JSON text) to `url`, signed with `secrets` (current first) under
   * `webhookId`. Never rejects: a refused target, a timeout or a non-2xx answer is a failed attempt.
   */
  send(url: string, secrets: readonly string[], webhookId: string, payload: string): Promise<AttemptResult>;
}

/** The dispatcher's own events (through its outbox, in the caller's transaction). */
export interface DispatcherEvents {
  /** The answer of a request–response webhook, relayed to the event's owner. */
  answered(em: EntityManager, platformId: string, answer: WebhookAnswer): Promise<void>;
  /** WEBHOOK_ENDPOINT.DISABLED; returns the event's id and time (the delivery log records it). */
  endpointDisabled(
    em: EntityManager,
    platformId: string,
    e: { url: string; reason: string; disabledAt: Date },
  ): Promise<{ eventId: string; occurredAt: string; data: Record<string, unknown> }>;
}
