import { DomainError, defineErrors } from '@sluice/core';

/**
 * Public error codes raised by the embedded-wallet crypto module. The service's
 * `domain/errors.ts` may re-export or merge this table; the codes are part of the API.
 */
export const cryptoErrorCodes = {
  INVALID_CLIENT_PUBLIC_KEY: 'INVALID_ARGUMENT',
  WALLET_SIGNATURE_MISSING: 'UNAUTHENTICATED',
  WALLET_SIGNATURE_MALFORMED: 'UNAUTHENTICATED',
  WALLET_SIGNATURE_INVALID: 'UNAUTHENTICATED',
} as const;

/** Raise one of the crypto module's public errors. */
export const cryptoFail = defineErrors(cryptoErrorCodes);

/** Name of the HTTP header carrying a wallet stamp. */
export const SIGNATURE_HEADER = 'Service-Wallet-Signature';

/** The `reason` the specification prescribes for a refused wallet signature. */
export const INVALID_SIGNATURE_REASON = 'Invalid Service-Wallet-Signature';

/** 400 INVALID_CLIENT_PUBLIC_KEY naming the field at fault (same `details.errors` shape as INVALID_INPUT). */
export function invalidClientPublicKey(field: string, message: string): DomainError {
  return cryptoFail('INVALID_CLIENT_PUBLIC_KEY', `${field}: ${message}`, { errors: [{ field, message }] });
}

/**
 * Failure of wallet key custody (unknown master key, tampered or corrupt envelope).
 * Deliberately not a DomainError: it is an operational fault, reported as INTERNAL
 * without detail to callers, and logged with its code by the service.
 */
export class CustodyError extends Error {
  constructor(
    readonly code:
      | 'CUSTODY_MASTER_KEY_UNKNOWN'
      | 'CUSTODY_DECRYPT_FAILED'
      | 'CUSTODY_MALFORMED'
      | 'CUSTODY_CONFIG_INVALID',
    message: string,
  ) {
    super(message);
    this.name = 'CustodyError';
  }
}
