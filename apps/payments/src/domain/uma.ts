import { fail } from './errors.js';
import { CUSTOMER_INFO_FIELDS } from '@sluice/core';

/** A parsed UMA address `$<localPart>@<domain>` (lower-cased). */
export interface UmaAddress {
  localPart: string;
  domain: string;
  /** Canonical form: `$local@domain`. */
  address: string;
}

const LOCAL = /^[a-z0-9._+-]{1,64}$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Parses a UMA address (UMA: `$` + local part of letters, digits, `.`, `_`, `+`,
 * `-`, at most 64 characters, `@` + a domain name with at least two labels;
 * case-insensitive). Throws INVALID_UMA_ADDRESS naming `field`.
 */
export function parseUmaAddress(value: string, field = 'receiverUmaAddress'): UmaAddress {
  const bad = (why: string) =>
    fail('INVALID_UMA_ADDRESS', `${field}: ${why}`, { field, errors: [{ field, message: why }] });
  const s = value.trim().toLowerCase();
  if (!s.startsWith('$')) throw bad('a UMA address starts with "$" ($alice@example.com)');
  const at = s.lastIndexOf('@');
  if (at < 0 || s.indexOf('@') !== at) throw bad('a UMA address has exactly one "@"');
  const localPart = s.slice(1, at);
  const domain = s.slice(at + 1);
  if (!LOCAL.test(localPart))
    throw bad('the part before "@" must be 1 to 64 letters, digits, ".", "_", "+" or "-"');
  const labels = domain.split('.');
  if (domain.length > 253 || labels.length < 2 || !labels.every((l) => LABEL.test(l))) {
    throw bad('the part after "@" must be a domain name such as example.com');
  }
  return { localPart, domain, address: `$${localPart}@${domain}` };
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

/**
 * A UMA counterparty: resolves a receiver at another institution (UMA LNURLP
 * lookup in production). Returns undefined when the institution says the
 * receiver does not exist.
 */
export interface UmaCounterparty {
  lookupReceiver(address: UmaAddress): Promise<ReceiverProfile | undefined>;
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
 * The sandbox counterparty: the fixed receivers of the specification at the
 * sandbox UMA domain; every other address is unknown. Each requires the payer's
 * FULL_NAME (mandatory) and NATIONALITY (optional); the compliance-failure
 * receiver also requires BIRTH_DATE.
 */
export class SandboxUmaCounterparty implements UmaCounterparty {
  constructor(private readonly sandboxDomain: string) {}

  async lookupReceiver(address: UmaAddress): Promise<ReceiverProfile | undefined> {
    if (address.domain !== this.sandboxDomain.toLowerCase()) return undefined;
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
}

/** Production placeholder until a UMA client is configured: every lookup is a counterparty outage. */
export class UnconfiguredUmaCounterparty implements UmaCounterparty {
  async lookupReceiver(): Promise<ReceiverProfile | undefined> {
    throw fail(
      'UMA_COUNTERPARTY_UNAVAILABLE',
      'UMA payments to other institutions are not enabled on this deployment',
    );
  }
}
