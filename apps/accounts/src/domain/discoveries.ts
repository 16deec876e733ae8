import { FieldErrors, country, isCurrencyCode, type Environment } from '@sluice/core';

/**
 * GET /discoveries: the receiving institutions per country and currency, whose `bankName` is the
 * value to give an external account's `bankName` (the variants of `EXTERNAL_ACCOUNT_VARIANTS` that
 * take one: USD, EUR, GBP, MXN, HKD, IDR, MYR, NGN, PHP, SGD, THB, VND, ZAR, EGP, PKR and USD in El
 * Salvador). The accounts service does not restrict `bankName` to this list: it is a directory.
 */
export interface Discovery {
  /** Canonical name: pass it as `bankName` when creating the external account. */
  bankName: string;
  displayName: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  /** ISO 4217. */
  currency: string;
}

/** The filters of GET /discoveries, both optional (none: every institution). */
export interface DiscoveriesQuery {
  country?: string;
  currency?: string;
}

const d = (country: string, currency: string, list: [bankName: string, displayName?: string][]): Discovery[] =>
  list.map(([bankName, displayName]) => ({ bankName, displayName: displayName ?? bankName, country, currency }));

/**
 * The sandbox directory: a few institutions for every country and currency whose external-account
 * variant takes a `bankName` (EUR for five SEPA countries). Fixed data, sorted by country, currency
 * and display name.
 */
export const SANDBOX_DISCOVERIES: readonly Discovery[] = sortDiscoveries([
  ...d('US', 'USD', [['JPMorgan Chase', 'JPMorgan Chase Bank'], ['Bank of America'], ['Wells Fargo', 'Wells Fargo Bank']]),
  ...d('DE', 'EUR', [['Deutsche Bank'], ['Commerzbank']]),
  ...d('FR', 'EUR', [['BNP Paribas'], ['Société Générale']]),
  ...d('ES', 'EUR', [['Banco Santander'], ['BBVA', 'Banco Bilbao Vizcaya Argentaria']]),
  ...d('NL', 'EUR', [['ING', 'ING Bank'], ['ABN AMRO']]),
  ...d('IT', 'EUR', [['UniCredit'], ['Intesa Sanpaolo']]),
  ...d('GB', 'GBP', [['Barclays', 'Barclays Bank'], ['HSBC UK', 'HSBC UK Bank'], ['Lloyds', 'Lloyds Bank']]),
  ...d('MX', 'MXN', [['BBVA Mexico', 'BBVA México'], ['Banorte', 'Banco Mercantil del Norte'], ['Santander Mexico', 'Santander México']]),
  ...d('HK', 'HKD', [['HSBC Hong Kong', 'The Hongkong and Shanghai Banking Corporation'], ['Bank of China (Hong Kong)']]),
  ...d('ID', 'IDR', [['BCA', 'Bank Central Asia'], ['Bank Mandiri'], ['BRI', 'Bank Rakyat Indonesia']]),
  ...d('MY', 'MYR', [['Maybank', 'Malayan Banking'], ['CIMB Bank'], ['Public Bank']]),
  ...d('NG', 'NGN', [['Access Bank'], ['GTBank', 'Guaranty Trust Bank'], ['Zenith Bank']]),
  ...d('PH', 'PHP', [['BDO Unibank'], ['BPI', 'Bank of the Philippine Islands'], ['Metrobank', 'Metropolitan Bank and Trust']]),
  ...d('SG', 'SGD', [['DBS Bank'], ['OCBC', 'Oversea-Chinese Banking Corporation'], ['UOB', 'United Overseas Bank']]),
  ...d('TH', 'THB', [['Bangkok Bank'], ['Kasikornbank'], ['SCB', 'Siam Commercial Bank']]),
  ...d('VN', 'VND', [['Vietcombank'], ['Techcombank'], ['BIDV', 'Bank for Investment and Development of Vietnam']]),
  ...d('ZA', 'ZAR', [['Standard Bank'], ['FNB', 'First National Bank'], ['Absa', 'Absa Bank']]),
  ...d('EG', 'EGP', [['National Bank of Egypt'], ['Banque Misr'], ['CIB', 'Commercial International Bank']]),
  ...d('PK', 'PKR', [['HBL', 'Habib Bank Limited'], ['Meezan Bank'], ['Easypaisa'], ['JazzCash']]),
  ...d('SV', 'USD', [['Banco Agrícola'], ['Banco Cuscatlán'], ['Banco Davivienda Salvadoreño']]),
]);

function sortDiscoveries(list: Discovery[]): Discovery[] {
  return list.sort(
    (a, b) =>
      a.country.localeCompare(b.country) ||
      a.currency.localeCompare(b.currency) ||
      a.displayName.localeCompare(b.displayName),
  );
}

/** GET /discoveries as the service takes it: the caller's environment and the filters. */
export interface DiscoveriesRequest extends DiscoveriesQuery {
  environment: Environment;
}

/**
 * The request, valid: the environment given, `country` an assigned ISO 3166-1 alpha-2 code,
 * `currency` a known ISO 4217 code (both upper case; the gateway upper-cases them);
 * INVALID_INPUT naming each bad one.
 */
export function parseDiscoveriesRequest(
  input: DiscoveriesQuery & { environment: Environment | undefined },
): DiscoveriesRequest {
  const errors = new FieldErrors();
  if (!input.environment) errors.add('environment', 'must be ENVIRONMENT_SANDBOX or ENVIRONMENT_PRODUCTION');
  country(errors, 'country', input.country);
  if (input.currency !== undefined && !isCurrencyCode(input.currency))
    errors.add('currency', `must be an ISO 4217 currency code Sluice knows (e.g. PHP), not "${input.currency}"`);
  errors.throwIfAny();
  return {
    environment: input.environment!,
    ...(input.country !== undefined ? { country: input.country } : {}),
    ...(input.currency !== undefined ? { currency: input.currency } : {}),
  };
}

/** The institutions of `directory` matching every filter given. */
export function filterDiscoveries(directory: readonly Discovery[], q: DiscoveriesQuery): Discovery[] {
  return directory.filter(
    (x) => (q.country === undefined || x.country === q.country) && (q.currency === undefined || x.currency === q.currency),
  );
}
