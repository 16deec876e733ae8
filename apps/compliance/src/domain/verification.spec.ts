import { describe, expect, it } from 'vitest';
import { sandboxOutcome } from './sandbox.js';
import {
  customerStatusOf,
  screeningSubject,
  statusOfOutcome,
  verificationRequirements,
  type CustomerFacts,
  type VerificationFile,
} from './verification.js';

const business: CustomerFacts = {
  id: 'Customer:B',
  platformId: 'Platform:1',
  customerType: 'BUSINESS',
  deleted: false,
  status: 'UNVERIFIED',
  address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
  businessInfo: { legalName: 'Acme', registrationNumber: 'REG-777', country: 'US', entityType: 'LLC' },
};
const person: CustomerFacts = {
  id: 'Customer:P',
  platformId: 'Platform:1',
  customerType: 'INDIVIDUAL',
  deleted: false,
  status: 'UNVERIFIED',
  fullName: 'Ana Lopez',
  birthDate: '1990-01-01',
  nationality: 'MX',
  address: { line1: '1 Calle', postalCode: '01000', country: 'MX' },
};

const types = (f: VerificationFile) =>
  verificationRequirements(f).map((e) => `${e.resourceId} ${e.type} ${e.field ?? ''}`.trim());

describe('sandbox outcome table', () => {
  it('reads the last 3 characters: 001 PENDING, 002 REJECTED, other APPROVED', () => {
    expect(sandboxOutcome('Smith001')).toBe('PENDING');
    expect(sandboxOutcome('REG-002')).toBe('REJECTED');
    expect(sandboxOutcome('REG-003')).toBe('APPROVED');
    expect(sandboxOutcome('0012')).toBe('APPROVED');
    expect(sandboxOutcome('Smith')).toBe('APPROVED');
    expect(statusOfOutcome('PENDING')).toBe('PENDING_MANUAL_REVIEW');
    expect(statusOfOutcome('REJECTED')).toBe('REJECTED');
    expect(statusOfOutcome('APPROVED')).toBe('APPROVED');
  });

  it('screens a business by registrationNumber and an individual by fullName', () => {
    expect(screeningSubject(business)).toBe('REG-777');
    expect(screeningSubject(person)).toBe('Ana Lopez');
  });

  it('maps verification statuses to the customer status identity keeps', () => {
    expect(customerStatusOf('RESOLVE_ERRORS')).toBeUndefined();
    expect(customerStatusOf('IN_PROGRESS')).toBe('PENDING');
    expect(customerStatusOf('PENDING_MANUAL_REVIEW')).toBe('PENDING');
    expect(customerStatusOf('APPROVED')).toBe('APPROVED');
    expect(customerStatusOf('REJECTED')).toBe('REJECTED');
  });
});

describe('verification requirements', () => {
  it('lists everything a bare business lacks', () => {
    const bare: CustomerFacts = { ...business, address: undefined, businessInfo: { legalName: 'Acme' } };
    expect(types({ customer: bare, owners: [], documents: [] })).toEqual([
      'Customer:B MISSING_FIELD customer.businessInfo.registrationNumber',
      'Customer:B MISSING_FIELD customer.businessInfo.country',
      'Customer:B MISSING_FIELD customer.businessInfo.entityType',
      'Customer:B MISSING_FIELD customer.address',
      'Customer:B MISSING_LEGAL_PRESENCE_DOCUMENT',
      'Customer:B MISSING_PROOF_OF_ADDRESS_DOCUMENT',
      'Customer:B MISSING_BENEFICIAL_OWNER',
    ]);
    const [legal] = verificationRequirements({ customer: bare, owners: [], documents: [] }).filter(
      (e) => e.type === 'MISSING_LEGAL_PRESENCE_DOCUMENT',
    );
    expect(legal!.acceptedDocumentTypes).toContain('CERTIFICATE_OF_INCORPORATION');
  });

  it('asks each beneficial owner for an identity document and a KYC not rejected', () => {
    const file: VerificationFile = {
      customer: business,
      owners: [
        { id: 'BeneficialOwner:1', kycStatus: 'APPROVED' },
        { id: 'BeneficialOwner:2', kycStatus: 'REJECTED' },
      ],
      documents: [
        { documentHolder: 'Customer:B', documentType: 'ARTICLES_OF_INCORPORATION' },
        { documentHolder: 'Customer:B', documentType: 'UTILITY_BILL' },
        { documentHolder: 'BeneficialOwner:1', documentType: 'PASSPORT' },
        { documentHolder: 'BeneficialOwner:2', documentType: 'UTILITY_BILL' },
      ],
    };
    expect(types(file)).toEqual([
      'BeneficialOwner:2 MISSING_IDENTITY_DOCUMENT',
      'BeneficialOwner:2 APPLICANT_REJECTED',
    ]);
    file.owners[1]!.kycStatus = 'PENDING';
    file.documents.push({ documentHolder: 'BeneficialOwner:2', documentType: 'NATIONAL_ID' });
    expect(types(file)).toEqual([]);
  });

  it('asks an individual for identity fields and an identity document', () => {
    expect(types({ customer: { ...person, birthDate: undefined }, owners: [], documents: [] })).toEqual([
      'Customer:P MISSING_FIELD customer.birthDate',
      'Customer:P MISSING_IDENTITY_DOCUMENT',
    ]);
    expect(
      types({
        customer: person,
        owners: [],
        documents: [{ documentHolder: 'Customer:P', documentType: 'PASSPORT' }],
      }),
    ).toEqual([]);
  });
});
