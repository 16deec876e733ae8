import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex } from '@noble/hashes/utils';

/** Actions that use the signed-retry pattern (the `action` member of `payloadToSign`). */
export const SIGNED_ACTIONS = [
  'ADD_CREDENTIAL',
  'UPDATE_CREDENTIAL',
  'REVOKE_CREDENTIAL',
  'REVOKE_SESSION',
  'EXPORT_WALLET',
  'UPDATE_INTERNAL_ACCOUNT',
  'EXECUTE_QUOTE',
  'REFRESH_SESSION',
] as const;
export type SignedAction = (typeof SIGNED_ACTIONS)[number];

/** True for a name of `SIGNED_ACTIONS`. */
function isSignedAction(value: unknown): value is SignedAction {
  return SIGNED_ACTIONS.some((a) => a === value);
}

/** Value of the `kind` member: domain separation, so a stamp over a payloadToSign cannot be replayed as anything else. */
export const SIGNED_REQUEST_KIND = 'SLUICE_SIGNED_REQUEST_V1';

/**
 * Canonical JSON (RFC 8785 / JCS for JSON data): object members sorted by key in UTF-16
 * code-unit order, no whitespace, strings and numbers serialised as ECMAScript
 * `JSON.stringify` does. Members whose value is `undefined` are omitted. Throws TypeError
 * for values JSON cannot represent (non-finite numbers, bigint, functions, symbols,
 * `undefined` in arrays, non-plain objects such as Date or Map).
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('canonicalJson: non-finite number');
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) {
        return `[${value
          .map((item) => {
            if (item === undefined) throw new TypeError('canonicalJson: undefined in array');
            return canonicalJson(item);
          })
          .join(',')}]`;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null)
        throw new TypeError('canonicalJson: only plain objects are supported');
      const record = value as Record<string, unknown>;
      const members = Object.keys(record)
        .filter((k) => record[k] !== undefined)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`);
      return `{${members.join(',')}}`;
    }
    default:
      throw new TypeError(`canonicalJson: unsupported type ${typeof value}`);
  }
}

/** Lowercase hex SHA-256 of the UTF-8 canonical JSON of a request body; an absent body (`undefined`) hashes as `{}`. */
export function bodyHash(body: unknown): string {
  return bytesToHex(sha256(new TextEncoder().encode(canonicalJson(body === undefined ? {} : body))));
}

export interface SignedRequestInput {
  requestId: string;
  action: SignedAction;
  /** The internal account (embedded wallet) whose session must sign. */
  accountId: string;
  /** The request body the challenge is issued for (hashed, not embedded). */
  body: unknown;
  issuedAt: Date;
  expiresAt: Date;
}

export interface SignedRequestPayload {
  accountId: string;
  action: SignedAction;
  bodySha256: string;
  /** ISO-8601 UTC with milliseconds (`Date.prototype.toISOString`). */
  expiresAt: string;
  issuedAt: string;
  kind: typeof SIGNED_REQUEST_KIND;
  requestId: string;
}

function assertDate(d: Date, name: string): void {
  if (!(d instanceof Date) || Number.isNaN(d.getTime()))
    throw new TypeError(`buildPayloadToSign: ${name} must be a valid Date`);
}

/**
 * Build `payloadToSign`: the canonical JSON of
 * `{accountId, action, bodySha256, expiresAt, issuedAt, kind, requestId}` (that key order,
 * no whitespace). The client signs these exact bytes; the service keeps the string and
 * compares the retry's `bodyHash` with `bodySha256`.
 */
export function buildPayloadToSign(input: SignedRequestInput): string {
  if (typeof input.requestId !== 'string' || input.requestId.length === 0)
    throw new TypeError('buildPayloadToSign: requestId is required');
  if (typeof input.accountId !== 'string' || input.accountId.length === 0)
    throw new TypeError('buildPayloadToSign: accountId is required');
  if (!isSignedAction(input.action))
    throw new TypeError(`buildPayloadToSign: unknown action ${String(input.action)}`);
  assertDate(input.issuedAt, 'issuedAt');
  assertDate(input.expiresAt, 'expiresAt');
  if (input.expiresAt.getTime() <= input.issuedAt.getTime())
    throw new TypeError('buildPayloadToSign: expiresAt must be after issuedAt');
  const payload: SignedRequestPayload = {
    accountId: input.accountId,
    action: input.action,
    bodySha256: bodyHash(input.body),
    expiresAt: input.expiresAt.toISOString(),
    issuedAt: input.issuedAt.toISOString(),
    kind: SIGNED_REQUEST_KIND,
    requestId: input.requestId,
  };
  return canonicalJson(payload);
}

/**
 * Parse a payload built by `buildPayloadToSign` (e.g. one read back from storage).
 * Returns null unless it is exactly canonical and every member is well-formed.
 */
export function parsePayloadToSign(payload: string): SignedRequestPayload | null {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const members: Partial<Record<string, unknown>> = Object.fromEntries(Object.entries(value));
  if (Object.keys(members).length !== 7) return null;
  const { accountId, action, bodySha256, expiresAt, issuedAt, kind, requestId } = members;
  if (typeof accountId !== 'string' || typeof requestId !== 'string') return null;
  if (kind !== SIGNED_REQUEST_KIND || !isSignedAction(action)) return null;
  if (typeof bodySha256 !== 'string' || !/^[0-9a-f]{64}$/.test(bodySha256)) return null;
  if (!isIsoInstant(issuedAt) || !isIsoInstant(expiresAt)) return null;
  const parsed: SignedRequestPayload = { accountId, action, bodySha256, expiresAt, issuedAt, kind, requestId };
  return canonicalJson(parsed) === payload ? parsed : null;
}

/** An instant exactly as `Date.prototype.toISOString` writes it. */
function isIsoInstant(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const d = new Date(value);
  return !Number.isNaN(d.getTime()) && d.toISOString() === value;
}
