import { CONTROL_CHARACTERS, DESCRIPTION_MAX_LENGTH, isCurrencyCode, isId, LONE_SURROGATE, MAX_AMOUNT, type FieldErrors, type IdType, type Environment } from '@sluice/core';

// The field rules every request of the service shares. Each adds its problem to the request's
// FieldErrors (core's one collector) under the field name the public API uses, so a request's
// parser reports every problem at once; none throws.

/** A `<Type>:<uuid>` id of `type`; absent or empty is "is required" unless `optional`. */
export function checkId(
  errors: FieldErrors,
  field: string,
  value: string | undefined,
  type: IdType,
  optional = false,
): void {
  if (value === undefined || value === '') {
    if (!optional) errors.add(field, 'is required');
  } else if (!isId(value, type)) errors.add(field, `must be a ${type} id (${type}:<uuid>)`);
}

/**
 * A known currency code and, with `supported`, one of those (asked only for a known code, so an
 * environment without a rate provider answers EXCHANGE_RATES_UNAVAILABLE only when it matters).
 * Absent is fine.
 */
export function checkCurrency(
  errors: FieldErrors,
  field: string,
  value: string | undefined,
  supported?: () => readonly string[],
): void {
  if (value === undefined) return;
  if (!isCurrencyCode(value)) {
    errors.add(field, `unknown currency "${value}"`);
    return;
  }
  const codes = supported?.();
  if (codes && !codes.includes(value)) errors.add(field, `${value} is not supported; supported: ${codes.join(', ')}`);
}

/** An amount in minor units from `min` (default 1) to MAX_AMOUNT. Absent is fine. */
export function checkAmount(errors: FieldErrors, field: string, value: bigint | undefined, min = 1n): void {
  if (value !== undefined && (value < min || value > MAX_AMOUNT)) {
    errors.add(field, `must be an integer from ${min} to ${MAX_AMOUNT}`);
  }
}

/** The idempotency key the gateway passes down (the Idempotency-Key, or one it made). */
export function checkRequestKey(errors: FieldErrors, value: string): void {
  if (!value || value.length > 255) errors.add('requestKey', 'must be 1 to 255 characters');
}

/** The platform's environment (the proto enum left unspecified is refused). */
export function checkEnvironment(errors: FieldErrors, value: Environment | undefined): void {
  if (!value) errors.add('environment', 'must be ENVIRONMENT_SANDBOX or ENVIRONMENT_PRODUCTION');
}

/** Text that reaches storage as it is: no control characters, valid Unicode. Absent is fine. */
export function checkText(errors: FieldErrors, field: string, value: string | undefined): void {
  if (value === undefined) return;
  if (CONTROL_CHARACTERS.test(value)) errors.add(field, 'must not contain control characters');
  else if (LONE_SURROGATE.test(value)) errors.add(field, 'must be valid Unicode (it has a lone surrogate)');
}

/** A free-text memo (descriptions, reasons): at most DESCRIPTION_MAX_LENGTH characters of text. */
export function checkMemo(errors: FieldErrors, field: string, value: string | undefined): void {
  if (value !== undefined && value.length > DESCRIPTION_MAX_LENGTH) {
    errors.add(field, `must be at most ${DESCRIPTION_MAX_LENGTH} characters`);
  } else checkText(errors, field, value);
}

/** A JSON object given as text; absent or empty is undefined, anything but an object is refused. */
export function jsonObject(
  errors: FieldErrors,
  field: string,
  json: string | undefined,
): Record<string, unknown> | undefined {
  if (!json) return undefined;
  try {
    const parsed: unknown = JSON.parse(json);
    if (isPlainObject(parsed)) return parsed;
  } catch {
    // refused below
  }
  errors.add(field, 'must be a JSON object');
  return undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
