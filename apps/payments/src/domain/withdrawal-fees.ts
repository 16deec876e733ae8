import {
  CRYPTO_NETWORKS,
  FieldErrors,
  checkCryptoDestination,
  cryptoNetworkVariant,
  invalidInput,
  isCurrencyCode,
  type Environment,
} from '@sluice/core';
import { fail } from './errors.js';
import { checkAmount, checkEnvironment, checkId } from './field-rules.js';

/** POST /crypto/estimate-withdrawal-fee, valid. */
export interface WithdrawalFeeRequest {
  platformId: string;
  environment: Environment;
  internalAccountId: string;
  currency: string;
  cryptoNetwork: string;
  amount: bigint;
  destinationAddress: string;
}

export type WithdrawalFeeInput = Omit<WithdrawalFeeRequest, 'environment'> & { environment: Environment | undefined };

/** What moving funds out on one network costs (one row of a fee table). */
export interface NetworkFee {
  /** The asset the network charges in (SOL, ETH, TRX, POL, BTC). */
  networkFeeAsset: string;
  /** In the smallest unit of networkFeeAsset (lamports, wei, sun, sats). */
  networkFee: bigint;
  /** networkFee in minor units of the withdrawal currency, rounded up (what the withdrawal pays). */
  networkFeeInCurrency: bigint;
}

/** The answer (reference EstimateCryptoWithdrawalFeeResponse). */
export interface WithdrawalFeeEstimate {
  networkFee: bigint;
  networkFeeAsset: string;
  /** Sluice charges no application fee on a withdrawal: 0. */
  applicationFee: bigint;
  /** networkFeeInCurrency + applicationFee, minor units of the withdrawal currency. */
  totalFee: bigint;
  /** amount − totalFee: what the destination receives. */
  netAmount: bigint;
}

/**
 * The sandbox fee table, per network: the network fee in its own asset, and that fee in the
 * withdrawal currency at the sandbox's fixed prices (SOL 200 USD, ETH 3,500 USD, TRX 0.25 USD,
 * POL 0.50 USD; USDC and USDT at 1 USD, 6 decimals, so one row serves both). SPARK and LIGHTNING
 * withdraw BTC and charge in BTC: the fee in the currency is the network fee itself.
 *
 * | network  | asset | networkFee                       | in USDC/USDT (or sats) |
 * | -------- | ----- | -------------------------------- | ---------------------- |
 * | SOLANA   | SOL   | 5,000 lamports                   | 1,000 (0.001)          |
 * | TRON     | TRX   | 3,000,000 sun (3 TRX)            | 750,000 (0.75)         |
 * | POLYGON  | POL   | 1,950,000,000,000,000 wei        | 975 (0.000975)         |
 * | BASE     | ETH   | 650,000,000,000 wei              | 2,275 (0.002275)       |
 * | ETHEREUM | ETH   | 1,300,000,000,000,000 wei        | 4,550,000 (4.55)       |
 * | SPARK    | BTC   | 0 sats                           | 0                      |
 * | LIGHTNING| BTC   | 10 sats (routing)                | 10                     |
 */
export const SANDBOX_NETWORK_FEES: Readonly<Record<string, NetworkFee>> = {
  SOLANA: { networkFeeAsset: 'SOL', networkFee: 5_000n, networkFeeInCurrency: 1_000n },
  TRON: { networkFeeAsset: 'TRX', networkFee: 3_000_000n, networkFeeInCurrency: 750_000n },
  POLYGON: { networkFeeAsset: 'POL', networkFee: 1_950_000_000_000_000n, networkFeeInCurrency: 975n },
  BASE: { networkFeeAsset: 'ETH', networkFee: 650_000_000_000n, networkFeeInCurrency: 2_275n },
  ETHEREUM: { networkFeeAsset: 'ETH', networkFee: 1_300_000_000_000_000n, networkFeeInCurrency: 4_550_000n },
  SPARK: { networkFeeAsset: 'BTC', networkFee: 0n, networkFeeInCurrency: 0n },
  LIGHTNING: { networkFeeAsset: 'BTC', networkFee: 10n, networkFeeInCurrency: 10n },
};

/**
 * A valid request, or INVALID_INPUT naming every bad field: `cryptoNetwork` one an external-account
 * variant pays to, `currency` one that network carries (that variant's currencies),
 * `destinationAddress` by that variant's address grammar (the one the external accounts are
 * checked with), `amount` 1 to the maximum.
 */
export function parseWithdrawalFeeRequest(input: WithdrawalFeeInput): WithdrawalFeeRequest {
  const errors = new FieldErrors();
  checkId(errors, 'platformId', input.platformId, 'Platform');
  checkEnvironment(errors, input.environment);
  checkId(errors, 'internalAccountId', input.internalAccountId, 'InternalAccount');
  checkAmount(errors, 'amount', input.amount);
  const variant = cryptoNetworkVariant(input.cryptoNetwork);
  if (!variant) errors.add('cryptoNetwork', `must be one of ${CRYPTO_NETWORKS.join(', ')}`);
  if (!input.currency) errors.add('currency', 'is required');
  else if (!isCurrencyCode(input.currency)) errors.add('currency', `unknown currency "${input.currency}"`);
  else if (variant && !variant.currencies.includes(input.currency))
    errors.add('currency', `${input.cryptoNetwork} carries ${variant.currencies.join(', ')}, not ${input.currency}`);
  if (!input.destinationAddress) errors.add('destinationAddress', 'is required');
  else if (variant) {
    const reason = checkCryptoDestination(input.cryptoNetwork, input.destinationAddress);
    if (reason) errors.add('destinationAddress', `${reason} (${input.cryptoNetwork})`);
  }
  errors.throwIfAny();
  const { environment, ...rest } = input;
  return { ...rest, environment: environment! };
}

/**
 * The estimate for a valid request from `account` (the internal account it names): the account
 * must be a crypto one (INTERNAL_CRYPTO or EMBEDDED_WALLET) holding `currency`, and the amount
 * must leave something once the fee is paid (AMOUNT_OUT_OF_RANGE otherwise).
 */
export function estimateWithdrawalFee(
  req: WithdrawalFeeRequest,
  account: { currency: string; type: string },
  fee: NetworkFee,
): WithdrawalFeeEstimate {
  if (account.type !== 'INTERNAL_CRYPTO' && account.type !== 'EMBEDDED_WALLET')
    throw invalidInput([{ field: 'internalAccountId', message: 'must be a crypto internal account' }]);
  if (account.currency !== req.currency)
    throw invalidInput([{ field: 'currency', message: `the internal account holds ${account.currency}, not ${req.currency}` }]);
  const applicationFee = 0n;
  const totalFee = fee.networkFeeInCurrency + applicationFee;
  if (req.amount <= totalFee) {
    throw fail('AMOUNT_OUT_OF_RANGE', `The amount does not cover the withdrawal fee (${totalFee})`, {
      field: 'amount',
      totalFee: totalFee.toString(),
    });
  }
  return {
    networkFee: fee.networkFee,
    networkFeeAsset: fee.networkFeeAsset,
    applicationFee,
    totalFee,
    netAmount: req.amount - totalFee,
  };
}
