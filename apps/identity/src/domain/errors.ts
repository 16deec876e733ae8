import { defineErrors } from '@sluice/core';

/**
 * The public error codes of the identity service and the gRPC status each maps
 * to. Bad input is `invalidInput([{field, message}])` (INVALID_INPUT) besides these.
 */
export const IDENTITY_ERRORS = {
  /** Unknown token id, wrong secret or revoked token: one answer for all. */
  UNAUTHORIZED: 'UNAUTHENTICATED',
  PLATFORM_NOT_FOUND: 'NOT_FOUND',
  TOKEN_NOT_FOUND: 'NOT_FOUND',
  CUSTOMER_NOT_FOUND: 'NOT_FOUND',
  /** platformCustomerId already used by a live customer of the platform. */
  CUSTOMER_ALREADY_EXISTS: 'ALREADY_EXISTS',
  /** umaAddress already used by a live customer of the platform. */
  UMA_ADDRESS_EXISTS: 'ALREADY_EXISTS',
  /** The customer was deleted (REST 410 in the reference API). */
  CUSTOMER_DELETED: 'FAILED_PRECONDITION',
  /** A platform must keep at least one live token. */
  CANNOT_DELETE_LAST_TOKEN: 'FAILED_PRECONDITION',
  /** Bootstrap credential clashes with what is stored (other secret, revoked, other environment). */
  CREDENTIAL_CONFLICT: 'FAILED_PRECONDITION',
  /** A production platform needs an umaDomain before UMA addresses can be generated. */
  UMA_DOMAIN_NOT_CONFIGURED: 'FAILED_PRECONDITION',
  /** Unknown code, or another platform's. */
  INVITATION_NOT_FOUND: 'NOT_FOUND',
  /** Claim or cancel of a claimed invitation (REST 400, as the reference). */
  INVITATION_ALREADY_CLAIMED: 'FAILED_PRECONDITION',
  /** Claim or cancel of a cancelled invitation (REST 400). */
  INVITATION_CANCELLED: 'FAILED_PRECONDITION',
  /** A production platform needs an umaDomain for invitation URLs (REST 400). */
  INVITATIONS_NOT_CONFIGURED: 'FAILED_PRECONDITION',
  /** Unknown bulk import job, or another platform's. */
  BULK_UPLOAD_JOB_NOT_FOUND: 'NOT_FOUND',
} as const;

export const fail = defineErrors(IDENTITY_ERRORS);

/** The one message of every authentication failure (never says which part was wrong). */
export const UNAUTHORIZED_MESSAGE = 'Invalid API credentials';

export const platformNotFound = () => fail('PLATFORM_NOT_FOUND', 'Platform not found');
export const tokenNotFound = () => fail('TOKEN_NOT_FOUND', 'Token not found');
export const customerNotFound = () => fail('CUSTOMER_NOT_FOUND', 'Customer not found');
export const invitationNotFound = () => fail('INVITATION_NOT_FOUND', 'Invitation not found');
export const bulkImportJobNotFound = () => fail('BULK_UPLOAD_JOB_NOT_FOUND', 'Bulk upload job not found');
