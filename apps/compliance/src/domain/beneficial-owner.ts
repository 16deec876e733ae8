import {
  BENEFICIAL_OWNER_ROLES,
  IDENTIFICATION_TYPES,
  VERIFICATION_STATUSES,
  FieldErrors,
  country,
  email,
  noDuplicates,
  pastDate,
  postalAddress,
  text,
  type Environment,
  type PostalAddress,
} from '@sluice/core';

export type BeneficialOwnerRole = (typeof BENEFICIAL_OWNER_ROLES)[number];

export type IdentificationType = (typeof IDENTIFICATION_TYPES)[number];

/** kycStatus of a beneficial owner (the customers' KYC status values). */
export type KycStatus = (typeof VERIFICATION_STATUSES)[number];

/** REST BeneficialOwnerPersonalInfo. */
export interface PersonalInfo {
  firstName: string;
  middleName?: string;
  lastName: string;
  birthDate: string;
  nationality: string;
  email?: string;
  phoneNumber?: string;
  address: PostalAddress;
  idType: IdentificationType;
  identifier: string;
  countryOfIssuance?: string;
}

export interface BeneficialOwner {
  id: string;
  platformId: string;
  customerId: string;
  roles: BeneficialOwnerRole[];
  ownershipPercentage: number;
  personalInfo: PersonalInfo;
  kycStatus: KycStatus;
  /** Environment of the platform when KYC last started: sandbox or production provider. */
  environment: Environment;
  /** When the running KYC check is to be decided (absent: nothing running). */
  kycDueAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** What a request gives of personal info (every field optional: absent ones are checked by the rules). */
export type PersonalInfoInput = Partial<Omit<PersonalInfo, 'idType' | 'address'>> & {
  idType?: string;
  address?: PostalAddress;
};

export interface NewBeneficialOwnerInput {
  roles: string[];
  ownershipPercentage: number;
  personalInfo?: PersonalInfoInput;
}

export interface BeneficialOwnerUpdateInput {
  roles?: string[];
  ownershipPercentage?: number;
  personalInfo?: PersonalInfoInput;
}

/** Fields of personalInfo the reference requires. */
const REQUIRED_PERSONAL = [
  'firstName',
  'lastName',
  'birthDate',
  'nationality',
  'address',
  'idType',
  'identifier',
] as const;

/** E.164: `+` then up to 15 digits, no leading zero. */
const PHONE_RE = /^\+[1-9]\d{1,14}$/;

/** Largest sum of UBO ownership percentages of one business. */
export const MAX_TOTAL_OWNERSHIP = 100;

function roles(p: FieldErrors, values: string[]): BeneficialOwnerRole[] {
  if (values.length === 0) p.add('roles', 'must list at least one role');
  values.forEach((r, i) => {
    if (!(BENEFICIAL_OWNER_ROLES as readonly string[]).includes(r))
      p.add(`roles[${i}]`, `must be one of ${BENEFICIAL_OWNER_ROLES.join(', ')}`);
  });
  noDuplicates(p, 'roles', values);
  return values as BeneficialOwnerRole[];
}

function percentage(p: FieldErrors, value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 100)
    p.add('ownershipPercentage', 'must be an integer from 0 to 100');
  return value;
}

/** A UBO owns part of the business: its percentage must be above 0. */
function uboOwns(p: FieldErrors, r: readonly string[], pct: number): void {
  if (r.includes('UBO') && Number.isInteger(pct) && pct === 0)
    p.add('ownershipPercentage', 'must be above 0 for a beneficial owner with the UBO role');
}

/** Checks every given personal field; `complete` also requires the reference's required ones. */
function personal(
  p: FieldErrors,
  input: PersonalInfoInput,
  today: Date,
  complete: boolean,
): Partial<PersonalInfo> {
  const f = 'personalInfo';
  const out: Partial<PersonalInfo> = {};
  if (complete)
    for (const k of REQUIRED_PERSONAL) if (input[k] === undefined) p.add(`${f}.${k}`, 'is required');
  const put = <K extends keyof PersonalInfo>(k: K, v: PersonalInfo[K] | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  put('firstName', text(p, `${f}.firstName`, input.firstName, 100));
  put('middleName', text(p, `${f}.middleName`, input.middleName, 100));
  put('lastName', text(p, `${f}.lastName`, input.lastName, 100));
  put('birthDate', pastDate(p, `${f}.birthDate`, input.birthDate, today));
  put('nationality', country(p, `${f}.nationality`, input.nationality));
  put('email', email(p, `${f}.email`, input.email));
  if (input.phoneNumber !== undefined) {
    if (PHONE_RE.test(input.phoneNumber)) out.phoneNumber = input.phoneNumber;
    else p.add(`${f}.phoneNumber`, 'must be an E.164 phone number (e.g. +14155550192)');
  }
  if (input.address !== undefined) out.address = postalAddress(p, `${f}.address`, input.address);
  if (input.idType !== undefined) {
    if ((IDENTIFICATION_TYPES as readonly string[]).includes(input.idType))
      out.idType = input.idType as IdentificationType;
    else p.add(`${f}.idType`, `must be one of ${IDENTIFICATION_TYPES.join(', ')}`);
  }
  put('identifier', text(p, `${f}.identifier`, input.identifier, 100));
  put('countryOfIssuance', country(p, `${f}.countryOfIssuance`, input.countryOfIssuance));
  return out;
}

/**
 * The UBO total rule: the ownership percentages of a business's UBOs (`others`: every other
 * beneficial owner of the business) plus this one's never exceed 100.
 */
function ownershipTotal(
  p: FieldErrors,
  others: readonly Pick<BeneficialOwner, 'roles' | 'ownershipPercentage'>[],
  next: Pick<BeneficialOwner, 'roles' | 'ownershipPercentage'>,
): void {
  if (!next.roles.includes('UBO')) return;
  const taken = others.filter((o) => o.roles.includes('UBO')).reduce((n, o) => n + o.ownershipPercentage, 0);
  if (taken + next.ownershipPercentage > MAX_TOTAL_OWNERSHIP)
    p.add(
      'ownershipPercentage',
      `the UBOs of this business would own ${taken + next.ownershipPercentage}% (at most ${MAX_TOTAL_OWNERSHIP}%; ${MAX_TOTAL_OWNERSHIP - taken}% is left)`,
    );
}

/** Facts the rules need besides the request. */
export interface OwnerContext {
  today: Date;
  /** The other beneficial owners of the same business (for the UBO total). */
  others: readonly Pick<BeneficialOwner, 'roles' | 'ownershipPercentage'>[];
}

/**
 * Validates a new beneficial owner (roles from the enum, no duplicates; percentage 0–100 and
 * above 0 for a UBO; the reference's required personal fields; the UBO total of the business at
 * most 100). Throws INVALID_INPUT naming every bad field.
 */
export function validateNewBeneficialOwner(
  input: NewBeneficialOwnerInput,
  ctx: OwnerContext,
): Pick<BeneficialOwner, 'roles' | 'ownershipPercentage' | 'personalInfo'> {
  const p = new FieldErrors();
  const r = roles(p, input.roles);
  const pct = percentage(p, input.ownershipPercentage);
  uboOwns(p, input.roles, pct);
  if (!input.personalInfo) p.add('personalInfo', 'is required');
  const info = personal(p, input.personalInfo ?? {}, ctx.today, input.personalInfo !== undefined);
  if (!p.any) ownershipTotal(p, ctx.others, { roles: r, ownershipPercentage: pct });
  p.throwIfAny();
  return { roles: r, ownershipPercentage: pct, personalInfo: info as PersonalInfo };
}

/**
 * Applies an update (only the fields present change; `personalInfo.address` is replaced whole).
 * Returns the owner with the changes (timestamps untouched) and whether personal data changed,
 * which runs KYC again. Throws INVALID_INPUT naming every bad field.
 */
export function applyBeneficialOwnerUpdate(
  current: BeneficialOwner,
  input: BeneficialOwnerUpdateInput,
  ctx: OwnerContext,
): { next: BeneficialOwner; personalDataChanged: boolean } {
  const p = new FieldErrors();
  const next: BeneficialOwner = { ...current, personalInfo: { ...current.personalInfo } };
  if (input.roles !== undefined) next.roles = roles(p, input.roles);
  if (input.ownershipPercentage !== undefined)
    next.ownershipPercentage = percentage(p, input.ownershipPercentage);
  uboOwns(p, next.roles, next.ownershipPercentage);
  if (input.personalInfo !== undefined)
    Object.assign(next.personalInfo, personal(p, input.personalInfo, ctx.today, false));
  if (!p.any) ownershipTotal(p, ctx.others, next);
  p.throwIfAny();
  const personalDataChanged = JSON.stringify(next.personalInfo) !== JSON.stringify(current.personalInfo);
  return { next, personalDataChanged };
}
