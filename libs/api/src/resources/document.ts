import { Type, type Static } from '@sinclair/typebox';
import type { compliance } from '@sluice/contracts';
import { DOCUMENT_SIDES, DOCUMENT_TYPES } from '@sluice/core';
import { Timestamp, bare, iso, stringEnum } from '../schema.js';

/** The public Document (reference `Document`), one schema and one mapper. */

export const DocumentType = stringEnum(DOCUMENT_TYPES, {
  $id: 'DocumentType',
  description: 'Type of identity or business verification document',
});

export const Document = Type.Object(
  {
    id: Type.String({ description: 'Document id (`Document:<uuid>`)' }),
    documentHolder: Type.String({ description: 'Customer or BeneficialOwner id' }),
    documentType: DocumentType,
    side: Type.Optional(stringEnum(DOCUMENT_SIDES)),
    country: Type.String({ description: 'Country that issued the document (ISO 3166-1 alpha-2)' }),
    documentNumber: Type.Optional(Type.String()),
    fileName: Type.String({ description: 'Original file name of the uploaded document' }),
    createdAt: Timestamp,
    updatedAt: Type.Optional(Timestamp),
  },
  { $id: 'Document' },
);
export type Document = Static<typeof Document>;

/** The public Document of a compliance.v1 Document (content type, size and hash stay internal). */
export function documentJson(d: compliance.Document): Document {
  return {
    id: d.id,
    documentHolder: d.documentHolder,
    documentType: bare(d.documentType, 'DOCUMENT_TYPE_') as Document['documentType'],
    ...(d.side !== 'DOCUMENT_SIDE_UNSPECIFIED'
      ? { side: bare(d.side, 'DOCUMENT_SIDE_') as 'FRONT' | 'BACK' }
      : {}),
    country: d.country,
    ...(d.documentNumber !== undefined ? { documentNumber: d.documentNumber } : {}),
    fileName: d.fileName,
    createdAt: iso(d.createdAt)!,
    ...(d.updatedAt ? { updatedAt: iso(d.updatedAt)! } : {}),
  };
}
