import { FieldErrors, isLoopbackHost } from '@sluice/core';
/** The field rules identity shares with other services live in core (`libs/core/src/fields.ts`). */
export { validIds, text, country, pastDate, email, noDuplicates, type IdField } from '@sluice/core';

/**
 * The field rules identity's requests share, each adding its problem to core's
 * `FieldErrors` under the field name the public API uses, so one INVALID_INPUT
 * names every bad field.
 */

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
  const local = isLoopbackHost(u.hostname);
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
