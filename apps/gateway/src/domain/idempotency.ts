import { createHash } from 'node:crypto';
import { isRequestKey, MAX_REQUEST_KEY_LENGTH } from '@sluice/core';

/** Longest accepted Idempotency-Key. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = MAX_REQUEST_KEY_LENGTH;

/** Problem with a client-supplied key (the rule is `isRequestKey`), or undefined when it is acceptable. */
export function idempotencyKeyProblem(key: string): string | undefined {
  if (isRequestKey(key)) return undefined;
  if (key.length < 1 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    return `must have 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`;
  return 'must contain only visible ASCII characters';
}

/** JSON with object keys sorted at every level, so equal bodies hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** What identifies "the same request" for a key: method, path (with query) and body hash. */
export interface RequestFingerprint {
  method: string;
  path: string;
  bodyHash: string;
}

export function fingerprint(method: string, path: string, body: unknown): RequestFingerprint {
  return { method, path, bodyHash: createHash('sha256').update(canonicalJson(body)).digest('hex') };
}

/** A stored key as the store sees it. */
export interface IdempotencyRecord extends RequestFingerprint {
  state: 'IN_PROGRESS' | 'COMPLETED';
  ownerRequestId: string;
  responseStatus?: number;
  responseHeaders?: Record<string, string>;
  responseBody?: string;
}

/** Outcome of presenting a key. */
export type ClaimOutcome =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; headers: Record<string, string>; body: string }
  | { kind: 'mismatch'; reason: 'path' | 'body' }
  | { kind: 'in_progress' };

/** Decides what to do with a key that someone already holds (its live record). */
export function decide(existing: IdempotencyRecord, request: RequestFingerprint): ClaimOutcome {
  if (existing.method !== request.method || existing.path !== request.path)
    return { kind: 'mismatch', reason: 'path' };
  if (existing.bodyHash !== request.bodyHash) return { kind: 'mismatch', reason: 'body' };
  if (existing.state === 'IN_PROGRESS') return { kind: 'in_progress' };
  return {
    kind: 'replay',
    status: existing.responseStatus ?? 200,
    headers: existing.responseHeaders ?? {},
    body: existing.responseBody ?? '',
  };
}

/**
 * Whether a response is stored for replay. 5xx and 429 are transient: the claim
 * is released so the client can retry with the same key; so are a 202 signed-retry
 * challenge and a 401 (a wallet signature refused): nothing happened yet. Everything
 * else (2xx, and 4xx which would fail the same way again) is kept.
 */
export function isReplayable(status: number): boolean {
  // 202 is a signed-retry challenge: the operation has not happened yet, and the
  // client repeats the same request (often with the same key) carrying the
  // signature. Keeping the key would replay the challenge instead of running it.
  // 401 reaches this far only from a refused Service-Wallet-Signature (platform
  // credentials are checked before a key is claimed): nothing ran, and the client
  // must be able to ask for a fresh challenge and sign again under the same key.
  // 400 is invalid input, whichever layer found it (the schema before the handler, or
  // a service's own check of the same request): nothing ran, the client corrects the
  // request and retries under the same key, as with a schema refusal (which claims nothing).
  return status < 500 && status !== 429 && status !== 202 && status !== 401 && status !== 400;
}
