/**
 * The incoming-payment approval protocol (the reference's `incoming-payment` webhook): when a
 * payment asks the platform, and what the platform's answer to INCOMING_PAYMENT.PENDING means.
 */

/** What payments needs to know of a platform to decide whether an incoming payment asks it. */
export interface ApprovalPolicy {
  /** The platform has a webhook endpoint (without one nobody can be asked: approved). */
  hasWebhookEndpoint: boolean;
  /** Per currency: amounts (minor units) below it are approved without asking. */
  thresholds: Readonly<Record<string, bigint>>;
}

/** True when an incoming payment of `amount` `currency` waits for the platform's answer. */
export function asksPlatform(policy: ApprovalPolicy, currency: string, amount: bigint): boolean {
  if (!policy.hasWebhookEndpoint) return false;
  const threshold = policy.thresholds[currency];
  return threshold === undefined || amount >= threshold;
}

/** A field the sender's side asked about the receiver (reference CounterpartyFieldDefinition). */
export interface RequestedField {
  name: string;
  mandatory: boolean;
}

/** The platform's answer as the dispatcher relayed it (INCOMING_PAYMENT.APPROVAL_ANSWERED). */
export interface RelayedAnswer {
  outcome: 'RESPONDED' | 'TIMED_OUT' | 'NO_RESPONSE' | 'NO_ENDPOINT';
  responseStatus?: number;
  responseBody?: string;
  error?: string;
}

/** What the answer decides. */
export type ApprovalVerdict =
  | { kind: 'APPROVE'; receiverCustomerInfo?: Record<string, unknown> }
  | { kind: 'REJECT'; reason: string }
  /** 202: the platform decides with POST /transactions/{id}/approve|reject within the window. */
  | { kind: 'DEFER' }
  | { kind: 'WEBHOOK_ERROR'; detail: string }
  | { kind: 'TIMED_OUT' };

const MAX_REASON = 200;

function jsonObject(text: string | undefined): Record<string, unknown> | undefined {
  if (!text) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const clip = (s: string) => (s.length > MAX_REASON ? s.slice(0, MAX_REASON) : s);

/**
 * What an answer means: any 2xx but 202 approves (its body must carry `receiverCustomerInfo` with
 * every mandatory requested field when fields were requested, else it is a webhook error); 403
 * rejects (the body's `reason`, if any); 422 asks for information the sender cannot give here, so
 * the payment is rejected with the `requiredFields`; 202 defers to the approve/reject endpoints;
 * no answer within the attempt's timeout is a time-out; every other answer (another status, a
 * refused target, a network error) is a webhook error. A platform without an endpoint has nobody
 * to ask: approved.
 */
export function judgeAnswer(answer: RelayedAnswer, requested: readonly RequestedField[]): ApprovalVerdict {
  if (answer.outcome === 'NO_ENDPOINT') return { kind: 'APPROVE' };
  if (answer.outcome === 'TIMED_OUT') return { kind: 'TIMED_OUT' };
  if (answer.outcome === 'NO_RESPONSE' || answer.responseStatus === undefined)
    return { kind: 'WEBHOOK_ERROR', detail: clip(answer.error ?? 'no response') };
  const status = answer.responseStatus;
  const body = jsonObject(answer.responseBody);
  if (status === 202) return { kind: 'DEFER' };
  if (status >= 200 && status < 300) {
    const info = body?.receiverCustomerInfo;
    const infoObject =
      info && typeof info === 'object' && !Array.isArray(info)
        ? (info as Record<string, unknown>)
        : undefined;
    const missing = requested
      .filter((f) => f.mandatory && (infoObject?.[f.name] ?? null) === null)
      .map((f) => f.name);
    if (missing.length)
      return { kind: 'WEBHOOK_ERROR', detail: `approved without receiverCustomerInfo ${missing.join(', ')}` };
    return infoObject && requested.length
      ? { kind: 'APPROVE', receiverCustomerInfo: infoObject }
      : { kind: 'APPROVE' };
  }
  if (status === 403) {
    const reason =
      typeof body?.reason === 'string' && body.reason.trim() ? body.reason.trim() : 'REJECTED_BY_PLATFORM';
    return { kind: 'REJECT', reason: clip(reason) };
  }
  if (status === 422) {
    const fields = Array.isArray(body?.requiredFields)
      ? body.requiredFields.filter((f): f is string => typeof f === 'string')
      : [];
    return {
      kind: 'REJECT',
      reason: clip(`COUNTERPARTY_INFORMATION_REQUIRED${fields.length ? `: ${fields.join(', ')}` : ''}`),
    };
  }
  return { kind: 'WEBHOOK_ERROR', detail: `the approval webhook was answered HTTP ${status}` };
}
