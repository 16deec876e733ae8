import { FieldErrors } from './validation.js';
import { isId, type IdType } from './ids.js';
import type { PostalAddress } from './vocabulary.js';
import { CONTROL_CHARACTERS } from './validation.js';

/**
 * Field rules several services share (identity's customers, compliance's beneficial owners),
 * each adding its problem to `FieldErrors` under the field name the public API uses, so one
 * INVALID_INPUT names every bad field.
 */

/** ISO 3166-1 alpha-2 country codes (officially assigned). */
const CODES =
  'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
  'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR ' +
  'GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP ' +
  'KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT ' +
  'MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW ' +
  'SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG ' +
  'UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW';

const COUNTRIES: ReadonlySet<string> = new Set(CODES.split(' '));

/** True for an assigned ISO 3166-1 alpha-2 code (upper case). */
export function isCountryCode(value: unknown): value is string {
  return typeof value === 'string' && COUNTRIES.has(value);
}

/** An id field of a request: its name, its value and the type of id it must be. */
export type IdField = readonly [field: string, value: string, type: IdType];

/** Checks the id fields of a request (`Type:<uuid>`); INVALID_INPUT naming each bad one. */
export function validIds(...fields: IdField[]): void {
  const errors = new FieldErrors();
  for (const [field, value, type] of fields) {
    if (!isId(value, type)) errors.add(field, `must be a ${type} id (${type}:<uuid>)`);
  }
  errors.throwIfAny();
}

/**
 * Checks a free-text field: non-blank, at most `max` characters, no control
 * characters. Returns the value when valid.
 */
export function text(
  p: FieldErrors,
  field: string,
  value: string | undefined,
  max: number,
): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') {
    p.add(field, 'must not be blank');
    return undefined;
  }
  if (value.length > max) {
    p.add(field, `must be at most ${max} characters`);
    return undefined;
  }
  if (CONTROL_CHARACTERS.test(value)) {
    p.add(field, 'must not contain control characters');
    return undefined;
  }
  return value;
}

export function country(p: FieldErrors, field: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!isCountryCode(value)) {
    p.add(field, 'must be an ISO 3166-1 alpha-2 country code (e.g. US)');
    return undefined;
  }
  return value;
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date `YYYY-MM-DD` between 1900-01-01 and `today` (inclusive). */
export function pastDate(
  p: FieldErrors,
  field: string,
  value: string | undefined,
  today: Date,
): string | undefined {
  if (value === undefined) return undefined;
  const m = DATE_RE.exec(value);
  const d = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
  if (!m || !d || d.toISOString().slice(0, 10) !== value) {
    p.add(field, 'must be a calendar date YYYY-MM-DD');
    return undefined;
  }
  if (value < '1900-01-01') {
    p.add(field, 'must not be before 1900-01-01');
    return undefined;
  }
  if (value > today.toISOString().slice(0, 10)) {
    p.add(field, 'must not be in the future');
    return undefined;
  }
  return value;
}

// Practical address check (RFC 5321 lengths, one @, a dotted domain); mailbox
// existence is the platform's concern.
const EMAIL_RE =
  /^[^\s@"(),:;<>[\\\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function email(p: FieldErrors, field: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.length > 254 || !EMAIL_RE.test(value) || value.split('@')[0]!.length > 64) {
    p.add(field, 'must be an email address');
    return undefined;
  }
  return value;
}

/** Reports duplicates in a list of values under `field[i]`; returns true when there were none. */
export function noDuplicates(p: FieldErrors, field: string, values: readonly string[]): boolean {
  const seen = new Set<string>();
  let ok = true;
  values.forEach((v, i) => {
    if (seen.has(v)) {
      p.add(`${field}[${i}]`, `duplicates ${v}`);
      ok = false;
    }
    seen.add(v);
  });
  return ok;
}

/** A postal address (line1, postalCode and country required), fields named `<field>.line1`, ... */
export function postalAddress(p: FieldErrors, field: string, a: PostalAddress): PostalAddress {
  const out: PostalAddress = {
    line1: required(p, `${field}.line1`, a.line1, 200),
    postalCode: required(p, `${field}.postalCode`, a.postalCode, 20),
    country:
      a.country === ''
        ? (p.add(`${field}.country`, 'is required'), '')
        : (country(p, `${field}.country`, a.country) ?? ''),
  };
  const line2 = text(p, `${field}.line2`, a.line2, 200);
  const city = text(p, `${field}.city`, a.city, 100);
  const state = text(p, `${field}.state`, a.state, 100);
  if (line2 !== undefined) out.line2 = line2;
  if (city !== undefined) out.city = city;
  if (state !== undefined) out.state = state;
  return out;
}

function required(p: FieldErrors, field: string, value: string, max: number): string {
  if (value === '') {
    p.add(field, 'is required');
    return '';
  }
  return text(p, field, value, max) ?? '';
}
