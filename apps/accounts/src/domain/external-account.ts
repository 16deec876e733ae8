import {
  EXTERNAL_ACCOUNT_TYPES,
  FieldErrors,
  invalidInput,
  isCurrencyCode,
  PIX_KEY_TYPES,
  type BeneficiaryVerificationStatus,
  type Environment,
  type ExternalAccountStatus,
  type ExternalAccountType,
  type PixKeyType,
  type PostalAddress,
} from '@sluice/core';
import {
  checkAbaRoutingNumber,
  checkBic,
  checkBolt11,
  checkBolt12,
  checkBrTaxId,
  checkClabe,
  checkEmail,
  checkEvmAddress,
  checkIban,
  checkLightningAddress,
  checkPixKey,
  checkSolanaAddress,
  checkSortCode,
  checkSparkAddress,
  checkTronAddress,
  checkUkAccountNumber,
  checkUsAccountNumber,
  normalizeIban,
} from './bank-identifiers.js';
import type { Owner } from './internal-account.js';
import { checks } from './validation.js';


/** The `beneficiary` of a bank account: an INDIVIDUAL (fullName) or a BUSINESS (legalName). */
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

/** `accountInfo` as stored and returned: the fields of its variant only, normalized. */
export interface ExternalAccountInfo {
  accountType: ExternalAccountType;
  accountNumber?: string;
  routingNumber?: string;
  bankAccountType?: 'CHECKING' | 'SAVINGS';
  bankName?: string;
  iban?: string;
  swiftCode?: string;
  sortCode?: string;
  clabeNumber?: string;
  pixKey?: string;
  pixKeyType?: PixKeyType;
  taxId?: string;
  address?: string;
  invoice?: string;
  bolt12?: string;
  lightningAddress?: string;
  beneficiary?: Beneficiary;
}

/** Raw `accountInfo` from a request: anything may be missing or malformed. */
export type AccountInfoInput = { [K in keyof ExternalAccountInfo]?: unknown } & { beneficiary?: unknown };

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

type InfoField = Exclude<keyof ExternalAccountInfo, 'accountType'>;

interface Variant {
  currencies: readonly string[];
  fields: readonly InfoField[];
  /** The field holding the primary identifier (suffix rules, duplicate detection). */
  primary: InfoField;
}

const STABLECOINS = ['USDC', 'USDT'] as const;

/** Each variant: the currencies it can hold, its fields, its primary identifier. */
export const VARIANTS: Readonly<Record<ExternalAccountType, Variant>> = {
  USD_ACCOUNT: {
    currencies: ['USD'],
    fields: ['accountNumber', 'routingNumber', 'bankAccountType', 'bankName', 'beneficiary'],
    primary: 'accountNumber',
  },
  EUR_ACCOUNT: {
    currencies: ['EUR'],
    fields: ['iban', 'swiftCode', 'bankName', 'beneficiary'],
    primary: 'iban',
  },
  GBP_ACCOUNT: {
    currencies: ['GBP'],
    fields: ['sortCode', 'accountNumber', 'bankName', 'beneficiary'],
    primary: 'accountNumber',
  },
  MXN_ACCOUNT: {
    currencies: ['MXN'],
    fields: ['clabeNumber', 'bankName', 'beneficiary'],
    primary: 'clabeNumber',
  },
  BRL_ACCOUNT: {
    currencies: ['BRL'],
    fields: ['pixKey', 'pixKeyType', 'taxId', 'beneficiary'],
    primary: 'pixKey',
  },
  SPARK_WALLET: { currencies: ['BTC'], fields: ['address'], primary: 'address' },
  LIGHTNING: {
    currencies: ['BTC'],
    fields: ['invoice', 'bolt12', 'lightningAddress'],
    primary: 'lightningAddress',
  },
  SOLANA_WALLET: { currencies: STABLECOINS, fields: ['address'], primary: 'address' },
  TRON_WALLET: { currencies: STABLECOINS, fields: ['address'], primary: 'address' },
  POLYGON_WALLET: { currencies: STABLECOINS, fields: ['address'], primary: 'address' },
  BASE_WALLET: { currencies: STABLECOINS, fields: ['address'], primary: 'address' },
  ETHEREUM_WALLET: { currencies: STABLECOINS, fields: ['address'], primary: 'address' },
};

const INFO_FIELDS: readonly InfoField[] = [
  'accountNumber',
  'routingNumber',
  'bankAccountType',
  'bankName',
  'iban',
  'swiftCode',
  'sortCode',
  'clabeNumber',
  'pixKey',
  'pixKeyType',
  'taxId',
  'address',
  'invoice',
  'bolt12',
  'lightningAddress',
  'beneficiary',
];

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
  return v === undefined || v === null || v === '';
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

function validateBeneficiary(c: Collector, raw: unknown, now: Date): Beneficiary | undefined {
  const f = `${P}.beneficiary`;
  if (isBlank(raw)) return undefined;
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
  const fullName =
    type === 'INDIVIDUAL' ? c.required(`${f}.fullName`, b.fullName) : c.optional(`${f}.fullName`, b.fullName);
  const legalName =
    type === 'BUSINESS'
      ? c.required(`${f}.legalName`, b.legalName)
      : c.optional(`${f}.legalName`, b.legalName);
  if (type === 'INDIVIDUAL' && !isBlank(b.legalName))
    c.add(`${f}.legalName`, 'applies to BUSINESS beneficiaries only');
  const birthDate = c.optional(`${f}.birthDate`, b.birthDate, 10);
  c.check(`${f}.birthDate`, birthDate, (v) =>
    !validDate(v)
      ? 'must be a date YYYY-MM-DD'
      : v >= now.toISOString().slice(0, 10)
        ? 'must be in the past'
        : undefined,
  );
  if (type === 'BUSINESS' && birthDate) c.add(`${f}.birthDate`, 'applies to INDIVIDUAL beneficiaries only');
  const nationality = c.optional(`${f}.nationality`, b.nationality, 2);
  c.check(`${f}.nationality`, nationality, (v) =>
    COUNTRY.test(v) ? undefined : 'must be an ISO 3166-1 alpha-2 code',
  );
  const countryOfResidence = c.optional(`${f}.countryOfResidence`, b.countryOfResidence, 2);
  c.check(`${f}.countryOfResidence`, countryOfResidence, (v) =>
    COUNTRY.test(v) ? undefined : 'must be an ISO 3166-1 alpha-2 code',
  );
  const email = c.optional(`${f}.email`, b.email, 254);
  c.check(`${f}.email`, email, checkEmail);
  const phoneNumber = c.optional(`${f}.phoneNumber`, b.phoneNumber, 20);
  c.check(`${f}.phoneNumber`, phoneNumber, (v) =>
    /^\+[1-9][0-9]{6,14}$/.test(v) ? undefined : 'must be in E.164 form (+ and 7 to 15 digits)',
  );
  const registrationNumber = c.optional(`${f}.registrationNumber`, b.registrationNumber, 100);
  const taxId = c.optional(`${f}.taxId`, b.taxId, 50);
  const address = validateAddress(c, `${f}.address`, b.address);
  return {
    beneficiaryType: type,
    ...(fullName ? { fullName } : {}),
    ...(legalName ? { legalName } : {}),
    ...(birthDate ? { birthDate } : {}),
    ...(nationality ? { nationality } : {}),
    ...(email ? { email } : {}),
    ...(phoneNumber ? { phoneNumber } : {}),
    ...(registrationNumber ? { registrationNumber } : {}),
    ...(taxId ? { taxId } : {}),
    ...(countryOfResidence ? { countryOfResidence } : {}),
    ...(address ? { address } : {}),
  };
}

/** Digits only: removes the punctuation people type in CPF/CNPJ/sort codes (`.`, `-`, `/`, spaces). */
function digitsOf(v: string | undefined): string | undefined {
  return v === undefined ? undefined : v.replace(/[\s.\-/]/g, '');
}

/**
 * Validates `currency` and `accountInfo` of a create request: the variant exists and
 * holds that currency, its required fields are present, fields of other variants are
 * absent, every identifier passes its format and checksum rules. Throws one
 * INVALID_INPUT naming every field at fault (`accountInfo.iban`, ...).
 */
export function validateAccountInfo(currency: unknown, raw: unknown, now: Date): ValidatedAccountInfo {
  const c = new Collector();
  if (isBlank(currency)) c.add('currency', 'is required');
  else if (!isCurrencyCode(currency)) c.add('currency', `unknown currency ${JSON.stringify(currency)}`);
  if (raw === undefined || raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    c.add(P, 'is required');
    throw invalidInput(c.errors);
  }
  const a = raw as Record<string, unknown>;
  const type = a.accountType;
  if (!EXTERNAL_ACCOUNT_TYPES.includes(type as ExternalAccountType)) {
    c.add(
      `${P}.accountType`,
      isBlank(type) ? 'is required' : `must be one of ${EXTERNAL_ACCOUNT_TYPES.join(', ')}`,
    );
    throw invalidInput(c.errors);
  }
  const accountType = type as ExternalAccountType;
  const variant = VARIANTS[accountType];
  if (typeof currency === 'string' && isCurrencyCode(currency) && !variant.currencies.includes(currency))
    c.add('currency', `${accountType} accounts hold ${variant.currencies.join(' or ')}, not ${currency}`);
  for (const field of INFO_FIELDS)
    if (!variant.fields.includes(field) && !isBlank(a[field]))
      c.add(`${P}.${field}`, `does not apply to ${accountType}`);

  const info: ExternalAccountInfo = { accountType };
  const set = <K extends InfoField>(k: K, v: ExternalAccountInfo[K] | undefined) => {
    if (v !== undefined) info[k] = v;
  };
  let dedupe: string | undefined;

  switch (accountType) {
    case 'USD_ACCOUNT': {
      const accountNumber = c.required(`${P}.accountNumber`, a.accountNumber, 34);
      c.check(`${P}.accountNumber`, accountNumber, checkUsAccountNumber);
      const routingNumber = c.required(`${P}.routingNumber`, a.routingNumber, 9);
      c.check(`${P}.routingNumber`, routingNumber, checkAbaRoutingNumber);
      const bankAccountType = c.optional(`${P}.bankAccountType`, a.bankAccountType, 10);
      if (bankAccountType !== undefined && bankAccountType !== 'CHECKING' && bankAccountType !== 'SAVINGS')
        c.add(`${P}.bankAccountType`, 'must be CHECKING or SAVINGS');
      set('accountNumber', accountNumber);
      set('routingNumber', routingNumber);
      set('bankAccountType', bankAccountType as ExternalAccountInfo['bankAccountType']);
      dedupe = `${routingNumber}:${accountNumber}`;
      break;
    }
    case 'EUR_ACCOUNT': {
      const raw = c.required(`${P}.iban`, a.iban, 42);
      const iban = raw === undefined ? undefined : normalizeIban(raw);
      c.check(`${P}.iban`, iban, checkIban);
      const swift = c.optional(`${P}.swiftCode`, a.swiftCode, 11)?.toUpperCase();
      c.check(`${P}.swiftCode`, swift, checkBic);
      if (swift && iban && swift.length >= 6 && swift.slice(4, 6) !== iban.slice(0, 2))
        c.add(
          `${P}.swiftCode`,
          `country ${swift.slice(4, 6)} does not match the IBAN country ${iban.slice(0, 2)}`,
        );
      set('iban', iban);
      set('swiftCode', swift);
      break;
    }
    case 'GBP_ACCOUNT': {
      const sortCode = digitsOf(c.required(`${P}.sortCode`, a.sortCode, 8));
      c.check(`${P}.sortCode`, sortCode, checkSortCode);
      const accountNumber = c.required(`${P}.accountNumber`, a.accountNumber, 8);
      c.check(`${P}.accountNumber`, accountNumber, checkUkAccountNumber);
      set('sortCode', sortCode);
      set('accountNumber', accountNumber);
      dedupe = `${sortCode}:${accountNumber}`;
      break;
    }
    case 'MXN_ACCOUNT': {
      const clabe = c.required(`${P}.clabeNumber`, a.clabeNumber, 18);
      c.check(`${P}.clabeNumber`, clabe, checkClabe);
      set('clabeNumber', clabe);
      break;
    }
    case 'BRL_ACCOUNT': {
      const keyType = c.required(`${P}.pixKeyType`, a.pixKeyType, 6);
      if (keyType !== undefined && !PIX_KEY_TYPES.includes(keyType as PixKeyType))
        c.add(`${P}.pixKeyType`, `must be one of ${PIX_KEY_TYPES.join(', ')}`);
      let pixKey = c.required(`${P}.pixKey`, a.pixKey, 77);
      if (pixKey !== undefined && PIX_KEY_TYPES.includes(keyType as PixKeyType)) {
        const t = keyType as PixKeyType;
        if (t === 'CPF' || t === 'CNPJ') pixKey = digitsOf(pixKey);
        else if (t === 'PHONE') pixKey = pixKey.replace(/[\s\-()]/g, '');
        else if (t === 'EMAIL' || t === 'RANDOM') pixKey = pixKey.toLowerCase();
        c.check(`${P}.pixKey`, pixKey, (v) => checkPixKey(t, v));
        set('pixKeyType', t);
      }
      const taxId = digitsOf(c.required(`${P}.taxId`, a.taxId, 18));
      c.check(`${P}.taxId`, taxId, checkBrTaxId);
      set('pixKey', pixKey);
      set('taxId', taxId);
      break;
    }
    case 'SPARK_WALLET':
    case 'SOLANA_WALLET':
    case 'TRON_WALLET':
    case 'POLYGON_WALLET':
    case 'BASE_WALLET':
    case 'ETHEREUM_WALLET': {
      const address = c.required(`${P}.address`, a.address, 130);
      const rule =
        accountType === 'SPARK_WALLET'
          ? checkSparkAddress
          : accountType === 'SOLANA_WALLET'
            ? checkSolanaAddress
            : accountType === 'TRON_WALLET'
              ? checkTronAddress
              : checkEvmAddress;
      c.check(`${P}.address`, address, rule);
      set('address', address);
      // EVM addresses are case-insensitive (the case only carries the checksum).
      dedupe = rule === checkEvmAddress ? address?.toLowerCase() : address;
      break;
    }
    case 'LIGHTNING': {
      const invoice = c.optional(`${P}.invoice`, a.invoice, 2000);
      const bolt12 = c.optional(`${P}.bolt12`, a.bolt12, 2000);
      const lightningAddress = c.optional(`${P}.lightningAddress`, a.lightningAddress, 320)?.toLowerCase();
      const given = [invoice, bolt12, lightningAddress].filter((v) => v !== undefined).length;
      if (given !== 1 && !c.errors.some((e) => e.field.startsWith(`${P}.`)))
        c.add(P, 'exactly one of invoice, bolt12 or lightningAddress is required');
      c.check(`${P}.invoice`, invoice, checkBolt11);
      c.check(`${P}.bolt12`, bolt12, checkBolt12);
      c.check(`${P}.lightningAddress`, lightningAddress, checkLightningAddress);
      set('invoice', invoice);
      set('bolt12', bolt12);
      set('lightningAddress', lightningAddress);
      break;
    }
  }

  if (variant.fields.includes('bankName')) set('bankName', c.optional(`${P}.bankName`, a.bankName, 140));
  if (variant.fields.includes('beneficiary')) set('beneficiary', validateBeneficiary(c, a.beneficiary, now));

  c.throwIfAny();

  const primaryField: InfoField =
    accountType === 'LIGHTNING'
      ? info.lightningAddress !== undefined
        ? 'lightningAddress'
        : info.invoice !== undefined
          ? 'invoice'
          : 'bolt12'
      : variant.primary;
  const primaryIdentifier = info[primaryField] as string;
  return {
    info,
    primaryIdentifier,
    primaryField: `${P}.${primaryField}`,
    dedupeKey: `${accountType}:${dedupe ?? primaryIdentifier}`,
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
