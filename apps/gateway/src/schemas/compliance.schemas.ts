import { Type, type Static } from '@sinclair/typebox';
import {
  BeneficialOwner,
  CountryCode,
  Document,
  DocumentType,
  Id,
  Page,
  Verification,
  VerificationStatus,
  stringEnum,
} from '@sluice/api';
import { DOCUMENT_SIDES } from '@sluice/core';
import { PageQuery } from './common.js';

/** Request schemas of the compliance routes (the resources are `@sluice/api`'s). */

export const BeneficialOwnerParams = Type.Object(
  { beneficialOwnerId: Id('BeneficialOwner') },
  { additionalProperties: false },
);
export const BeneficialOwnerListQuery = Type.Object(
  { customerId: Id('Customer'), ...PageQuery },
  { additionalProperties: false },
);
export const BeneficialOwnerList = Page(BeneficialOwner, 'BeneficialOwnerListResponse');

export const DocumentParams = Type.Object({ documentId: Id('Document') }, { additionalProperties: false });
export const DocumentListQuery = Type.Object(
  {
    documentHolder: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Customer or BeneficialOwner id' }),
    ),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export const DocumentList = Page(Document, 'DocumentListResponse');

/** The metadata fields of a document upload (every multipart field but `file`). */
const documentFields = {
  documentType: DocumentType,
  country: { ...CountryCode, description: 'Country that issued the document (ISO 3166-1 alpha-2)' },
  side: Type.Optional(stringEnum(DOCUMENT_SIDES, { description: 'Which side of a two-sided document' })),
  documentNumber: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
};
const file = Type.String({
  format: 'binary',
  maxLength: 10_485_760,
  description:
    'The document: PDF, JPEG or PNG (decided by its content), at most 10 MiB (10,485,760 bytes). Send it as the last part, after the other fields.',
});

/** The multipart fields of POST /documents besides `file` (validated as they arrive). */
export const DocumentUploadFields = Type.Object(
  {
    ...documentFields,
    documentHolder: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'Customer or BeneficialOwner id',
    }),
  },
  { additionalProperties: false },
);
export type DocumentUploadFields = Static<typeof DocumentUploadFields>;
/** The multipart fields of PUT /documents/{id} besides `file` (the holder stays). */
export const DocumentReplaceFields = Type.Object(documentFields, { additionalProperties: false });

/** The multipart bodies as the OpenAPI document shows them. */
export const DocumentUploadRequest = Type.Object(
  { file, ...DocumentUploadFields.properties },
  { $id: 'DocumentUploadRequest', additionalProperties: false },
);
export const DocumentReplaceRequest = Type.Object(
  { file, ...documentFields },
  { $id: 'DocumentReplaceRequest', additionalProperties: false },
);

export const VerificationRequest = Type.Object(
  { customerId: Id('Customer') },
  { $id: 'VerificationRequest', additionalProperties: false },
);
export const VerificationParams = Type.Object(
  {
    verificationId: Type.String({
      pattern: '^Verification:[0-9a-fA-F-]{36}$',
      description: 'Verification id',
    }),
  },
  { additionalProperties: false },
);
export const VerificationListQuery = Type.Object(
  {
    customerId: Type.Optional(Id('Customer')),
    verificationStatus: Type.Optional(VerificationStatus),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export const VerificationList = Page(Verification, 'VerificationListResponse');

export const KycLinkCreateRequest = Type.Object(
  {
    redirectUri: Type.Optional(
      Type.String({
        format: 'uri',
        maxLength: 2048,
        description:
          'Where the customer is sent after the hosted flow (https://, or http:// for local development)',
      }),
    ),
  },
  { $id: 'KycLinkCreateRequest', additionalProperties: false },
);
export const KycLinkResponse = Type.Object(
  {
    kycUrl: Type.String({ description: 'Hosted single-use URL (sandbox: a stub page)' }),
    expiresAt: Type.String({ format: 'date-time' }),
    provider: stringEnum(['SUMSUB'] as const),
    token: Type.Optional(Type.String({ description: 'Provider token for an embedded SDK flow' })),
  },
  { $id: 'KycLinkResponse' },
);
