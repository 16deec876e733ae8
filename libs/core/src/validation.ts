import { invalidInput, type FieldError } from './errors.js';

/**
 * The one field-error collector: a request's checks add every problem they find
 * (field names as the public API spells them), and `throwIfAny` throws one
 * INVALID_INPUT naming all of them, so a caller learns every problem at once.
 */
export class FieldErrors {
  readonly errors: FieldError[] = [];

  add(field: string, message: string): this {
    this.errors.push({ field, message });
    return this;
  }

  /** Adds problems found by a field-specific parser. */
  addAll(errors: readonly FieldError[]): this {
    this.errors.push(...errors);
    return this;
  }

  get any(): boolean {
    return this.errors.length > 0;
  }

  /** Throws INVALID_INPUT listing every problem, if any. */
  throwIfAny(): void {
    if (this.errors.length) throw invalidInput(this.errors);
  }
}

/** Control characters (C0, DEL, C1): refused in every free-text value. */
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/** A lone UTF-16 surrogate: text that is not valid Unicode (refused rather than stored as U+FFFD). */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Longest free-text memo (transaction and quote descriptions, rejection reasons). */
export const DESCRIPTION_MAX_LENGTH = 1000;

/** Longest accepted Idempotency-Key (request key). */
export const MAX_REQUEST_KEY_LENGTH = 255;

/**
 * The one rule of an Idempotency-Key, checked by the gateway on the header and by every service that
 * takes it as a request key: 1 to 255 visible ASCII characters (it travels in a header and is
 * compared byte for byte).
 */
export function isRequestKey(value: string): boolean {
  return value.length >= 1 && value.length <= MAX_REQUEST_KEY_LENGTH && /^[\x21-\x7e]+$/.test(value);
}

const HOSTNAME_RE = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** The loopback host names a URL may have (`URL.hostname`), where plain http is allowed locally. */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** True for a loopback `URL.hostname`: localhost, 127.0.0.1 or [::1]. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname);
}

/** A DNS name of at least two labels, lower case, whose last label is not all digits. */
export function isHostname(value: string): boolean {
  return HOSTNAME_RE.test(value) && /[a-z]/.test(value.slice(value.lastIndexOf('.') + 1));
}
