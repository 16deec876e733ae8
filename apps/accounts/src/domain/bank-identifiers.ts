import {
  PHONE_PLANS,
  SEPA_IBAN_COUNTRIES,
  checkBolt11,
  checkBolt12,
  checkLightningAddress,
  checkWalletAddress,
  type FieldFormat,
  type PixKeyType,
} from '@sluice/core';

/**
 * Format and checksum rules of bank identifiers (the wallet and Lightning grammars are
 * @sluice/core's wallet-addresses.ts, shared with payments). Each check returns
 * undefined when the value is valid, else the reason (the field error message).
 * Inputs are expected already normalized (see the `normalize*` helpers).
 */

const DIGITS = /^[0-9]+$/;

/** US ABA routing number: 9 digits, weights 3-7-1, sum ≡ 0 (mod 10). */
export function checkAbaRoutingNumber(v: string): string | undefined {
  if (!/^[0-9]{9}$/.test(v)) return 'must be 9 digits';
  const d = [...v].map(Number);
  const sum = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!);
  if (sum % 10 !== 0) return 'checksum does not match';
  // Federal Reserve prefixes: 00-12 (banks), 21-32 (thrifts), 61-72 (electronic), 80 (traveler's checks).
  const prefix = Number(v.slice(0, 2));
  const known =
    prefix <= 12 || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix === 80;
  return known ? undefined : 'is not a valid routing number prefix';
}

/** US bank account number: 4 to 17 digits. */
export function checkUsAccountNumber(v: string): string | undefined {
  return /^[0-9]{4,17}$/.test(v) ? undefined : 'must be 4 to 17 digits';
}

/** IBAN lengths per country (ISO 13616 registry) for the countries we accept. */
export const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AT: 20,
  BE: 16,
  BG: 22,
  CH: 21,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FR: 27,
  GB: 22,
  GI: 23,
  GR: 27,
  HR: 21,
  HU: 28,
  IE: 22,
  IS: 26,
  IT: 27,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MT: 31,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PT: 25,
  RO: 24,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  VA: 22,
};

/**
 * The national format (BBAN, after the check digits) of each accepted IBAN country, from the
 * ISO 13616 registry: n digits, a upper-case letters, c letters or digits. The length of each
 * is its IBAN's length less 4 (a test keeps the two tables in step).
 */
const n = (k: number) => `[0-9]{${k}}`;
const a = (k: number) => `[A-Z]{${k}}`;
const c = (k: number) => `[A-Z0-9]{${k}}`;
const bban = (...parts: string[]) => new RegExp(`^${parts.join('')}$`);
export const BBAN_FORMATS: Readonly<Record<string, RegExp>> = {
  AD: bban(n(8), c(12)),
  AE: bban(n(19)),
  AT: bban(n(16)),
  BE: bban(n(12)),
  BG: bban(a(4), n(6), c(8)),
  CH: bban(n(5), c(12)),
  CY: bban(n(8), c(16)),
  CZ: bban(n(20)),
  DE: bban(n(18)),
  DK: bban(n(14)),
  EE: bban(n(16)),
  EG: bban(n(25)),
  ES: bban(n(20)),
  FI: bban(n(14)),
  FR: bban(n(10), c(11), n(2)),
  GB: bban(a(4), n(14)),
  GI: bban(a(4), c(15)),
  GR: bban(n(7), c(16)),
  HR: bban(n(17)),
  HU: bban(n(24)),
  IE: bban(a(4), n(14)),
  IS: bban(n(22)),
  IT: bban(a(1), n(10), c(12)),
  LI: bban(n(5), c(12)),
  LT: bban(n(16)),
  LU: bban(n(3), c(13)),
  LV: bban(a(4), c(13)),
  MC: bban(n(10), c(11), n(2)),
  MT: bban(a(4), n(5), c(18)),
  NL: bban(a(4), n(10)),
  NO: bban(n(11)),
  PK: bban(a(4), n(16)),
  PL: bban(n(24)),
  PT: bban(n(21)),
  RO: bban(a(4), c(16)),
  SE: bban(n(20)),
  SI: bban(n(15)),
  SK: bban(n(20)),
  SM: bban(a(1), n(10), c(12)),
  VA: bban(n(18)),
};

/** Removes spaces and upper-cases (IBANs are often written in groups of four). */
export function normalizeIban(v: string): string {
  return v.replace(/\s+/g, '').toUpperCase();
}

/** ISO 7064 mod 97-10 of an alphanumeric string (letters as 10..35). */
function mod97(s: string): number {
  let rem = 0;
  for (const ch of s) {
    const code = ch.charCodeAt(0);
    const val = code >= 65 ? String(code - 55) : ch;
    for (const digit of val) rem = (rem * 10 + Number(digit)) % 97;
  }
  return rem;
}

/**
 * IBAN of one of `countries` (default: the SEPA countries of EUR accounts): the country's
 * length and BBAN format, check digits mod 97 = 1.
 */
export function checkIban(
  iban: string,
  countries: readonly string[] = SEPA_IBAN_COUNTRIES,
): string | undefined {
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/.test(iban))
    return 'must be 2 letters, 2 check digits and 11 to 30 letters or digits';
  const country = iban.slice(0, 2);
  const len = IBAN_LENGTHS[country];
  if (len === undefined || !countries.includes(country))
    return countries.length === 1
      ? `must be an IBAN of ${countries[0]}, not ${country}`
      : `country ${country} is not supported for EUR accounts`;
  if (iban.length !== len) return `must be ${len} characters for ${country}`;
  if (!BBAN_FORMATS[country]!.test(iban.slice(4))) return `is not in the IBAN format of ${country}`;
  if (mod97(iban.slice(4) + iban.slice(0, 4)) !== 1) return 'checksum does not match';
  return undefined;
}

/**
 * SWIFT/BIC: 4-letter bank, 2-letter country, 2 location characters, optional 3 branch
 * characters; when `country` is given, the BIC's country must be it.
 */
export function checkBic(v: string, country?: string): string | undefined {
  if (!/^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(v))
    return 'must be a BIC of 8 or 11 characters (e.g. DEUTDEFF or DEUTDEFF500)';
  if (country && v.slice(4, 6) !== country)
    return `country ${v.slice(4, 6)} does not match the account country ${country}`;
  return undefined;
}

/** `min` to `max` digits (spaces and hyphens removed by the caller). */
export function checkDigits(v: string, min: number, max: number): string | undefined {
  if (new RegExp(`^[0-9]{${min},${max}}$`).test(v)) return undefined;
  return min === max ? `must be ${min} digits` : `must be ${min} to ${max} digits`;
}

/**
 * A mobile number in E.164 of one of `countries` (PHONE_PLANS: calling code and national
 * number length), e.g. +254712345678 for Kenya.
 */
export function checkPhone(v: string, countries: readonly string[]): string | undefined {
  const plans = countries.map((c) => ({ country: c, ...PHONE_PLANS[c]! }));
  const expected = plans.map((p) => `+${p.code}`).join(' or ');
  if (!/^\+[1-9][0-9]{5,14}$/.test(v))
    return `must be a phone number in E.164 form (${expected} and the number)`;
  for (const p of plans)
    if (v.startsWith(`+${p.code}`)) {
      const national = v.length - 1 - p.code.length;
      if (p.lengths.includes(national)) return undefined;
      return `must have ${p.lengths.join(' or ')} digits after +${p.code} (${p.country})`;
    }
  return `must be a phone number of ${countries.join(' or ')} (${expected})`;
}

/** UPI virtual payment address: `handle@psp` (letters, digits, . - _ before the @; letters and digits after). */
export function checkVpa(v: string): string | undefined {
  return v.length >= 3 && v.length <= 255 && /^[a-z0-9.\-_]+@[a-z0-9]+$/.test(v)
    ? undefined
    : 'must be a UPI address (handle@psp)';
}

/** Mexican CLABE: 18 digits; the 18th is the check digit (weights 3-7-1, mod 10). */
export function checkClabe(v: string): string | undefined {
  if (!/^[0-9]{18}$/.test(v)) return 'must be 18 digits';
  const weights = [3, 7, 1];
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += (Number(v[i]) * weights[i % 3]!) % 10;
  const check = (10 - (sum % 10)) % 10;
  return check === Number(v[17]) ? undefined : 'check digit does not match';
}

/** Brazilian CPF: 11 digits with two mod-11 check digits; repeated digits are invalid. */
export function checkCpf(v: string): string | undefined {
  if (!/^[0-9]{11}$/.test(v)) return 'must be a CPF of 11 digits';
  if (/^(\d)\1{10}$/.test(v)) return 'is not a valid CPF';
  const d = [...v].map(Number);
  const digit = (n: number) => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += d[i]! * (n + 1 - i);
    const r = (sum * 10) % 11;
    return r === 10 ? 0 : r;
  };
  return digit(9) === d[9] && digit(10) === d[10] ? undefined : 'CPF check digits do not match';
}

/** Brazilian CNPJ: 14 digits with two mod-11 check digits; repeated digits are invalid. */
export function checkCnpj(v: string): string | undefined {
  if (!/^[0-9]{14}$/.test(v)) return 'must be a CNPJ of 14 digits';
  if (/^(\d)\1{13}$/.test(v)) return 'is not a valid CNPJ';
  const d = [...v].map(Number);
  const digit = (n: number) => {
    const weights = n === 12 ? [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] : [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
    const sum = weights.reduce((acc, w, i) => acc + w * d[i]!, 0);
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  return digit(12) === d[12] && digit(13) === d[13] ? undefined : 'CNPJ check digits do not match';
}

/** A Brazilian tax id: a valid CPF (11 digits) or CNPJ (14 digits). */
export function checkBrTaxId(v: string): string | undefined {
  if (!DIGITS.test(v) || (v.length !== 11 && v.length !== 14))
    return 'must be a CPF (11 digits) or CNPJ (14 digits)';
  return v.length === 11 ? checkCpf(v) : checkCnpj(v);
}

const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** An e-mail address (RFC 5322 dot-atom local part, a dotted domain), at most 254 characters. */
export function checkEmail(v: string): string | undefined {
  return v.length <= 254 && EMAIL.test(v) ? undefined : 'must be an e-mail address';
}

/**
 * A PIX key of the given type: CPF / CNPJ (digits, valid check digits), EMAIL (at most
 * 77 characters), PHONE (+55, 2-digit area code, 8 or 9 digits), RANDOM (an EVP UUID).
 */
export function checkPixKey(type: PixKeyType, key: string): string | undefined {
  switch (type) {
    case 'CPF':
      return checkCpf(key);
    case 'CNPJ':
      return checkCnpj(key);
    case 'EMAIL':
      if (key.length > 77) return 'must be at most 77 characters';
      return checkEmail(key);
    case 'PHONE':
      return /^\+55[1-9][0-9][0-9]{8,9}$/.test(key)
        ? undefined
        : 'must be a Brazilian phone number in E.164 form (+55, area code, 8 or 9 digits)';
    case 'RANDOM':
      return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(key)
        ? undefined
        : 'must be a random key (EVP UUID)';
  }
}

/** UK sort code: 6 digits (hyphens and spaces removed by the caller). */
export function checkSortCode(v: string): string | undefined {
  return /^[0-9]{6}$/.test(v) ? undefined : 'must be 6 digits';
}

/** UK account number: 8 digits. */
export function checkUkAccountNumber(v: string): string | undefined {
  return /^[0-9]{8}$/.test(v) ? undefined : 'must be 8 digits';
}

/**
 * The normalized form of a field of `format`: digits without spaces and hyphens; IBAN and BIC
 * without spaces, upper case; phone numbers without spaces, hyphens, dots and parentheses;
 * UPI and lightning addresses lower case. Other values as given (trimmed by the caller).
 */
export function normalizeField(format: FieldFormat, v: string): string {
  switch (format.kind) {
    case 'digits':
    case 'clabe':
    case 'aba':
      return v.replace(/[\s-]/g, '');
    case 'iban':
      return normalizeIban(v);
    case 'bic':
      return v.replace(/\s+/g, '').toUpperCase();
    case 'phone':
      return v.replace(/[\s\-().]/g, '');
    case 'brTaxId':
      return v.replace(/[\s.\-/]/g, '');
    case 'vpa':
    case 'lightningAddress':
      return v.toLowerCase();
    default:
      return v;
  }
}

/**
 * The rule of each field format (the pix key and the BIC's country need the other fields: the
 * caller checks them with `checkPixKey` and `checkBic(v, country)`). undefined when valid.
 */
export function checkField(format: FieldFormat, v: string): string | undefined {
  switch (format.kind) {
    case 'digits':
      return checkDigits(v, format.min, format.max);
    case 'aba':
      return checkAbaRoutingNumber(v);
    case 'iban':
      return checkIban(v, format.countries);
    case 'bic':
      return checkBic(v);
    case 'clabe':
      return checkClabe(v);
    case 'brTaxId':
      return checkBrTaxId(v);
    case 'vpa':
      return checkVpa(v);
    case 'phone':
      return checkPhone(v, format.countries);
    case 'text':
      return v.length <= format.max ? undefined : `must be at most ${format.max} characters`;
    case 'enum':
      return format.values.includes(v) ? undefined : `must be one of ${format.values.join(', ')}`;
    case 'wallet':
      return checkWalletAddress(format.network, v);
    case 'bolt11':
      return checkBolt11(v);
    case 'bolt12':
      return checkBolt12(v);
    case 'lightningAddress':
      return checkLightningAddress(v);
    case 'pixKey':
      return undefined;
  }
}
