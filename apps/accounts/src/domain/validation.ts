import { invalidInput, isCurrencyCode, isId, MAX_AMOUNT, type FieldError } from '@sluice/core';
import { ENTRY_ID_PATTERN } from './ledger.js';
import type { Environment } from './internal-account.js';

/**
 * Request checks shared by the RPC handlers. Field names are the public API's,
 * since these errors reach REST callers unchanged.
 */

/** Collects field errors and throws one INVALID_INPUT naming all of them. */
export class Checks {
  private readonly errors: FieldError[] = [];

  add(field: string, message: string): this {
    this.errors.push({ field, message });
    return this;
  }

  id(field: string, value: unknown, type: 'Platform' | 'Customer' | 'InternalAccount' | 'ExternalAccount'): this {
    if (value === undefined || value === null || value === '') return this.add(field, 'is required');
    if (!isId(value, type)) return this.add(field, `must be a ${type} id (${type}:<uuid>)`);
    return this;
  }

  optionalId(field: string, value: unknown, type: 'Customer' | 'InternalAccount'): this {
    return value === undefined || value === null || value === '' ? this : this.id(field, value, type);
  }

  currency(field: string, value: unknown): this {
    if (value !== undefined && value !== null && value !== '' && !isCurrencyCode(value))
      this.add(field, `unknown currency ${JSON.stringify(value)}`);
    return this;
  }

  environment(field: string, value: Environment | undefined): this {
    if (value !== 'SANDBOX' && value !== 'PRODUCTION') this.add(field, 'must be SANDBOX or PRODUCTION');
    return this;
  }

  /** A positive amount of at most MAX_AMOUNT (9000000000000000). */
  amount(field: string, value: bigint | undefined): this {
    if (value === undefined) return this.add(field, 'is required');
    if (value <= 0n) return this.add(field, 'must be greater than 0');
    if (value > MAX_AMOUNT) return this.add(field, `must be at most ${MAX_AMOUNT}`);
    return this;
  }

  entryId(field: string, value: string | undefined): this {
    if (value !== undefined && value !== '' && !ENTRY_ID_PATTERN.test(value))
      this.add(field, 'must be 1 to 200 characters of A-Z, a-z, 0-9, ":", ".", "_", "-"');
    return this;
  }

  done(): void {
    if (this.errors.length) throw invalidInput(this.errors);
  }
}

export function checks(): Checks {
  return new Checks();
}
