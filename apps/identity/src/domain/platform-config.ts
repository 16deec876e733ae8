import {
  CURRENCIES,
  FieldErrors,
  MAX_AMOUNT,
  isCurrencyCode,
  isHostname,
  type Environment,
} from '@sluice/core';
import { noDuplicates, text, url } from './validation.js';
import { normalizeUmaDomain } from './uma-address.js';
export { TRANSACTION_TYPES, CUSTOMER_INFO_FIELDS } from '@sluice/core';
import { TRANSACTION_TYPES, CUSTOMER_INFO_FIELDS } from '@sluice/core';

export type TransactionType = (typeof TRANSACTION_TYPES)[number];

export type CustomerInfoField = (typeof CUSTOMER_INFO_FIELDS)[number];

export interface CounterpartyField {
  name: CustomerInfoField;
  mandatory: boolean;
}

/** One currency the platform supports (REST PlatformCurrencyConfig). */
export interface CurrencyConfig {
  currencyCode: string;
  minAmount: bigint;
  maxAmount: bigint;
  requiredCounterpartyFields: CounterpartyField[];
  enabledTransactionTypes: TransactionType[];
  /**
   * Incoming payments below this amount (smallest unit) are approved without asking the platform;
   * absent: every incoming payment asks (when the platform has a webhook endpoint).
   */
  incomingPaymentApprovalThreshold?: bigint;
}

export interface PasskeyConfig {
  rpId: string;
  origins: string[];
}

export interface OidcIssuer {
  issuer: string;
  jwksUri: string;
  audiences: string[];
}

/** Settings wallet-auth uses to authenticate embedded-wallet holders. */
export interface EmbeddedWalletConfig {
  currencies: string[];
  appName?: string;
  otpLength: number;
  passkey?: PasskeyConfig;
  oidcIssuers: OidcIssuer[];
}

/** The platform-editable part of a platform's configuration. */
export interface PlatformSettings {
  umaDomain?: string;
  webhookEndpoint?: string;
  supportedCurrencies: CurrencyConfig[];
  embeddedWalletConfig?: EmbeddedWalletConfig;
  /**
   * Where the platform's hosted KYC links point (compliance fills in the placeholders); absent:
   * sandbox links use the deployment's stub page, production links are refused.
   */
  kycLinkUrlTemplate?: string;
}

export const DEFAULT_OTP_LENGTH = 6;
export const KYC_LINK_URL_TEMPLATE_MAX_LENGTH = 2048;
/** The placeholders a KYC link URL pattern may contain; `{token}` is required. */
export const KYC_LINK_PLACEHOLDERS = ['{token}', '{customerId}', '{redirectUri}'] as const;
export const MAX_SUPPORTED_CURRENCIES = 50;
export const MAX_OIDC_ISSUERS = 10;

function defaultCurrency(code: string): CurrencyConfig {
  return {
    currencyCode: code,
    minAmount: 0n,
    maxAmount: MAX_AMOUNT,
    requiredCounterpartyFields: [],
    enabledTransactionTypes: ['OUTGOING', 'INCOMING'],
  };
}

/** Configuration of a new platform: USD and USDC, nothing else set. */
export function defaultSettings(): PlatformSettings {
  return { supportedCurrencies: [defaultCurrency('USD'), defaultCurrency('USDC')] };
}

export interface CurrencyConfigInput {
  currencyCode: string;
  minAmount?: bigint;
  maxAmount?: bigint;
  requiredCounterpartyFields: { name: string; mandatory: boolean }[];
  /** Empty: INCOMING and OUTGOING. */
  enabledTransactionTypes: (string | undefined)[];
  incomingPaymentApprovalThreshold?: bigint;
}

export interface EmbeddedWalletConfigInput {
  currencies: string[];
  appName?: string;
  /** Undefined or 0: 6. */
  otpLength?: number;
  passkey?: { rpId: string; origins: string[] };
  oidcIssuers: { issuer: string; jwksUri: string; audiences: string[] }[];
}

/** A PATCH of the config: absent fields stay; '' removes umaDomain/webhookEndpoint/kycLinkUrlTemplate. */
export interface ConfigUpdateInput {
  umaDomain?: string;
  webhookEndpoint?: string;
  kycLinkUrlTemplate?: string;
  supportedCurrencies?: CurrencyConfigInput[];
  embeddedWalletConfig?: EmbeddedWalletConfigInput;
  /** Removes embeddedWalletConfig (refused together with a new embeddedWalletConfig). */
  clearEmbeddedWalletConfig?: boolean;
}

/**
 * Validates an update against the current settings and returns the new
 * settings; throws INVALID_INPUT naming every bad field and changes nothing.
 * `environment`: the platform's; only a SANDBOX platform may point KYC links at a
 * plain-http loopback page (unknown: the production rule).
 */
export function applyConfigUpdate(
  current: PlatformSettings,
  input: ConfigUpdateInput,
  opts: { environment?: Environment } = {},
): PlatformSettings {
  if (input.clearEmbeddedWalletConfig && input.embeddedWalletConfig)
    new FieldErrors().add('embeddedWalletConfig', 'cannot be both set and cleared').throwIfAny();
  const p = new FieldErrors();
  const next: PlatformSettings = { ...current };

  if (input.umaDomain !== undefined) {
    if (input.umaDomain === '') delete next.umaDomain;
    else next.umaDomain = normalizeUmaDomain(p, 'umaDomain', input.umaDomain);
  }
  if (input.webhookEndpoint !== undefined) {
    if (input.webhookEndpoint === '') delete next.webhookEndpoint;
    else {
      const u = url(p, 'webhookEndpoint', input.webhookEndpoint, { allowHttp: true });
      if (u) {
        if (u.hash) p.add('webhookEndpoint', 'must not contain a fragment');
        else next.webhookEndpoint = input.webhookEndpoint;
      }
    }
  }
  if (input.kycLinkUrlTemplate !== undefined) {
    if (input.kycLinkUrlTemplate === '') delete next.kycLinkUrlTemplate;
    else {
      const t = kycLinkUrlTemplate(p, input.kycLinkUrlTemplate, opts.environment);
      if (t !== undefined) next.kycLinkUrlTemplate = t;
    }
  }
  let currenciesOk = true;
  if (input.supportedCurrencies !== undefined) {
    const before = p.errors.length;
    next.supportedCurrencies = validateCurrencies(p, input.supportedCurrencies);
    currenciesOk = p.errors.length === before;
  }
  if (input.clearEmbeddedWalletConfig) delete next.embeddedWalletConfig;
  else if (input.embeddedWalletConfig !== undefined) {
    next.embeddedWalletConfig = validateEmbeddedWallet(p, input.embeddedWalletConfig);
  }
  // Wallet currencies must stay within the supported ones, whichever of the two changed.
  if (
    next.embeddedWalletConfig &&
    (input.embeddedWalletConfig || input.supportedCurrencies) &&
    currenciesOk
  ) {
    const supported = new Set(next.supportedCurrencies.map((c) => c.currencyCode));
    next.embeddedWalletConfig.currencies.forEach((code, i) => {
      if (isCurrencyCode(code) && CURRENCIES[code]!.kind === 'CRYPTO' && !supported.has(code))
        p.add(`embeddedWalletConfig.currencies[${i}]`, `${code} is not in supportedCurrencies`);
    });
  }
  p.throwIfAny();
  return next;
}

/**
 * A hosted-KYC URL pattern: an absolute https URL without credentials (plain http only for a
 * loopback host of a sandbox platform, a local stub page), at most
 * KYC_LINK_URL_TEMPLATE_MAX_LENGTH characters, containing `{token}` and no placeholder but
 * KYC_LINK_PLACEHOLDERS, none of them in the scheme, host or port.
 */
function kycLinkUrlTemplate(
  p: FieldErrors,
  value: string,
  environment: Environment | undefined,
): string | undefined {
  const f = 'kycLinkUrlTemplate';
  const u = url(p, f, value, { allowHttp: false, max: KYC_LINK_URL_TEMPLATE_MAX_LENGTH });
  if (!u) return undefined;
  const unknown = (value.match(/\{[^{}]*\}/g) ?? []).find(
    (m) => !(KYC_LINK_PLACEHOLDERS as readonly string[]).includes(m),
  );
  const problem =
    u.protocol === 'http:' && environment !== 'SANDBOX'
      ? 'must be an https URL (http only for a loopback host of a sandbox platform)'
      : !value.includes('{token}')
        ? 'must contain {token}'
        : unknown !== undefined
          ? `may contain only the placeholders ${KYC_LINK_PLACEHOLDERS.join(', ')} (not ${unknown})`
          : /[{}]/.test(u.host)
            ? 'placeholders belong in the path, query or fragment, not in the host'
            : undefined;
  if (problem) {
    p.add(f, problem);
    return undefined;
  }
  return value;
}

function validateCurrencies(p: FieldErrors, list: CurrencyConfigInput[]): CurrencyConfig[] {
  if (list.length === 0) p.add('supportedCurrencies', 'must list at least one currency');
  if (list.length > MAX_SUPPORTED_CURRENCIES)
    p.add('supportedCurrencies', `must list at most ${MAX_SUPPORTED_CURRENCIES} currencies`);
  const out: CurrencyConfig[] = [];
  list.forEach((c, i) => {
    const f = `supportedCurrencies[${i}]`;
    const before = p.errors.length;
    if (!isCurrencyCode(c.currencyCode))
      p.add(`${f}.currencyCode`, `must be one of ${Object.keys(CURRENCIES).join(', ')}`);
    const min = c.minAmount ?? 0n;
    const max = c.maxAmount ?? MAX_AMOUNT;
    if (min < 0n || min > MAX_AMOUNT) p.add(`${f}.minAmount`, `must be from 0 to ${MAX_AMOUNT}`);
    if (max < 0n || max > MAX_AMOUNT) p.add(`${f}.maxAmount`, `must be from 0 to ${MAX_AMOUNT}`);
    else if (max < min) p.add(`${f}.maxAmount`, 'must not be less than minAmount');
    const threshold = c.incomingPaymentApprovalThreshold;
    if (threshold !== undefined && (threshold < 0n || threshold > MAX_AMOUNT))
      p.add(`${f}.incomingPaymentApprovalThreshold`, `must be from 0 to ${MAX_AMOUNT}`);
    c.requiredCounterpartyFields.forEach((r, j) => {
      if (!(CUSTOMER_INFO_FIELDS as readonly string[]).includes(r.name)) {
        p.add(
          `${f}.requiredCounterpartyFields[${j}].name`,
          `must be one of ${CUSTOMER_INFO_FIELDS.join(', ')}`,
        );
      }
    });
    noDuplicates(
      p,
      `${f}.requiredCounterpartyFields`,
      c.requiredCounterpartyFields.map((r) => r.name),
    );
    c.enabledTransactionTypes.forEach((t, j) => {
      if (t === undefined || !(TRANSACTION_TYPES as readonly string[]).includes(t))
        p.add(`${f}.enabledTransactionTypes[${j}]`, 'must be INCOMING or OUTGOING');
    });
    const types = c.enabledTransactionTypes.filter((t): t is TransactionType => t !== undefined);
    noDuplicates(p, `${f}.enabledTransactionTypes`, types);
    if (p.errors.length === before) {
      out.push({
        currencyCode: c.currencyCode,
        minAmount: min,
        maxAmount: max,
        requiredCounterpartyFields: c.requiredCounterpartyFields.map((r) => ({
          name: r.name as CustomerInfoField,
          mandatory: r.mandatory,
        })),
        enabledTransactionTypes: types.length ? types : ['OUTGOING', 'INCOMING'],
        ...(threshold !== undefined ? { incomingPaymentApprovalThreshold: threshold } : {}),
      });
    }
  });
  noDuplicates(
    p,
    'supportedCurrencies',
    list.map((c) => c.currencyCode),
  );
  return out;
}

function validateEmbeddedWallet(p: FieldErrors, w: EmbeddedWalletConfigInput): EmbeddedWalletConfig {
  const f = 'embeddedWalletConfig';
  w.currencies.forEach((code, i) => {
    if (!isCurrencyCode(code)) p.add(`${f}.currencies[${i}]`, 'must be a known currency code');
    else if (CURRENCIES[code]!.kind !== 'CRYPTO')
      p.add(`${f}.currencies[${i}]`, 'embedded wallets hold stablecoins or crypto (e.g. USDC)');
  });
  noDuplicates(p, `${f}.currencies`, w.currencies);
  const appName = text(p, `${f}.appName`, w.appName, 100);
  const otpLength = w.otpLength === undefined || w.otpLength === 0 ? DEFAULT_OTP_LENGTH : w.otpLength;
  if (!Number.isInteger(otpLength) || otpLength < 4 || otpLength > 10)
    p.add(`${f}.otpLength`, 'must be an integer from 4 to 10');

  let passkey: PasskeyConfig | undefined;
  if (w.passkey) {
    const rpId = w.passkey.rpId.toLowerCase();
    const rpOk = rpId === 'localhost' || isHostname(rpId);
    if (!rpOk) p.add(`${f}.passkey.rpId`, 'must be a domain name such as example.com (no scheme or port)');
    if (w.passkey.origins.length === 0) p.add(`${f}.passkey.origins`, 'must list at least one origin');
    const origins: string[] = [];
    w.passkey.origins.forEach((o, i) => {
      const u = url(p, `${f}.passkey.origins[${i}]`, o, { allowHttp: false });
      if (!u) return;
      if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) {
        p.add(`${f}.passkey.origins[${i}]`, 'must be an origin (scheme, host and optional port only)');
        return;
      }
      if (rpOk && u.hostname !== rpId && !u.hostname.endsWith(`.${rpId}`)) {
        p.add(`${f}.passkey.origins[${i}]`, `host must be ${rpId} or a subdomain of it`);
        return;
      }
      origins.push(u.origin);
    });
    noDuplicates(p, `${f}.passkey.origins`, origins);
    passkey = { rpId, origins };
  }

  if (w.oidcIssuers.length > MAX_OIDC_ISSUERS)
    p.add(`${f}.oidcIssuers`, `must list at most ${MAX_OIDC_ISSUERS} issuers`);
  const oidcIssuers = w.oidcIssuers.map((iss, i) => {
    const g = `${f}.oidcIssuers[${i}]`;
    url(p, `${g}.issuer`, iss.issuer, { allowHttp: false, max: 512 });
    url(p, `${g}.jwksUri`, iss.jwksUri, { allowHttp: false });
    if (iss.audiences.length === 0) p.add(`${g}.audiences`, 'must list at least one audience');
    iss.audiences.forEach((a, j) => text(p, `${g}.audiences[${j}]`, a, 255));
    noDuplicates(p, `${g}.audiences`, iss.audiences);
    return { issuer: iss.issuer, jwksUri: iss.jwksUri, audiences: [...iss.audiences] };
  });
  noDuplicates(
    p,
    `${f}.oidcIssuers`,
    w.oidcIssuers.map((x) => x.issuer),
  );

  const out: EmbeddedWalletConfig = { currencies: [...w.currencies], otpLength, oidcIssuers };
  if (appName !== undefined) out.appName = appName;
  if (passkey) out.passkey = passkey;
  return out;
}

/** Codes of the supported currencies, in configured order. */
export function supportedCurrencyCodes(s: PlatformSettings): string[] {
  return s.supportedCurrencies.map((c) => c.currencyCode);
}

/** True when two settings say the same thing (a config update that changes nothing emits no event). */
export function sameSettings(a: PlatformSettings, b: PlatformSettings): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** JSON with object keys sorted and bigints as decimal strings: equal for equal values whatever the key order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return v.toString();
    if (v && typeof v === 'object' && !Array.isArray(v))
      return Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return v;
  });
}
