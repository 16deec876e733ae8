import { EVENT_DOMAINS, type EventDomain } from '@sluice/api';

/**
 * The event envelope every service publishes (JSON, UTF-8):
 *
 *   { id: "Event:<uuidv7>", type: "INTERNAL_ACCOUNT.BALANCE_UPDATED",
 *     occurredAt: ISO-8601, platformId: "Platform:<uuid>", requestId?: string,
 *     data: {...} }
 *
 * Subjects: `<prefix>.<domain>.<type lowercased>`, e.g.
 * `sluice.accounts.internal_account.balance_updated`. One stream per domain,
 * `<PREFIX>_<DOMAIN>` capturing `<prefix>.<domain>.>`.
 */
export interface EventEnvelope<D = Record<string, unknown>> {
  id: string;
  type: string;
  occurredAt: string;
  platformId: string;
  requestId?: string;
  data: D;
}

/** Domains that publish events (the owners of the catalogue, `@sluice/api`); each has its own stream. */
export const DOMAINS = EVENT_DOMAINS;
export type Domain = EventDomain;

export function subjectFor(prefix: string, domain: Domain, type: string): string {
  return `${prefix}.${domain}.${type.toLowerCase().replace(/[^a-z0-9_.]/g, '_')}`;
}

export function streamName(prefix: string, domain: Domain): string {
  return `${prefix}_${domain}`.toUpperCase().replace(/[^A-Z0-9_-]/g, '_');
}

/** JSON with bigints as numbers when exact, else as decimal strings. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => {
    if (typeof v === 'bigint') {
      return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v.toString();
    }
    return v;
  });
}
