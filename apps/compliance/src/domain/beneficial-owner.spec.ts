import { describe, expect, it } from 'vitest';
import { isDomainError } from '@sluice/core';
import {
  applyBeneficialOwnerUpdate,
  validateNewBeneficialOwner,
  type BeneficialOwner,
  type NewBeneficialOwnerInput,
} from './beneficial-owner.js';

const today = new Date('2026-01-10T12:00:00Z');
const personalInfo = {
  firstName: 'Jane',
  lastName: 'Smith',
  birthDate: '1978-06-15',
  nationality: 'US',
  address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
  idType: 'SSN',
  identifier: '123-45-6789',
};
const input = (o: Partial<NewBeneficialOwnerInput> = {}): NewBeneficialOwnerInput => ({
  roles: ['UBO'],
  ownershipPercentage: 40,
  personalInfo,
  ...o,
});

/** The fields named by the INVALID_INPUT `fn` throws. */
function fields(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (isDomainError(e) && e.code === 'INVALID_INPUT')
      return (e.details as { errors: { field: string }[] }).errors.map((x) => x.field);
    throw e;
  }
  throw new Error('expected INVALID_INPUT');
}

const ctx = { today, others: [] };

describe('beneficial owner rules', () => {
  it('accepts a complete owner and keeps only what was given', () => {
    const v = validateNewBeneficialOwner(input({ roles: ['UBO', 'DIRECTOR'] }), ctx);
    expect(v).toEqual({ roles: ['UBO', 'DIRECTOR'], ownershipPercentage: 40, personalInfo });
  });

  it('checks roles: at least one, from the enum, no duplicates', () => {
    expect(fields(() => validateNewBeneficialOwner(input({ roles: [] }), ctx))).toEqual(['roles']);
    expect(fields(() => validateNewBeneficialOwner(input({ roles: ['UBO', 'OWNER'] }), ctx))).toEqual([
      'roles[1]',
    ]);
    expect(fields(() => validateNewBeneficialOwner(input({ roles: ['DIRECTOR', 'DIRECTOR'] }), ctx))).toEqual(
      ['roles[1]'],
    );
  });

  it('checks the percentage: an integer 0..100, above 0 for a UBO', () => {
    for (const bad of [-1, 101, 12.5])
      expect(fields(() => validateNewBeneficialOwner(input({ ownershipPercentage: bad }), ctx))).toEqual([
        'ownershipPercentage',
      ]);
    expect(fields(() => validateNewBeneficialOwner(input({ ownershipPercentage: 0 }), ctx))).toEqual([
      'ownershipPercentage',
    ]);
    expect(
      validateNewBeneficialOwner(input({ roles: ['DIRECTOR'], ownershipPercentage: 0 }), ctx)
        .ownershipPercentage,
    ).toBe(0);
    expect(validateNewBeneficialOwner(input({ ownershipPercentage: 100 }), ctx).ownershipPercentage).toBe(
      100,
    );
  });

  it('requires the reference’s personal fields and checks each one', () => {
    expect(fields(() => validateNewBeneficialOwner(input({ personalInfo: undefined }), ctx))).toEqual([
      'personalInfo',
    ]);
    expect(fields(() => validateNewBeneficialOwner(input({ personalInfo: {} }), ctx)).sort()).toEqual(
      [
        'personalInfo.address',
        'personalInfo.birthDate',
        'personalInfo.firstName',
        'personalInfo.idType',
        'personalInfo.identifier',
        'personalInfo.lastName',
        'personalInfo.nationality',
      ].sort(),
    );
    expect(
      fields(() =>
        validateNewBeneficialOwner(
          input({
            personalInfo: {
              ...personalInfo,
              birthDate: '2030-01-01',
              nationality: 'XX',
              email: 'not-an-email',
              phoneNumber: '0044 20',
              idType: 'PASSPORT',
              countryOfIssuance: 'us',
              address: { line1: '', postalCode: '1', country: 'US' },
            },
          }),
          ctx,
        ),
      ).sort(),
    ).toEqual(
      [
        'personalInfo.address.line1',
        'personalInfo.birthDate',
        'personalInfo.countryOfIssuance',
        'personalInfo.email',
        'personalInfo.idType',
        'personalInfo.nationality',
        'personalInfo.phoneNumber',
      ].sort(),
    );
  });

  it('keeps the UBOs of a business at 100% at most (directors do not count)', () => {
    const others = [
      { roles: ['UBO' as const], ownershipPercentage: 60 },
      { roles: ['DIRECTOR' as const], ownershipPercentage: 90 },
    ];
    expect(
      validateNewBeneficialOwner(input({ ownershipPercentage: 40 }), { today, others }).ownershipPercentage,
    ).toBe(40);
    expect(
      fields(() => validateNewBeneficialOwner(input({ ownershipPercentage: 41 }), { today, others })),
    ).toEqual(['ownershipPercentage']);
    expect(
      validateNewBeneficialOwner(input({ roles: ['DIRECTOR'], ownershipPercentage: 50 }), { today, others })
        .roles,
    ).toEqual(['DIRECTOR']);
  });
});

describe('beneficial owner update', () => {
  const current: BeneficialOwner = {
    id: 'BeneficialOwner:1',
    platformId: 'Platform:1',
    customerId: 'Customer:1',
    roles: ['UBO'],
    ownershipPercentage: 40,
    personalInfo: personalInfo as BeneficialOwner['personalInfo'],
    kycStatus: 'APPROVED',
    environment: 'SANDBOX',
    createdAt: today,
    updatedAt: today,
  };

  it('changes only what is given; personal data changes rerun KYC, others do not', () => {
    const a = applyBeneficialOwnerUpdate(current, { ownershipPercentage: 50 }, ctx);
    expect(a.next.ownershipPercentage).toBe(50);
    expect(a.personalDataChanged).toBe(false);
    const b = applyBeneficialOwnerUpdate(current, { personalInfo: { lastName: 'Smith002' } }, ctx);
    expect(b.next.personalInfo).toEqual({ ...personalInfo, lastName: 'Smith002' });
    expect(b.personalDataChanged).toBe(true);
    expect(
      applyBeneficialOwnerUpdate(current, { personalInfo: { lastName: 'Smith' } }, ctx).personalDataChanged,
    ).toBe(false);
  });

  it('checks the UBO total against the other owners and the fields given', () => {
    const others = [{ roles: ['UBO' as const], ownershipPercentage: 70 }];
    expect(
      fields(() => applyBeneficialOwnerUpdate(current, { ownershipPercentage: 31 }, { today, others })),
    ).toEqual(['ownershipPercentage']);
    expect(fields(() => applyBeneficialOwnerUpdate(current, { roles: ['CEO'] }, ctx))).toEqual(['roles[0]']);
    expect(
      fields(() => applyBeneficialOwnerUpdate(current, { personalInfo: { birthDate: '1978-02-30' } }, ctx)),
    ).toEqual(['personalInfo.birthDate']);
  });
});
