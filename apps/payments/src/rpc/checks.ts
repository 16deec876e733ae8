import { invalidInput, isCurrencyCode, isId, MAX_AMOUNT, type FieldError } from '@sluice/core';
import type { Environment } from '../app/receiver-lookups.service.js';

/**
 * Collects the field errors of one gRPC request and throws them together as
 * INVALID_INPUT (400 at the gateway), so a caller learns every problem at once.
 * The one request-validation helper of the payments handlers.
 */
export class Checks {
  readonly errors: FieldError[] = [];

  add(field: string, message: string): this {
    this.errors.push({ field, message });
    return this;
  }

  /** Adds `errors` found by a field-specific parser. */
  addAll(errors: readonly FieldError[]): this {
    this.errors.push(...errors);
    return this;
  }

  id(field: string, v: string | undefined, type: Parameters<typeof isId>[1], optional = false): this {
    if (v === undefined || v === '') return optional ? this : this.add(field, 'is required');
    return isId(v, type) ? this : this.add(field, `must be a ${type} id (${type}:<uuid>)`);
  }

  /** A known currency code; with `supportedOf`, also one of those. Absent is fine. */
  currency(field: string, v: string | undefined, supportedOf?: () => readonly string[]): this {
    if (v === undefined) return this;
    if (!isCurrencyCode(v)) return this.add(field, `unknown currency "${v}"`);
    const supported = supportedOf?.();
    if (supported && !supported.includes(v))
      return this.add(field, `${v} is not supported; supported: ${supported.join(', ')}`);
    return this;
  }

  /** An amount in minor units from 1 to MAX_AMOUNT. Absent is fine. */
  amount(field: string, v: bigint | undefined): this {
    if (v === undefined || (v >= 1n && v <= MAX_AMOUNT)) return this;
    return this.add(field, `must be an integer from 1 to ${MAX_AMOUNT}`);
  }

  /** The idempotency key the gateway passes down (the Idempotency-Key, or one it made). */
  requestKey(v: string | undefined): this {
    return v && v.length <= 255 ? this : this.add('requestKey', 'must be 1 to 255 characters');
  }

  env(e: Environment | undefined): this {
    return e ? this : this.add('environment', 'must be ENVIRONMENT_SANDBOX or ENVIRONMENT_PRODUCTION');
  }

  done(): void {
    if (this.errors.length) throw invalidInput(this.errors);
  }
}
