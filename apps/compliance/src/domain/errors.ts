import { defineErrors } from '@sluice/core';

/**
 * The public error codes of the compliance service and the gRPC status each maps to. Bad input
 * is `invalidInput([{field, message}])` (INVALID_INPUT) besides these.
 */
export const COMPLIANCE_ERRORS = {
  CUSTOMER_NOT_FOUND: 'NOT_FOUND',
  BENEFICIAL_OWNER_NOT_FOUND: 'NOT_FOUND',
  DOCUMENT_NOT_FOUND: 'NOT_FOUND',
  /** The documentHolder is no customer or beneficial owner of the platform. */
  DOCUMENT_HOLDER_NOT_FOUND: 'NOT_FOUND',
  VERIFICATION_NOT_FOUND: 'NOT_FOUND',
  /** A file over MAX_DOCUMENT_BYTES (the gateway answers 413 itself before forwarding that byte). */
  PAYLOAD_TOO_LARGE: 'INVALID_ARGUMENT',
  /** A document of a customer whose verification is under way cannot be deleted (REST 409). */
  DOCUMENT_IN_VERIFICATION: 'ABORTED',
  /**
   * An upload still streaming after half of DOCUMENT_UPLOAD_ABANDON_AFTER_SECONDS, or whose blob the
   * orphan sweeper took: nothing is stored; send it again (the gateway's uploads end within 2 minutes).
   */
  DOCUMENT_UPLOAD_EXPIRED: 'ABORTED',
  /** A production platform without kycLinkUrlTemplate (identity's platform config) gets no KYC link. */
  KYC_LINK_NOT_CONFIGURED: 'FAILED_PRECONDITION',
} as const;

export const fail = defineErrors(COMPLIANCE_ERRORS);

export const customerNotFound = () => fail('CUSTOMER_NOT_FOUND', 'Customer not found');
export const beneficialOwnerNotFound = () => fail('BENEFICIAL_OWNER_NOT_FOUND', 'Beneficial owner not found');
export const documentNotFound = () => fail('DOCUMENT_NOT_FOUND', 'Document not found');
export const uploadExpired = () =>
  fail(
    'DOCUMENT_UPLOAD_EXPIRED',
    'The upload took too long (or was abandoned); nothing was stored: send the file again',
  );
export const verificationNotFound = () => fail('VERIFICATION_NOT_FOUND', 'Verification not found');
