import type { Environment, PostalAddress, VERIFICATION_PROCESS_STATUSES } from '@sluice/core';
import type { BeneficialOwner, KycStatus } from './beneficial-owner.js';
import type { DocumentType } from './document.js';
import type { ScreeningOutcome } from './sandbox.js';

export type VerificationStatus = (typeof VERIFICATION_PROCESS_STATUSES)[number];

export type VerificationErrorType =
  | 'MISSING_FIELD'
  | 'MISSING_LEGAL_PRESENCE_DOCUMENT'
  | 'MISSING_PROOF_OF_ADDRESS_DOCUMENT'
  | 'MISSING_IDENTITY_DOCUMENT'
  | 'MISSING_BENEFICIAL_OWNER'
  | 'APPLICANT_REJECTED';

/** REST VerificationError: what keeps a verification from proceeding. */
export interface VerificationError {
  resourceId: string;
  type: VerificationErrorType;
  field?: string;
  acceptedDocumentTypes?: DocumentType[];
  reason: string;
}

export type CustomerType = 'INDIVIDUAL' | 'BUSINESS';

export interface Verification {
  id: string;
  platformId: string;
  customerId: string;
  customerType: CustomerType;
  environment: Environment;
  status: VerificationStatus;
  errors: VerificationError[];
  /** The magic value screened (registrationNumber of a business, fullName of an individual). */
  subject?: string;
  /** When the screening in progress is to be decided. */
  decisionDueAt?: Date;
  /**
   * The screening's decision, waiting for identity to confirm it applied the customer's status
   * (the verification shows it then: whoever sees it decided reads the customer's status too).
   */
  decidedStatus?: VerificationStatus;
  createdAt: Date;
  updatedAt: Date;
}

/** What compliance knows of a customer (from identity). */
export interface CustomerFacts {
  id: string;
  platformId: string;
  customerType: CustomerType;
  deleted: boolean;
  fullName?: string;
  birthDate?: string;
  nationality?: string;
  address?: PostalAddress;
  businessInfo?: {
    legalName?: string;
    registrationNumber?: string;
    country?: string;
    entityType?: string;
  };
  /** kycStatus of an individual, kybStatus of a business. */
  status: KycStatus;
}

/** Document categories of the reference's VerificationError table. */
export const IDENTITY_DOCUMENTS: DocumentType[] = ['PASSPORT', 'DRIVERS_LICENSE', 'NATIONAL_ID'];
export const LEGAL_PRESENCE_DOCUMENTS: DocumentType[] = [
  'CERTIFICATE_OF_INCORPORATION',
  'ARTICLES_OF_INCORPORATION',
  'ARTICLES_OF_ASSOCIATION',
  'STATE_REGISTRY_EXCERPT',
];
export const PROOF_OF_ADDRESS_DOCUMENTS: DocumentType[] = [
  'UTILITY_BILL',
  'RENT_OR_LEASE_AGREEMENT',
  'ELECTRICITY_BILL',
  'BANK_STATEMENT',
  'TAX_RETURN',
  'PROOF_OF_ADDRESS',
];

/** What the requirements look at: the customer, its beneficial owners and every document of either. */
export interface VerificationFile {
  customer: CustomerFacts;
  owners: Pick<BeneficialOwner, 'id' | 'kycStatus'>[];
  /** documentHolder and documentType of every document of the customer and its owners. */
  documents: { documentHolder: string; documentType: DocumentType }[];
}

function missingField(resourceId: string, field: string, reason: string): VerificationError {
  return { resourceId, type: 'MISSING_FIELD', field, reason };
}

function hasDocument(file: VerificationFile, holder: string, kinds: readonly DocumentType[]): boolean {
  return file.documents.some((d) => d.documentHolder === holder && kinds.includes(d.documentType));
}

/**
 * Everything a verification still needs, as VerificationErrors (empty: it can proceed).
 *
 * A BUSINESS (KYB) needs `businessInfo.legalName`, `.registrationNumber`, `.country`,
 * `.entityType` and an `address`; a legal-presence document and a proof of address; at least one
 * beneficial owner, each with an identity document and a KYC that was not REJECTED.
 * An INDIVIDUAL (KYC) needs `fullName`, `birthDate`, `nationality`, an `address` and an identity
 * document.
 */
export function verificationRequirements(file: VerificationFile): VerificationError[] {
  const c = file.customer;
  const errors: VerificationError[] = [];
  const needAddress = () => {
    if (!c.address) errors.push(missingField(c.id, 'customer.address', 'The customer address is required'));
  };
  if (c.customerType === 'BUSINESS') {
    const b = c.businessInfo ?? {};
    const fields: [keyof typeof b, string][] = [
      ['legalName', 'Legal name of the business is required'],
      ['registrationNumber', 'Registration number of the business is required'],
      ['country', 'Country of incorporation is required'],
      ['entityType', 'Legal entity type of the business is required'],
    ];
    for (const [k, reason] of fields)
      if (!b[k]) errors.push(missingField(c.id, `customer.businessInfo.${k}`, reason));
    needAddress();
    if (!hasDocument(file, c.id, LEGAL_PRESENCE_DOCUMENTS))
      errors.push({
        resourceId: c.id,
        type: 'MISSING_LEGAL_PRESENCE_DOCUMENT',
        acceptedDocumentTypes: LEGAL_PRESENCE_DOCUMENTS,
        reason: 'A document proving the legal presence of the business is required',
      });
    if (!hasDocument(file, c.id, PROOF_OF_ADDRESS_DOCUMENTS))
      errors.push({
        resourceId: c.id,
        type: 'MISSING_PROOF_OF_ADDRESS_DOCUMENT',
        acceptedDocumentTypes: PROOF_OF_ADDRESS_DOCUMENTS,
        reason: 'Proof of address document is required',
      });
    if (file.owners.length === 0)
      errors.push({
        resourceId: c.id,
        type: 'MISSING_BENEFICIAL_OWNER',
        reason: 'At least one beneficial owner is required (POST /beneficial-owners)',
      });
    for (const o of file.owners) {
      if (!hasDocument(file, o.id, IDENTITY_DOCUMENTS))
        errors.push({
          resourceId: o.id,
          type: 'MISSING_IDENTITY_DOCUMENT',
          acceptedDocumentTypes: IDENTITY_DOCUMENTS,
          reason: 'An identity document of the beneficial owner is required',
        });
      if (o.kycStatus === 'REJECTED')
        errors.push({
          resourceId: o.id,
          type: 'APPLICANT_REJECTED',
          reason: 'The KYC of this beneficial owner was rejected; correct its personal information',
        });
    }
  } else {
    if (!c.fullName) errors.push(missingField(c.id, 'customer.fullName', 'Full name is required'));
    if (!c.birthDate) errors.push(missingField(c.id, 'customer.birthDate', 'Date of birth is required'));
    if (!c.nationality) errors.push(missingField(c.id, 'customer.nationality', 'Nationality is required'));
    needAddress();
    if (!hasDocument(file, c.id, IDENTITY_DOCUMENTS))
      errors.push({
        resourceId: c.id,
        type: 'MISSING_IDENTITY_DOCUMENT',
        acceptedDocumentTypes: IDENTITY_DOCUMENTS,
        reason: 'An identity document is required',
      });
  }
  return errors;
}

/** The value the screening of a complete customer reads (its sandbox magic value). */
export function screeningSubject(c: CustomerFacts): string {
  return (c.customerType === 'BUSINESS' ? c.businessInfo?.registrationNumber : c.fullName) ?? '';
}

/** The verification status a screening outcome leads to. */
export function statusOfOutcome(outcome: ScreeningOutcome): VerificationStatus {
  if (outcome === 'APPROVED') return 'APPROVED';
  if (outcome === 'REJECTED') return 'REJECTED';
  return 'PENDING_MANUAL_REVIEW';
}

/**
 * The customer's kycStatus/kybStatus a verification status stands for (identity owns it):
 * a verification under way or in review is PENDING; RESOLVE_ERRORS changes nothing.
 */
export function customerStatusOf(status: VerificationStatus): KycStatus | undefined {
  switch (status) {
    case 'IN_PROGRESS':
    case 'PENDING_MANUAL_REVIEW':
    case 'READY_FOR_VERIFICATION':
      return 'PENDING';
    case 'APPROVED':
      return 'APPROVED';
    case 'REJECTED':
      return 'REJECTED';
    default:
      return undefined;
  }
}

/** A verification still open for re-submission (its errors can be resolved). */
export function isResubmittable(v: Verification): boolean {
  return v.status === 'RESOLVE_ERRORS';
}

/** A verification whose screening is under way (a new POST answers it rather than start another). */
export function isUnderWay(v: Verification): boolean {
  return v.status === 'IN_PROGRESS' || v.status === 'PENDING_MANUAL_REVIEW';
}
