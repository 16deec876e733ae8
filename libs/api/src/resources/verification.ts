import { Type, type Static } from '@sinclair/typebox';
import type { compliance } from '@sluice/contracts';
import { VERIFICATION_ERROR_TYPES, VERIFICATION_PROCESS_STATUSES } from '@sluice/core';
import { Timestamp, bare, iso, stringEnum } from '../schema.js';
import { DocumentType } from './document.js';

/** The public Verification (reference `Verification`), one schema and one mapper. */

export const VerificationStatus = stringEnum(VERIFICATION_PROCESS_STATUSES, {
  $id: 'VerificationStatus',
  description: 'Current status of the KYC/KYB verification',
});

export const VerificationError = Type.Object(
  {
    resourceId: Type.String({ description: 'Customer, BeneficialOwner or Document with the issue' }),
    type: stringEnum(VERIFICATION_ERROR_TYPES, { $id: 'VerificationErrorType' }),
    field: Type.Optional(
      Type.String({ description: 'Dot path of the field (MISSING_FIELD, INVALID_FIELD)' }),
    ),
    acceptedDocumentTypes: Type.Optional(Type.Array(DocumentType)),
    reason: Type.String(),
  },
  { $id: 'VerificationError' },
);

export const Verification = Type.Object(
  {
    id: Type.String({ description: 'Verification id (`Verification:<uuid>`)' }),
    customerId: Type.String(),
    verificationStatus: VerificationStatus,
    errors: Type.Array(VerificationError),
    createdAt: Timestamp,
    updatedAt: Type.Optional(Timestamp),
  },
  { $id: 'Verification' },
);
export type Verification = Static<typeof Verification>;

/** The public Verification of a compliance.v1 Verification. */
export function verificationJson(v: compliance.Verification): Verification {
  return {
    id: v.id,
    customerId: v.customerId,
    verificationStatus: bare(
      v.verificationStatus,
      'VERIFICATION_STATUS_',
    ) as Verification['verificationStatus'],
    errors: v.errors.map((e) => ({
      resourceId: e.resourceId,
      type: e.type as Verification['errors'][number]['type'],
      ...(e.field !== undefined ? { field: e.field } : {}),
      ...(e.acceptedDocumentTypes.length
        ? {
            acceptedDocumentTypes: e.acceptedDocumentTypes.map(
              (t) => bare(t, 'DOCUMENT_TYPE_') as (typeof DocumentType)['static'],
            ),
          }
        : {}),
      reason: e.reason,
    })),
    createdAt: iso(v.createdAt)!,
    ...(v.updatedAt ? { updatedAt: iso(v.updatedAt)! } : {}),
  };
}
