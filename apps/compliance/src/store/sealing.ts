import { openValue, sealValue, type MasterKeyring, type SealedValueScheme } from '@sluice/crypto';
import type { PersonalInfo } from '../domain/beneficial-owner.js';

/**
 * Compliance's personal data at rest, sealed with the envelope kit of `@sluice/crypto` under
 * compliance's one master keyring (DOCUMENT_MASTER_KEY, `KEYRING_NAMES`), which wraps the
 * documents' data keys too: a beneficial owner's personal info (names, birth date, nationality,
 * email, phone, address, ID type and number, country of issuance) in
 * `beneficial_owners.personal_data`, bound to the owner id; a document's file name and document
 * number in `documents.sealed_details`, bound to the document id; the screened subject of a
 * verification (a person's full name or a business's registration number) in
 * `verifications.sealed_subject`, bound to the verification id. No filter of the API is on these
 * fields, so no blind index is needed. Rows written before sealing keep their plaintext columns
 * and are read as they are until `main.ts rewrap` seals them.
 */
export const BENEFICIAL_OWNER_SCHEME: SealedValueScheme = {
  prefix: 'cbo1',
  context: 'sluice:compliance-beneficial-owner:v1',
  field: 'personal-info',
};

export const DOCUMENT_DETAILS_SCHEME: SealedValueScheme = {
  prefix: 'cdd1',
  context: 'sluice:compliance-document-details:v1',
  field: 'details',
};

export const VERIFICATION_SUBJECT_SCHEME: SealedValueScheme = {
  prefix: 'cvs1',
  context: 'sluice:compliance-verification-subject:v1',
  field: 'subject',
};

export function sealPersonalInfo(keyring: MasterKeyring, ownerId: string, info: PersonalInfo): string {
  return sealValue(keyring, BENEFICIAL_OWNER_SCHEME, ownerId, JSON.stringify(info));
}

export function openPersonalInfo(keyring: MasterKeyring, ownerId: string, sealed: string): PersonalInfo {
  return JSON.parse(openValue(keyring, BENEFICIAL_OWNER_SCHEME, ownerId, sealed)) as PersonalInfo;
}

/** What is sealed of a document's metadata (the rest is filtered on or says nothing of a person). */
export interface DocumentDetails {
  fileName: string;
  documentNumber?: string;
}

export function sealDocumentDetails(keyring: MasterKeyring, documentId: string, d: DocumentDetails): string {
  const details: DocumentDetails = {
    fileName: d.fileName,
    ...(d.documentNumber !== undefined ? { documentNumber: d.documentNumber } : {}),
  };
  return sealValue(keyring, DOCUMENT_DETAILS_SCHEME, documentId, JSON.stringify(details));
}

export function openDocumentDetails(keyring: MasterKeyring, documentId: string, sealed: string): DocumentDetails {
  return JSON.parse(openValue(keyring, DOCUMENT_DETAILS_SCHEME, documentId, sealed)) as DocumentDetails;
}

export function sealSubject(keyring: MasterKeyring, verificationId: string, subject: string): string {
  return sealValue(keyring, VERIFICATION_SUBJECT_SCHEME, verificationId, subject);
}

export function openSubject(keyring: MasterKeyring, verificationId: string, sealed: string): string {
  return openValue(keyring, VERIFICATION_SUBJECT_SCHEME, verificationId, sealed);
}
