import { expect } from 'vitest';
import { isDomainError, type DomainError } from '@sluice/core';

/** The DomainErrors identity raises, as tests read them: from the service over gRPC or from a domain function. */

/** Awaits a rejection and returns the DomainError the server raised. */
export { rejection } from '@sluice/testing';

/** The `{field, message}` fields of an INVALID_INPUT error. */
export function fieldsOf(e: DomainError): string[] {
  expect(e.code).toBe('INVALID_INPUT');
  expect(e.kind).toBe('INVALID_ARGUMENT');
  return fieldNames(e);
}

/** The field names of an error's `details.errors`. */
export function fieldNames(e: DomainError): string[] {
  return ((e.details?.errors ?? []) as { field: string }[]).map((x) => x.field);
}

/** The DomainError a call throws (fails the test when it throws none). */
export function errorOf(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    if (isDomainError(e)) return e;
    throw e;
  }
  throw new Error('expected an error');
}

/** The field names of the DomainError a call throws; [] when it throws none. */
export function fieldsThrownBy(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (isDomainError(e)) return fieldNames(e);
    throw e;
  }
  return [];
}
