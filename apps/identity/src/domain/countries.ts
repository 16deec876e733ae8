/** ISO 3166-1 alpha-2 country codes: the one list lives in core. */
export { isCountryCode } from '@sluice/core';
