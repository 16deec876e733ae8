import {
  ACCOUNT_INFO_FIELDS,
  BUSINESS_BENEFICIARY_FIELDS,
  EXTERNAL_ACCOUNT_TYPES,
  INDIVIDUAL_BENEFICIARY_FIELDS,
  FieldErrors,
  externalAccountVariant,
  invalidInput,
  isCurrencyCode,
  EXTERNAL_ACCOUNT_CURRENCIES,
  PHONE_PLANS,
  PIX_KEY_TYPES,
  type AccountInfoField,
  type BeneficiaryField,
  type BeneficiaryVerificationStatus,
  type Environment,
  type ExternalAccountStatus,
  type ExternalAccountType,
  type ExternalAccountVariant,
  type PaymentRail,
  type PixKeyType,
  type PostalAddress,
} from '@sluice/core';
import { checkBic, checkEmail, checkField, checkPixKey, normalizeField } from './bank-identifiers.js';
import type { Owner } from './internal-account.js';
import { checks } from './validation.js';

/**
 * The `beneficiary` of a bank account: an INDIVIDUAL (fullName, and what its variant requires:
 * an address for EUR and AED, a phone number for EGP, GTQ and JMD, ...) or a BUSINESS (legalName).
 */
export interface Beneficiary {
  beneficiaryType: 'INDIVIDUAL' | 'BUSINESS';
  fullName?: string;
  legalName?: string;
  birthDate?: string;
  nationality?: string;
  email?: string;
  phoneNumber?: string;
  registrationNumber?: string;
  taxId?: string;
  countryOfResidence?: string;
  address?: PostalAddress;
}

/**
 * `accountInfo` as stored and returned: the fields of its variant only, normalized; bank
 * variants carry their payment rails and beneficiary.
 */
export type ExternalAccountInfo = { accountType: ExternalAccountType } & Partial<
  Record<AccountInfoField, string>
> & {
    paymentRails?: PaymentRail[];
    beneficiary?: Beneficiary;
  };

/** Raw `accountInfo` from a request: anything may be missing or malformed. */
export type AccountInfoInput = Record<string, unknown>;

export interface ExternalAccountRecord {
  id: string;
  platformId: string;
  owner: Owner;
  customerId?: string;
  currency: string;
  status: ExternalAccountStatus;
  accountInfo: ExternalAccountInfo;
  primaryIdentifier: string;
  platformAccountId?: string;
  defaultUmaDepositAccount: boolean;
  beneficiaryVerificationStatus: BeneficiaryVerificationStatus;
  verifiedFullName?: string;
  environment: Environment;
  createdAt: Date;
  updatedAt: Date;
}

/** The validated account: its info, the primary identifier and the key that detects duplicates. */
export interface ValidatedAccountInfo {
  info: ExternalAccountInfo;
  primaryIdentifier: string;
  /** The field of the primary identifier, as the API names it (`accountInfo.iban`). */
  primaryField: string;
  /** Same account, same owner, same currency = same key (duplicates are refused). */
  dedupeKey: string;
}

const P = 'accountInfo';

function isBlank(v: unknown): boolean {
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
}

/** Core's field-error collector with the string rules of account info. */
class Collector extends FieldErrors {
  /** A required string, trimmed; undefined (and an error) when missing or not a string. */
  required(field: string, v: unknown, max = 200): string | undefined {
    if (isBlank(v)) {
      this.add(field, 'is required');
      return undefined;
    }
    return this.optional(field, v, max);
  }
  optional(field: string, v: unknown, max = 200): string | undefined {
    if (isBlank(v)) return undefined;
    if (typeof v !== 'string') {
      this.add(field, 'must be a string');
      return undefined;
    }
    const t = v.trim();
    if (t.length === 0) {
      this.add(field, 'must not be blank');
      return undefined;
    }
    if (t.length > max) {
      this.add(field, `must be at most ${max} characters`);
      return undefined;
    }
    return t;
  }
  check(field: string, v: string | undefined, rule: (v: string) => string | undefined): void {
    if (v === undefined) return;
    const reason = rule(v);
    if (reason) this.add(field, reason);
  }
}

const COUNTRY = /^[A-Z]{2}$/;

function validateAddress(c: Collector, field: string, raw: unknown): PostalAddress | undefined {
  if (isBlank(raw)) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    c.add(field, 'must be an object');
    return undefined;
  }
  const a = raw as Record<string, unknown>;
  const line1 = c.required(`${field}.line1`, a.line1);
  const line2 = c.optional(`${field}.line2`, a.line2);
  const city = c.optional(`${field}.city`, a.city, 100);
  const state = c.optional(`${field}.state`, a.state, 100);
  const postalCode = c.required(`${field}.postalCode`, a.postalCode, 20);
  const country = c.required(`${field}.country`, a.country, 2);
  c.check(`${field}.country`, country, (v) =>
    COUNTRY.test(v) ? undefined : 'must be an ISO 3166-1 alpha-2 code (e.g. US)',
  );
  if (!line1 || !postalCode || !country) return undefined;
  return {
    line1,
    ...(line2 ? { line2 } : {}),
    ...(city ? { city } : {}),
    ...(state ? { state } : {}),
    postalCode,
    country,
  };
}

function validDate(v: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) return false;
  const d = new Date(`${v}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
}

/** The string rules of each beneficiary field (length, and the format where it has one). */
const BENEFICIARY_RULES: Readonly<
  Record<
    Exclude<BeneficiaryField, 'address'>,
    { max: number; check?: (v: string, now: Date) => string | undefined }
  >
> = {
  fullName: { max: 200 },
  legalName: { max: 200 },
  birthDate: {
    max: 10,
    check: (v, now) =>
      !validDate(v)
        ? 'must be a date YYYY-MM-DD'
        : v >= now.toISOString().slice(0, 10)
          ? 'must be in the past'
          : undefined,
  },
  nationality: { max: 2, check: (v) => (COUNTRY.test(v) ? undefined : 'must be an ISO 3166-1 alpha-2 code') },
  countryOfResidence: {
    max: 2,
    check: (v) => (COUNTRY.test(v) ? undefined : 'must be an ISO 3166-1 alpha-2 code'),
  },
  email: { max: 254, check: checkEmail },
  phoneNumber: {
    max: 20,
    check: (v) =>
      /^\+[1-9][0-9]{6,14}$/.test(v) ? undefined : 'must be in E.164 form (+ and 7 to 15 digits)',
  },
  registrationNumber: { max: 100 },
  taxId: { max: 50 },
};

/**
 * The beneficiary of a bank variant (required): an INDIVIDUAL has the individual fields of its
 * variant (CAD adds registrationNumber) and what the variant requires of it; a BUSINESS the
 * business fields. A field of the other kind is refused, naming it.
 */
function validateBeneficiary(
  c: Collector,
  variant: ExternalAccountVariant,
  raw: unknown,
  now: Date,
): Beneficiary | undefined {
  const f = `${P}.beneficiary`;
  if (isBlank(raw)) {
    c.add(f, `is required for ${variant.accountType}`);
    return undefined;
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    c.add(f, 'must be an object');
    return undefined;
  }
  const b = raw as Record<string, unknown>;
  const type = b.beneficiaryType;
  if (type !== 'INDIVIDUAL' && type !== 'BUSINESS') {
    c.add(`${f}.beneficiaryType`, 'must be INDIVIDUAL or BUSINESS');
    return undefined;
  }
  const allowed: readonly BeneficiaryField[] =
    type === 'INDIVIDUAL'
      ? [...INDIVIDUAL_BENEFICIARY_FIELDS, ...(variant.individual?.extra ?? [])]
      : BUSINESS_BENEFICIARY_FIELDS;
  const required: readonly BeneficiaryField[] =
    type === 'INDIVIDUAL' ? ['fullName', ...(variant.individual?.required ?? [])] : ['legalName'];
  for (const key of Object.keys(b))
    if (key !== 'beneficiaryType' && !allowed.includes(key as BeneficiaryField) && !isBlank(b[key]))
      c.add(`${f}.${key}`, `does not apply to ${type} beneficiaries of ${variant.accountType}`);
  const out: Beneficiary = { beneficiaryType: type };
  for (const field of allowed) {
    if (field === 'address') {
      if (required.includes('address') && isBlank(b.address)) c.add(`${f}.address`, 'is required');
      const address = validateAddress(c, `${f}.address`, b.address);
      if (address) out.address = address;
      continue;
    }
    const rule = BENEFICIARY_RULES[field];
    const v = required.includes(field)
      ? c.required(`${f}.${field}`, b[field], rule.max)
      : c.optional(`${f}.${field}`, b[field], rule.max);
    if (rule.check) c.check(`${f}.${field}`, v, (x) => rule.check!(x, now));
    if (v !== undefined) out[field] = v;
  }
  return out;
}

/**
 * The payment rails of the account: those the request selects (each must be the variant's,
 * and its fields present), else every rail of the variant whose fields were given. A bank
 * variant with no usable rail names the fields of its first rail.
 */
function selectRails(
  c: Collector,
  variant: ExternalAccountVariant,
  raw: unknown,
  given: (f: AccountInfoField) => boolean,
): PaymentRail[] {
  const rails = Object.entries(variant.rails) as [PaymentRail, readonly AccountInfoField[]][];
  if (rails.length === 0) {
    if (!isBlank(raw)) c.add(`${P}.paymentRails`, `does not apply to ${variant.accountType}`);
    return [];
  }
  const names = rails.map(([r]) => r);
  if (!isBlank(raw)) {
    if (!Array.isArray(raw) || raw.some((r) => typeof r !== 'string')) {
      c.add(`${P}.paymentRails`, 'must be a list of payment rails');
      return [];
    }
    const unknown = raw.filter((r) => !names.includes(r as PaymentRail));
    if (unknown.length) {
      c.add(
        `${P}.paymentRails`,
        `must be among ${names.join(', ')} for ${variant.accountType}, not ${unknown.join(', ')}`,
      );
      return [];
    }
    if (new Set(raw).size !== raw.length) c.add(`${P}.paymentRails`, 'must not repeat a rail');
    const selected = names.filter((r) => raw.includes(r));
    for (const rail of selected)
      for (const field of variant.rails[rail]!)
        if (!given(field)) c.add(`${P}.${field}`, `is required for the ${rail} rail`);
    return selected;
  }
  const usable = rails.filter(([, fields]) => fields.every(given)).map(([r]) => r);
  if (usable.length === 0) {
    const [first, ...others] = rails;
    const missing = first![1].filter((f) => !given(f));
    const alternatives = others.map(
      ([r, fields]) => `${fields.filter((f) => !given(f)).join(' and ')} (${r})`,
    );
    for (const field of missing)
      c.add(
        `${P}.${field}`,
        `is required (${first![0]})${alternatives.length ? `, or give ${alternatives.join(', or ')}` : ''}`,
      );
  }
  return usable;
}

/**
 * Validates `currency` and `accountInfo` of a create request against the variant's row of
 * EXTERNAL_ACCOUNT_VARIANTS: the variant exists and holds that currency, its required fields
 * (and those of the selected rails) are present, fields of other variants are absent, every
 * field is normalized and passes its format and checksum rules, the SWIFT/BIC and the mobile
 * number belong to the account's country, and bank variants name their beneficiary. Throws
 * one INVALID_INPUT naming every field at fault (`accountInfo.iban`, ...).
 */
export function validateAccountInfo(currency: unknown, raw: unknown, now: Date): ValidatedAccountInfo {
  const c = new Collector();
  const knownCurrency = isCurrencyCode(currency) || EXTERNAL_ACCOUNT_CURRENCIES.includes(currency as string);
  if (isBlank(currency)) c.add('currency', 'is required');
  else if (!knownCurrency) c.add('currency', `unknown currency ${JSON.stringify(currency)}`);
  if (raw === undefined || raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    c.add(P, 'is required');
    throw invalidInput(c.errors);
  }
  const a = raw as Record<string, unknown>;
  const variant = externalAccountVariant(a.accountType);
  if (!variant) {
    c.add(
      `${P}.accountType`,
      isBlank(a.accountType) ? 'is required' : `must be one of ${EXTERNAL_ACCOUNT_TYPES.join(', ')}`,
    );
    throw invalidInput(c.errors);
  }
  const accountType = variant.accountType;
  const bank = Object.keys(variant.rails).length > 0;
  if (typeof currency === 'string' && knownCurrency && !variant.currencies.includes(currency))
    c.add('currency', `${accountType} accounts hold ${variant.currencies.join(' or ')}, not ${currency}`);
  for (const key of Object.keys(a)) {
    const own =
      key === 'accountType' ||
      key in variant.fields ||
      (bank && (key === 'beneficiary' || key === 'paymentRails'));
    if (!own && !isBlank(a[key])) c.add(`${P}.${key}`, `does not apply to ${accountType}`);
  }

  const info: ExternalAccountInfo = { accountType };
  for (const field of ACCOUNT_INFO_FIELDS) {
    const spec = variant.fields[field];
    if (!spec) continue;
    const name = `${P}.${field}`;
    const max = spec.format.kind === 'text' ? spec.format.max : 2000;
    const value = spec.required ? c.required(name, a[field], max) : c.optional(name, a[field], max);
    if (value === undefined) continue;
    const normalized = normalizeField(spec.format, value);
    const before = c.errors.length;
    c.check(name, normalized, (v) => checkField(spec.format, v));
    if (c.errors.length === before) info[field] = normalized;
  }

  // Rules across fields.
  if (info.swiftCode) {
    const country = variant.country ?? info.iban?.slice(0, 2);
    const reason = checkBic(info.swiftCode, country);
    if (reason)
      c.add(
        `${P}.swiftCode`,
        variant.country || !info.iban ? reason : reason.replace('account country', 'IBAN country'),
      );
  }
  if (
    info.region &&
    info.phoneNumber &&
    checkField({ kind: 'phone', countries: [info.region] }, info.phoneNumber)
  )
    c.add(
      `${P}.phoneNumber`,
      `must be a number of the region ${info.region} (+${PHONE_PLANS[info.region]!.code})`,
    );
  if (
    accountType === 'BRL_ACCOUNT' &&
    info.pixKey !== undefined &&
    PIX_KEY_TYPES.includes(info.pixKeyType as PixKeyType)
  ) {
    const type = info.pixKeyType as PixKeyType;
    let key = info.pixKey;
    if (type === 'CPF' || type === 'CNPJ') key = key.replace(/[\s.\-/]/g, '');
    else if (type === 'PHONE') key = key.replace(/[\s\-()]/g, '');
    else key = key.toLowerCase();
    c.check(`${P}.pixKey`, key, (v) => checkPixKey(type, v));
    info.pixKey = key;
  }
  if (variant.exactlyOneOf) {
    const given = variant.exactlyOneOf.filter((f) => !isBlank(a[f])).length;
    if (given !== 1 && !c.errors.some((e) => e.field.startsWith(`${P}.`)))
      c.add(
        P,
        `exactly one of ${variant.exactlyOneOf.slice(0, -1).join(', ')} or ${variant.exactlyOneOf.at(-1)} is required`,
      );
  }
  const rails = selectRails(c, variant, a.paymentRails, (f) => info[f] !== undefined || !isBlank(a[f]));
  if (bank) {
    info.paymentRails = rails;
    const beneficiary = validateBeneficiary(c, variant, a.beneficiary, now);
    if (beneficiary) info.beneficiary = beneficiary;
  }

  c.throwIfAny();

  const primary = variant.identifiers.find((f) => info[f] !== undefined)!;
  const primaryIdentifier = info[primary]!;
  const dedupe = variant.dedupe?.map((f) => info[f]).join(':') ?? primaryIdentifier;
  return {
    info,
    primaryIdentifier,
    primaryField: `${P}.${primary}`,
    // EVM addresses are case-insensitive (the case only carries the checksum).
    dedupeKey: `${accountType}:${variant.fields.address?.format.kind === 'wallet' && variant.fields.address.format.network === 'EVM' ? dedupe.toLowerCase() : dedupe}`,
  };
}

/** The name of a beneficiary: an individual's full name or a business's legal name. */
export function beneficiaryName(b: Beneficiary | undefined): string | undefined {
  return b?.beneficiaryType === 'BUSINESS' ? b.legalName : b?.fullName;
}

/** A platform's own identifier for the account: optional, 1 to 255 printable characters. */
export function validatePlatformAccountId(v: unknown): string | undefined {
  if (isBlank(v)) return undefined;
  if (typeof v !== 'string' || v.length > 255 || !/^[\x21-\x7e]+( [\x21-\x7e]+)*$/.test(v))
    throw invalidInput([{ field: 'platformAccountId', message: 'must be 1 to 255 printable characters' }]);
  return v;
}

/** CreateExternalAccount as requested (`accountInfo` unvalidated). */
export interface NewExternalAccountRequest {
  platformId: string;
  environment: Environment | undefined;
  /** Absent: a platform-owned account. */
  customerId?: string;
  currency: string;
  accountInfo: AccountInfoInput | undefined;
  platformAccountId?: string;
  defaultUmaDepositAccount?: boolean;
}

/** A valid CreateExternalAccount. */
export interface ValidNewExternalAccount {
  platformId: string;
  environment: Environment;
  customerId?: string;
  currency: string;
  validated: ValidatedAccountInfo;
  platformAccountId?: string;
  defaultUmaDepositAccount: boolean;
}

/** Checks a creation request; the account info is validated as of `now` (birth dates). */
export function validateNewExternalAccount(r: NewExternalAccountRequest, now: Date): ValidNewExternalAccount {
  checks()
    .id('platformId', r.platformId, 'Platform')
    .optionalId('customerId', r.customerId, 'Customer')
    .environment('environment', r.environment)
    .done();
  if (r.defaultUmaDepositAccount && !r.customerId)
    checks().add('defaultUmaDepositAccount', 'applies to customer accounts only').done();
  const platformAccountId = validatePlatformAccountId(r.platformAccountId);
  const validated = validateAccountInfo(r.currency, r.accountInfo, now);
  return {
    platformId: r.platformId,
    environment: r.environment!,
    ...(r.customerId ? { customerId: r.customerId } : {}),
    currency: r.currency,
    validated,
    ...(platformAccountId ? { platformAccountId } : {}),
    defaultUmaDepositAccount: r.defaultUmaDepositAccount ?? false,
  };
}
