import { compliance } from '@sluice/contracts';
import type { PostalAddress } from '@sluice/core';
import type { BeneficialOwner, BeneficialOwnerRole, PersonalInfoInput } from '../domain/beneficial-owner.js';
import type { DocumentRecord } from '../domain/document.js';
import type { Verification } from '../domain/verification.js';

/** Domain <-> compliance.v1 messages. Proto string enums carry a prefix: `KYC_STATUS_APPROVED` is `APPROVED`. */

const bare = (v: string, prefix: string) => (v.startsWith(prefix) ? v.slice(prefix.length) : v);

/** A proto enum value from its public name (`APPROVED` → `KYC_STATUS_APPROVED`). */
function pbEnum<E extends string>(prefix: string, value: string): E {
  return `${prefix}${value}` as E;
}

function addressToPb(a: PostalAddress): compliance.Address {
  return { ...a };
}

export function ownerToPb(o: BeneficialOwner): compliance.BeneficialOwner {
  const p = o.personalInfo;
  return {
    id: o.id,
    platformId: o.platformId,
    customerId: o.customerId,
    roles: o.roles.map((r) => pbEnum<compliance.BeneficialOwnerRole>('BENEFICIAL_OWNER_ROLE_', r)),
    ownershipPercentage: o.ownershipPercentage,
    personalInfo: {
      ...p,
      address: addressToPb(p.address),
      idType: pbEnum<compliance.IdentificationType>('IDENTIFICATION_TYPE_', p.idType),
    },
    kycStatus: pbEnum<compliance.KycStatus>('KYC_STATUS_', o.kycStatus),
    createdAt: o.createdAt,
    updatedAt: o.updatedAt,
  };
}

export function rolesFromPb(roles: compliance.BeneficialOwnerRole[]): string[] {
  return roles.map((r) => bare(r, 'BENEFICIAL_OWNER_ROLE_'));
}

/** Personal info of a request (absent fields stay absent; UNSPECIFIED idType is absent). */
export function personalInfoFromPb(p: compliance.PersonalInfo): PersonalInfoInput {
  const out: PersonalInfoInput = {};
  const keys = [
    'firstName',
    'middleName',
    'lastName',
    'birthDate',
    'nationality',
    'email',
    'phoneNumber',
    'identifier',
    'countryOfIssuance',
  ] as const;
  for (const k of keys) if (p[k] !== undefined) out[k] = p[k];
  if (p.address) {
    const a: PostalAddress = {
      line1: p.address.line1,
      postalCode: p.address.postalCode,
      country: p.address.country,
    };
    if (p.address.line2 !== undefined) a.line2 = p.address.line2;
    if (p.address.city !== undefined) a.city = p.address.city;
    if (p.address.state !== undefined) a.state = p.address.state;
    out.address = a;
  }
  if (p.idType !== compliance.IdentificationType.UNSPECIFIED)
    out.idType = bare(p.idType, 'IDENTIFICATION_TYPE_');
  return out;
}

export function documentToPb(d: DocumentRecord): compliance.Document {
  return {
    id: d.id,
    platformId: d.platformId,
    documentHolder: d.documentHolder,
    documentType: pbEnum<compliance.DocumentType>('DOCUMENT_TYPE_', d.documentType),
    country: d.country,
    fileName: d.fileName,
    side: d.side
      ? pbEnum<compliance.DocumentSide>('DOCUMENT_SIDE_', d.side)
      : compliance.DocumentSide.UNSPECIFIED,
    documentNumber: d.documentNumber,
    contentType: d.file.contentType,
    sizeBytes: BigInt(d.file.sizeBytes),
    sha256: d.file.sha256,
    chunkCount: d.file.chunkCount,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

/** The public names of a document header's enums (UNSPECIFIED: absent). */
export function documentEnumsFromPb(h: compliance.DocumentHeader): { documentType: string; side?: string } {
  const out: { documentType: string; side?: string } = {
    documentType:
      h.documentType === compliance.DocumentType.UNSPECIFIED ? '' : bare(h.documentType, 'DOCUMENT_TYPE_'),
  };
  if (h.side !== compliance.DocumentSide.UNSPECIFIED) out.side = bare(h.side, 'DOCUMENT_SIDE_');
  return out;
}

export function verificationToPb(v: Verification): compliance.Verification {
  return {
    id: v.id,
    platformId: v.platformId,
    customerId: v.customerId,
    verificationStatus: pbEnum<compliance.VerificationStatus>('VERIFICATION_STATUS_', v.status),
    errors: v.errors.map((e) => ({
      resourceId: e.resourceId,
      type: e.type,
      field: e.field,
      acceptedDocumentTypes: (e.acceptedDocumentTypes ?? []).map((t) =>
        pbEnum<compliance.DocumentType>('DOCUMENT_TYPE_', t),
      ),
      reason: e.reason,
    })),
    createdAt: v.createdAt,
    updatedAt: v.updatedAt,
  };
}

export function verificationStatusFromPb(s: compliance.VerificationStatus): string | undefined {
  return s === compliance.VerificationStatus.UNSPECIFIED ? undefined : bare(s, 'VERIFICATION_STATUS_');
}

export type { BeneficialOwnerRole };
