import { CONTROL_CHARACTERS, FieldErrors, isId, type IdType } from '@sluice/core';
import { isCountryCode } from './countries.js';

/**
 * The field rules identity's requests share, each adding its problem to core's
 * `FieldErrors` under the field name the public API uses, so one INVALID_INPUT
 * names every bad field.
 */

/** An id field of a request: its name, its value and the type of id it must be. */
export type IdField = readonly [field: string, value: string, type: IdType];

/** Checks the id fields of a request (`Type:<uuid>`); INVALID_INPUT naming each bad one. */
export function validIds(...fields: IdField[]): void {
  const errors = new FieldErrors();
  for (const [field, value, type] of fields) {
    if (!isId(value, type)) errors.add(field, `must be a ${type} id (${type}:<uuid>)`);
  }
  errors.throwIfAny();
}

/**
 * Checks a free-text field: non-blank, at most `max` characters, no control
 * characters. Returns the value when valid.
 */
export function text(
  p: FieldErrors,
  field: string,
  value: string | undefined,
  max: number,
): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') {
    p.add(field, 'must not be blank');
    return undefined;
  }
  if (value.length > max) {
    p.add(field, `must be at most ${max} characters`);
    return undefined;
  }
  if (CONTROL_CHARACTERS.test(value)) {
    p.add(field, 'must not contain control characters');
    return undefined;
  }
  return value;
}

export function country(p: FieldErrors, field: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!isCountryCode(value)) {
    p.add(field, 'must be an ISO 3166-1 alpha-2 country code (e.g. US)');
    return undefined;
  }
  return value;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date `YYYY-MM-DD` between 1900-01-01 and `today` (inclusive). */
export function pastDate(
  p: FieldErrors,
  field: string,
  value: string | undefined,
  today: Date,
): string | undefined {
  if (value === undefined) return undefined;
  const m = DATE_RE.exec(value);
  const d = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
  if (!m || !d || d.toISOString().slice(0, 10) !== value) {
    p.add(field, 'must be a calendar date YYYY-MM-DD');
    return undefined;
  }
  if (value < '1900-01-01') {
    p.add(field, 'must not be before 1900-01-01');
    return undefined;
  }
  if (value > today.toISOString().slice(0, 10)) {
    p.add(field, 'must not be in the future');
    return undefined;
  }
  return value;
}

// Practical address check (RFC 5321 lengths, one @, a dotted domain); mailbox
// existence is the platform's concern.
const EMAIL_RE =
  /^[^\s@"(),:;<>[\\\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function email(p: FieldErrors, field: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.length > 254 || !EMAIL_RE.test(value) || value.split('@')[0]!.length > 64) {
    p.add(field, 'must be an email address');
    return undefined;
  }
  return value;
}

/**
 * An absolute http(s) URL without credentials. `allowHttp` admits plain http
 * (webhook endpoints may be http; OIDC and passkey settings must be https
 * except on localhost).
 */
export function url(
  p: FieldErrors,
  field: string,
  value: string | undefined,
  opts: { allowHttp: boolean; max?: number },
): URL | undefined {
  if (value === undefined) return undefined;
  let u: URL;
  if (/\s/.test(value)) {
    p.add(field, 'must not contain whitespace');
    return undefined;
  }
  try {
    u = new URL(value);
  } catch {
    p.add(field, 'must be an absolute URL');
    return undefined;
  }
  if (value.length > (opts.max ?? 2048)) {
    p.add(field, `must be at most ${opts.max ?? 2048} characters`);
    return undefined;
  }
  const local = u.hostname === 'localhost' || u.hostname === '127.0.0.1' || u.hostname === '[::1]';
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && (opts.allowHttp || local))) {
    p.add(field, opts.allowHttp ? 'must be an http or https URL' : 'must be an https URL');
    return undefined;
  }
  if (u.username || u.password) {
    p.add(field, 'must not contain credentials');
    return undefined;
  }
  return u;
}

/** Reports duplicates in a list of values under `field[i]`; returns true when there were none. */
export function noDuplicates(p: FieldErrors, field: string, values: readonly string[]): boolean {
  const seen = new Set<string>();
  let ok = true;
  values.forEach((v, i) => {
    if (seen.has(v)) {
      p.add(`${field}[${i}]`, `duplicates ${v}`);
      ok = false;
    }
    seen.add(v);
  });
  return ok;
}

/** Checks an inclusive [after, before] range of timestamps. */
export function range(
  p: FieldErrors,
  afterField: string,
  after: Date | undefined,
  beforeField: string,
  before: Date | undefined,
): void {
  for (const [f, d] of [
    [afterField, after],
    [beforeField, before],
  ] as const) {
    if (d !== undefined && Number.isNaN(d.getTime())) p.add(f, 'must be a date-time');
  }
  if (after && before && after.getTime() > before.getTime())
    p.add(beforeField, `must not be earlier than ${afterField}`);
}
