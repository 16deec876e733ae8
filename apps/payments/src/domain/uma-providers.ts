import { decodeCursor, FieldErrors, isCurrencyCode, pageSize, toPage, type Page, type Environment } from '@sluice/core';
import { checkEnvironment, checkId } from './field-rules.js';

/** A counterparty institution reachable over UMA. */
export interface UmaProvider {
  name: string;
  domain: string;
  supportedRegions: string[];
  supportedCurrencies: string[];
  logoUrl?: string;
  lei?: string;
  /** Whether the provider is on the platform's allowlist. */
  allowListStatus: boolean;
}

/**
 * The sandbox directory: fictional providers (reserved `.example` domains) plus the sandbox UMA
 * domain itself. Two are not on the allowlist, to exercise `hasBlockedProviders=false`.
 */
export function sandboxUmaProviders(sandboxDomain: string): UmaProvider[] {
  const p = (
    name: string,
    domain: string,
    regions: string[],
    currencies: string[],
    lei: string,
    allow = true,
  ): UmaProvider => ({
    name,
    domain,
    supportedRegions: regions,
    supportedCurrencies: currencies,
    logoUrl: `https://${domain}/logo.png`,
    lei,
    allowListStatus: allow,
  });
  return [
    p(
      'Sluice Sandbox UMA',
      sandboxDomain,
      ['US', 'MX', 'DE', 'FR', 'ES'],
      ['USD', 'EUR', 'MXN'],
      '5493000SLUICESANDBX01',
    ),
    p('Aurora Pay', 'aurora-pay.example', ['US', 'CA'], ['USD', 'USDC'], '5493001AURORAPAY0001'),
    p('Banco Pacífico Digital', 'pacifico.example', ['MX'], ['MXN', 'USD'], '5493002PACIFICODIG01'),
    p('Carioca Wallet', 'carioca.example', ['BR'], ['BRL', 'USDC'], '5493003CARIOCAWALL01'),
    p('Euronova Bank', 'euronova.example', ['DE', 'FR', 'ES', 'IT', 'NL'], ['EUR'], '5493004EURONOVABNK01'),
    p('Thames Money', 'thames.example', ['GB'], ['GBP', 'EUR'], '5493005THAMESMONEY01'),
    p(
      'Lumen Lightning',
      'lumen.example',
      ['US', 'GB', 'DE'],
      ['BTC', 'USD'],
      '5493006LUMENLIGHT001',
      false,
    ),
    p(
      'Orbit Remit',
      'orbit-remit.example',
      ['US', 'MX', 'BR'],
      ['USD', 'MXN', 'BRL'],
      '5493007ORBITREMIT001',
    ),
    p('Quetzal Cambios', 'quetzal.example', ['MX', 'US'], ['MXN'], '5493008QUETZALCAMB01', false),
    p('Sterling & Co', 'sterling.example', ['GB', 'US'], ['GBP', 'USD'], '5493009STERLINGCO001'),
  ];
}

export interface UmaProviderFilter {
  /** ISO 3166-1 alpha-2: providers operating there. */
  countryCode?: string;
  /** Providers supporting the currency. */
  currencyCode?: string;
  /** false: only providers on the allowlist. Default true (blocked ones included). */
  hasBlockedProviders?: boolean;
  /** By name; default desc (as the reference). */
  sortOrder?: 'asc' | 'desc';
  limit?: number;
  cursor?: string;
}

/** Filters, sorts (name, then domain) and pages the directory with keyset cursors. */
export function pageUmaProviders(all: UmaProvider[], f: UmaProviderFilter): Page<UmaProvider> {
  const limit = pageSize(f.limit);
  const after = decodeCursor(f.cursor, 'text');
  const desc = (f.sortOrder ?? 'desc') === 'desc';
  const key = (p: Pick<UmaProvider, 'name' | 'domain'>) => [p.name.toLowerCase(), p.domain] as const;
  const compare = (a: Pick<UmaProvider, 'name' | 'domain'>, b: Pick<UmaProvider, 'name' | 'domain'>) => {
    const [an, ad] = key(a);
    const [bn, bd] = key(b);
    const c = an < bn ? -1 : an > bn ? 1 : ad < bd ? -1 : ad > bd ? 1 : 0;
    return desc ? -c : c;
  };
  const country = f.countryCode?.toUpperCase();
  const matching = all
    .filter((p) => !country || p.supportedRegions.includes(country))
    .filter((p) => !f.currencyCode || p.supportedCurrencies.includes(f.currencyCode.toUpperCase()))
    .filter((p) => f.hasBlockedProviders !== false || p.allowListStatus)
    .sort(compare);
  const start = after
    ? matching.findIndex((p) => compare(p, { name: after.k, domain: after.id }) > 0)
    : 0;
  const rest = start < 0 ? [] : matching.slice(start, start + limit + 1);
  return toPage(
    rest,
    limit,
    matching.length,
    (p) => ({ k: p.name.toLowerCase(), id: p.domain }),
    (p) => p,
  );
}

/** GET /uma-providers, valid. */
export interface UmaProvidersQuery extends UmaProviderFilter {
  platformId: string;
  environment: Environment;
}

/** A valid UMA provider query, or INVALID_INPUT: an ISO country code, a known currency. */
export function parseUmaProvidersQuery(
  input: Omit<UmaProvidersQuery, 'environment'> & { environment: Environment | undefined },
): UmaProvidersQuery {
  const errors = new FieldErrors();
  checkId(errors, 'platformId', input.platformId, 'Platform');
  checkEnvironment(errors, input.environment);
  if (input.countryCode !== undefined && !/^[A-Za-z]{2}$/.test(input.countryCode)) {
    errors.add('countryCode', 'must be an ISO 3166-1 alpha-2 country code');
  }
  if (input.currencyCode !== undefined && !isCurrencyCode(input.currencyCode.toUpperCase())) {
    errors.add('currencyCode', `unknown currency "${input.currencyCode}"`);
  }
  errors.throwIfAny();
  return { ...input, environment: input.environment! };
}
