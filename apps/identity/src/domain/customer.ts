import { CURRENCIES, FieldErrors, idUuid, isCurrencyCode, isRequestKey, postalAddress as address, type Environment, type PostalAddress } from '@sluice/core';
import { country, email, noDuplicates, pastDate, range, text } from './validation.js';
import { normalizeUmaAddress } from './uma-address.js';
import { fail } from './errors.js';
export { CUSTOMER_TYPES, VERIFICATION_STATUSES, ENTITY_TYPES, BUSINESS_TYPES, PURPOSES_OF_ACCOUNT, MONTHLY_TRANSACTION_COUNTS, MONTHLY_TRANSACTION_VOLUMES } from '@sluice/core';
import { CUSTOMER_TYPES, VERIFICATION_STATUSES, ENTITY_TYPES, BUSINESS_TYPES, PURPOSES_OF_ACCOUNT, MONTHLY_TRANSACTION_COUNTS, MONTHLY_TRANSACTION_VOLUMES } from '@sluice/core';

export type CustomerType = (typeof CUSTOMER_TYPES)[number];

export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];


/** Business details (REST BusinessInfo); every field optional except legalName at creation. */
export interface BusinessInfo {
  legalName?: string;
  doingBusinessAs?: string;
  country?: string;
  registrationNumber?: string;
  incorporatedOn?: string;
  entityType?: string;
  taxId?: string;
  countriesOfOperation?: string[];
  businessType?: string;
  purposeOfAccount?: string;
  sourceOfFunds?: string;
  expectedMonthlyTransactionCount?: string;
  expectedMonthlyTransactionVolume?: string;
  expectedRecipientJurisdictions?: string[];
}

export interface Customer {
  id: string;
  platformId: string;
  platformCustomerId: string;
  customerType: CustomerType;
  region?: string;
  currencies: string[];
  email?: string;
  umaAddress: string;
  /** kycStatus of an individual, kybStatus of a business. */
  verificationStatus: VerificationStatus;
  fullName?: string;
  birthDate?: string;
  nationality?: string;
  address?: PostalAddress;
  businessInfo?: BusinessInfo;
  createdAt: Date;
  updatedAt: Date;
  deletedAt?: Date;
}

/** What a platform sends to create a customer (already decoded from the wire). */
export interface NewCustomerInput {
  customerType?: CustomerType;
  platformCustomerId?: string;
  region?: string;
  /** Empty: the platform's supported currencies. */
  currencies: string[];
  email?: string;
  umaAddress?: string;
  fullName?: string;
  birthDate?: string;
  nationality?: string;
  address?: PostalAddress;
  businessInfo?: BusinessInfo;
  /** kycStatus (INDIVIDUAL) / kybStatus (BUSINESS): only a self-verifying platform sets it. */
  verificationStatus?: VerificationStatus;
}

/** What a platform sends to update a customer. */
export interface CustomerUpdateInput {
  customerType?: CustomerType;
  email?: string;
  umaAddress?: string;
  currencies?: string[];
  fullName?: string;
  birthDate?: string;
  nationality?: string;
  address?: PostalAddress;
  businessInfo?: BusinessInfo;
  /** New kycStatus (INDIVIDUAL) / kybStatus (BUSINESS): only a self-verifying platform sets it. */
  verificationStatus?: VerificationStatus;
}

/** Facts about the platform the rules need. */
export interface CustomerContext {
  /** Codes of the platform's supported currencies. */
  supportedCurrencies: string[];
  today: Date;
  /**
   * The platform is a regulated financial institution (isRegulatedFinancialInstitution, the
   * operator's flag): it verifies its own customers and may set their kycStatus / kybStatus.
   */
  selfVerifying: boolean;
}

/** A validated creation; `umaAddress`/`platformCustomerId` absent means "generate". */
export type ValidCustomerDraft = Omit<NewCustomerInput, 'customerType' | 'currencies'> & {
  customerType: CustomerType;
  currencies: string[];
};

const INDIVIDUAL_ONLY = ['fullName', 'birthDate', 'nationality'] as const;

/** Validates a creation request; throws INVALID_INPUT naming every bad field. */
export function validateNewCustomer(input: NewCustomerInput, ctx: CustomerContext): ValidCustomerDraft {
  const p = new FieldErrors();
  if (!input.customerType) p.add('customerType', 'must be INDIVIDUAL or BUSINESS');
  const draft: ValidCustomerDraft = { customerType: input.customerType ?? 'INDIVIDUAL', currencies: [] };
  if (input.platformCustomerId !== undefined)
    draft.platformCustomerId = text(p, 'platformCustomerId', input.platformCustomerId, 255);
  if (input.region !== undefined) draft.region = country(p, 'region', input.region);
  draft.currencies = input.currencies.length
    ? currencies(p, 'currencies', input.currencies, new Set(ctx.supportedCurrencies))
    : [...ctx.supportedCurrencies];
  if (draft.currencies.length === 0 && !p.any)
    p.add('currencies', 'the platform supports no currency; set supportedCurrencies in the config first');
  draft.email = email(p, 'email', input.email);
  draft.umaAddress = normalizeUmaAddress(p, 'umaAddress', input.umaAddress);
  personFields(p, input, draft, ctx.today, input.customerType);
  draft.verificationStatus = verificationStatus(p, input.verificationStatus, input.customerType, ctx);
  if (input.address) draft.address = address(p, 'address', input.address);
  if (input.customerType === 'BUSINESS') {
    if (!input.businessInfo || input.businessInfo.legalName === undefined)
      p.add('businessInfo.legalName', 'is required for a BUSINESS customer');
    if (input.businessInfo) draft.businessInfo = businessInfo(p, input.businessInfo, ctx.today);
  } else if (input.businessInfo && input.customerType) {
    p.add('businessInfo', 'is only for BUSINESS customers');
  }
  p.throwIfAny();
  return stripUndefined(draft);
}

/**
 * The kycStatus / kybStatus a platform asks for (named as the public API names it for the
 * customer's type), when the platform may set it: only a regulated financial institution
 * verifies its own customers; for anyone else compliance decides it (POST /verifications).
 */
function verificationStatus(
  p: FieldErrors,
  value: VerificationStatus | undefined,
  type: CustomerType | undefined,
  ctx: CustomerContext,
): VerificationStatus | undefined {
  if (value === undefined) return undefined;
  const field = type === 'BUSINESS' ? 'kybStatus' : 'kycStatus';
  if (!VERIFICATION_STATUSES.includes(value)) {
    p.add(field, `must be one of ${VERIFICATION_STATUSES.join(', ')}`);
    return undefined;
  }
  if (!ctx.selfVerifying) {
    p.add(
      field,
      'can only be set by a platform that is a regulated financial institution ' +
        '(isRegulatedFinancialInstitution); verify the customer with POST /verifications instead',
    );
    return undefined;
  }
  return value;
}

/**
 * The customer a validated creation makes: KYC/KYB status UNVERIFIED (a status the platform
 * gave is applied afterwards, as a change), and the uuid of its id as platformCustomerId when
 * the platform gave none.
 */
export function newCustomer(
  draft: ValidCustomerDraft,
  o: { id: string; platformId: string; umaAddress: string; now: Date },
): Customer {
  const {
    platformCustomerId,
    umaAddress: _given,
    verificationStatus: _applied,
    address,
    businessInfo,
    ...fields
  } = draft;
  const customer: Customer = {
    ...fields,
    id: o.id,
    platformId: o.platformId,
    platformCustomerId: platformCustomerId ?? idUuid(o.id),
    currencies: [...draft.currencies],
    umaAddress: o.umaAddress,
    verificationStatus: 'UNVERIFIED',
    address: address ? { ...address } : undefined,
    businessInfo: businessInfo ? { ...businessInfo } : undefined,
    createdAt: o.now,
    updatedAt: o.now,
  };
  return stripUndefined(customer);
}

/** The Idempotency-Key of a creation request, when given: 1 to 255 visible ASCII characters. */
export function validateRequestKey(requestKey: string | undefined): void {
  if (requestKey !== undefined && !isRequestKey(requestKey))
    new FieldErrors().add('requestKey', 'must be 1 to 255 visible ASCII characters').throwIfAny();
}

/**
 * Applies an update to a customer; returns the new customer (timestamps not
 * touched, kycStatus/kybStatus not changed: a valid `verificationStatus` is the
 * caller's to apply as a status change) or throws INVALID_INPUT / CUSTOMER_DELETED.
 */
export function applyCustomerUpdate(
  current: Customer,
  input: CustomerUpdateInput,
  ctx: CustomerContext,
): Customer {
  if (current.deletedAt)
    throw fail('CUSTOMER_DELETED', 'The customer has been deleted', { customerId: current.id });
  const p = new FieldErrors();
  if (!input.customerType) p.add('customerType', 'must be INDIVIDUAL or BUSINESS');
  else if (input.customerType !== current.customerType)
    p.add('customerType', `must be ${current.customerType}, the type of this customer`);
  const next: Customer = { ...current };
  if (input.email !== undefined) next.email = email(p, 'email', input.email);
  if (input.umaAddress !== undefined)
    next.umaAddress = normalizeUmaAddress(p, 'umaAddress', input.umaAddress) ?? current.umaAddress;
  if (input.currencies !== undefined) {
    if (input.currencies.length === 0) p.add('currencies', 'must list at least one currency');
    // Currencies the customer already has stay allowed even if the platform dropped them since.
    next.currencies = currencies(
      p,
      'currencies',
      input.currencies,
      new Set([...ctx.supportedCurrencies, ...current.currencies]),
    );
  }
  const person: ValidCustomerDraft = { customerType: current.customerType, currencies: [] };
  personFields(p, input, person, ctx.today, current.customerType);
  for (const k of INDIVIDUAL_ONLY) if (person[k] !== undefined) next[k] = person[k];
  // Checked here with the other fields; the service applies it as a status change (its webhook).
  verificationStatus(p, input.verificationStatus, current.customerType, ctx);
  if (input.address) next.address = address(p, 'address', input.address);
  if (input.businessInfo) {
    if (current.customerType !== 'BUSINESS') p.add('businessInfo', 'is only for BUSINESS customers');
    else
      next.businessInfo = {
        ...current.businessInfo,
        ...stripUndefined(businessInfo(p, input.businessInfo, ctx.today)),
      };
  }
  p.throwIfAny();
  return stripUndefined(next);
}

function personFields(
  p: FieldErrors,
  input: Pick<NewCustomerInput, 'fullName' | 'birthDate' | 'nationality'>,
  out: Pick<ValidCustomerDraft, 'fullName' | 'birthDate' | 'nationality'>,
  today: Date,
  type: CustomerType | undefined,
): void {
  if (type === 'BUSINESS') {
    for (const k of INDIVIDUAL_ONLY)
      if (input[k] !== undefined) p.add(k, 'is only for INDIVIDUAL customers (use businessInfo)');
    return;
  }
  out.fullName = text(p, 'fullName', input.fullName, 200);
  out.birthDate = pastDate(p, 'birthDate', input.birthDate, today);
  out.nationality = country(p, 'nationality', input.nationality);
}

function currencies(p: FieldErrors, field: string, codes: string[], allowed: Set<string>): string[] {
  codes.forEach((code, i) => {
    if (!isCurrencyCode(code))
      p.add(`${field}[${i}]`, `must be one of ${Object.keys(CURRENCIES).join(', ')}`);
    else if (!allowed.has(code))
      p.add(`${field}[${i}]`, `${code} is not a supported currency of the platform (see GET /config)`);
  });
  noDuplicates(p, field, codes);
  return [...codes];
}

function oneOf(
  p: FieldErrors,
  field: string,
  value: string | undefined,
  allowed: readonly string[],
): string | undefined {
  if (value === undefined) return undefined;
  if (!allowed.includes(value)) {
    p.add(field, `must be one of ${allowed.join(', ')}`);
    return undefined;
  }
  return value;
}

function countries(p: FieldErrors, field: string, list: string[] | undefined): string[] | undefined {
  if (list === undefined) return undefined;
  list.forEach((c, i) => country(p, `${field}[${i}]`, c));
  noDuplicates(p, field, list);
  return [...list];
}

function businessInfo(p: FieldErrors, b: BusinessInfo, today: Date): BusinessInfo {
  const f = 'businessInfo';
  return stripUndefined({
    legalName: text(p, `${f}.legalName`, b.legalName, 300),
    doingBusinessAs: text(p, `${f}.doingBusinessAs`, b.doingBusinessAs, 300),
    country: country(p, `${f}.country`, b.country),
    registrationNumber: text(p, `${f}.registrationNumber`, b.registrationNumber, 100),
    incorporatedOn: pastDate(p, `${f}.incorporatedOn`, b.incorporatedOn, today),
    entityType: oneOf(p, `${f}.entityType`, b.entityType, ENTITY_TYPES),
    taxId: text(p, `${f}.taxId`, b.taxId, 100),
    countriesOfOperation: countries(p, `${f}.countriesOfOperation`, b.countriesOfOperation),
    businessType: oneOf(p, `${f}.businessType`, b.businessType, BUSINESS_TYPES),
    purposeOfAccount: oneOf(p, `${f}.purposeOfAccount`, b.purposeOfAccount, PURPOSES_OF_ACCOUNT),
    sourceOfFunds: text(p, `${f}.sourceOfFunds`, b.sourceOfFunds, 1000),
    expectedMonthlyTransactionCount: oneOf(
      p,
      `${f}.expectedMonthlyTransactionCount`,
      b.expectedMonthlyTransactionCount,
      MONTHLY_TRANSACTION_COUNTS,
    ),
    expectedMonthlyTransactionVolume: oneOf(
      p,
      `${f}.expectedMonthlyTransactionVolume`,
      b.expectedMonthlyTransactionVolume,
      MONTHLY_TRANSACTION_VOLUMES,
    ),
    expectedRecipientJurisdictions: countries(
      p,
      `${f}.expectedRecipientJurisdictions`,
      b.expectedRecipientJurisdictions,
    ),
  });
}

function stripUndefined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

/**
 * The domain of generated UMA addresses: the platform's umaDomain, else (sandbox
 * only) the shared sandbox domain. A production platform must configure one.
 */
export function umaDomainFor(
  environment: Environment,
  platformUmaDomain: string | undefined,
  sandboxDomain: string,
): string {
  if (platformUmaDomain) return platformUmaDomain;
  if (environment === 'SANDBOX') return sandboxDomain.toLowerCase();
  throw fail(
    'UMA_DOMAIN_NOT_CONFIGURED',
    'Set umaDomain with PATCH /config before creating customers without an umaAddress',
  );
}

/** Filters of a customer listing (validated). */
export interface CustomerFilter {
  platformCustomerId?: string;
  customerType?: CustomerType;
  createdAfter?: Date;
  createdBefore?: Date;
  updatedAfter?: Date;
  updatedBefore?: Date;
  region?: string;
  currency?: string;
  umaAddress?: string;
  includeDeleted: boolean;
}

/** Validates listing filters; throws INVALID_INPUT naming every bad one. */
export function validateCustomerFilter(input: CustomerFilter): CustomerFilter {
  const p = new FieldErrors();
  const out: CustomerFilter = { ...input };
  if (input.platformCustomerId !== undefined) text(p, 'platformCustomerId', input.platformCustomerId, 255);
  range(p, 'createdAfter', input.createdAfter, 'createdBefore', input.createdBefore);
  range(p, 'updatedAfter', input.updatedAfter, 'updatedBefore', input.updatedBefore);
  if (input.region !== undefined) country(p, 'region', input.region);
  if (input.currency !== undefined && !isCurrencyCode(input.currency))
    p.add('currency', 'must be a known currency code');
  if (input.umaAddress !== undefined) out.umaAddress = normalizeUmaAddress(p, 'umaAddress', input.umaAddress);
  p.throwIfAny();
  return stripUndefined(out);
}
