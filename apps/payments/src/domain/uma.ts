import { CUSTOMER_INFO_FIELDS, parseUmaAddress as parseUmaGrammar, UMA_ADDRESS_RULE, type FieldErrors } from '@sluice/core';
import { fail } from './errors.js';

/** A parsed UMA address `$<localPart>@<domain>` (lower-cased). */
export interface UmaAddress {
  localPart: string;
  domain: string;
  /** Canonical form: `$local@domain`. */
  address: string;
}

/**
 * Parses a UMA address with the one grammar of `@sluice/core` (surrounding blanks ignored,
 * case-insensitive, stored in lower case). Throws INVALID_UMA_ADDRESS naming `field`.
 */
export function parseUmaAddress(value: string, field = 'receiverUmaAddress'): UmaAddress {
  const parsed = parseUmaGrammar(value.trim());
  if (!parsed) {
    throw fail('INVALID_UMA_ADDRESS', `${field}: ${UMA_ADDRESS_RULE}`, {
      field,
      errors: [{ field, message: UMA_ADDRESS_RULE }],
    });
  }
  return { localPart: parsed.user, domain: parsed.domain, address: parsed.address };
}

/** A UMA address (required) as an INVALID_INPUT field error rather than INVALID_UMA_ADDRESS. */
export function checkUmaAddress(errors: FieldErrors, field: string, value: string | undefined): void {
  if (!value) errors.add(field, 'is required');
  else if (!parseUmaGrammar(value.trim())) errors.add(field, UMA_ADDRESS_RULE);
}

/** Field names a receiver may require about the payer (reference: CustomerInfoFieldName). */
export const PAYER_DATA_FIELD_NAMES = CUSTOMER_INFO_FIELDS;
export type PayerDataFieldName = (typeof PAYER_DATA_FIELD_NAMES)[number];

export interface PayerDataField {
  name: PayerDataFieldName;
  mandatory: boolean;
}

/**
 * What a payment to a sandbox receiver will do once executed (stored on the
 * lookup; the execution step reads it): SUCCESS completes, LONG_PENDING stays
 * PROCESSING for a long time (6 min × SANDBOX_TIME_SCALE) before completing,
 * COMPLIANCE_FAILURE fails the payment at the counterparty's compliance check.
 */
export type SandboxReceiverBehavior = 'SUCCESS' | 'LONG_PENDING' | 'COMPLIANCE_FAILURE';

/** What the receiver's counterparty institution tells us about the receiver. */
export interface ReceiverProfile {
  address: string;
  counterpartyName: string;
  /** Currencies the receiver can be paid in. */
  currencies: string[];
  requiredPayerDataFields: PayerDataField[];
  /** Only for sandbox receivers. */
  sandboxBehavior?: SandboxReceiverBehavior;
}

const SANDBOX_RECEIVERS: Readonly<
  Record<string, { currencies: string[]; behavior: SandboxReceiverBehavior }>
> = {
  'success.usd': { currencies: ['USD'], behavior: 'SUCCESS' },
  'success.eur': { currencies: ['EUR'], behavior: 'SUCCESS' },
  'success.mxn': { currencies: ['MXN'], behavior: 'SUCCESS' },
  'pending.long.usd': { currencies: ['USD'], behavior: 'LONG_PENDING' },
  'fail.compliance.usd': { currencies: ['USD'], behavior: 'COMPLIANCE_FAILURE' },
};

/** The behaviour of a sandbox receiver address (`$<local part>@<domain>`), or undefined for another address. */
export function sandboxReceiverBehavior(address: string): SandboxReceiverBehavior | undefined {
  const s = address.trim().toLowerCase();
  const at = s.lastIndexOf('@');
  if (!s.startsWith('$') || at < 0) return undefined;
  return SANDBOX_RECEIVERS[s.slice(1, at)]?.behavior;
}

/** Local parts of the sandbox receivers (`$<local>@<SANDBOX_UMA_DOMAIN>`). */
export const SANDBOX_RECEIVER_LOCAL_PARTS = Object.keys(SANDBOX_RECEIVERS);

/**
 * The specification's sandbox receivers, at the sandbox UMA domain only (any other address is
 * unknown: undefined). Each requires the payer's FULL_NAME (mandatory) and NATIONALITY
 * (optional); the compliance-failure receiver also requires BIRTH_DATE.
 */
export function sandboxReceiverProfile(address: UmaAddress, sandboxDomain: string): ReceiverProfile | undefined {
  if (address.domain !== sandboxDomain.toLowerCase()) return undefined;
  const r = SANDBOX_RECEIVERS[address.localPart];
  if (!r) return undefined;
  const fields: PayerDataField[] = [
    { name: 'FULL_NAME', mandatory: true },
    { name: 'NATIONALITY', mandatory: false },
  ];
  if (r.behavior === 'COMPLIANCE_FAILURE') fields.push({ name: 'BIRTH_DATE', mandatory: true });
  return {
    address: address.address,
    counterpartyName: 'Sluice Sandbox UMA',
    currencies: r.currencies,
    requiredPayerDataFields: fields,
    sandboxBehavior: r.behavior,
  };
}
