import type { Environment } from '@sluice/core';
import { fail } from '../domain/errors.js';
import {
  estimateWithdrawalFee,
  type NetworkFee,
  type WithdrawalFeeEstimate,
  type WithdrawalFeeRequest,
} from '../domain/withdrawal-fees.js';
import type { AccountsPort } from './ports.js';

/**
 * POST /crypto/estimate-withdrawal-fee: what a withdrawal from a crypto internal account would
 * cost on a network, from the environment's fee table (the sandbox's: domain/withdrawal-fees.ts;
 * production has no network-fee source configured yet: RAIL_UNAVAILABLE). Moves and stores nothing.
 */
export class WithdrawalFeesService {
  constructor(
    private readonly deps: {
      accounts: AccountsPort;
      feeTables: Record<Environment, Readonly<Record<string, NetworkFee>> | undefined>;
    },
  ) {}

  async estimate(req: WithdrawalFeeRequest): Promise<WithdrawalFeeEstimate> {
    // INTERNAL_ACCOUNT_NOT_FOUND (404) for an unknown or another platform's account, from accounts.
    const account = await this.deps.accounts.getInternalAccount(req.platformId, req.internalAccountId);
    const fee = this.deps.feeTables[req.environment]?.[req.cryptoNetwork];
    if (!fee) {
      throw fail('RAIL_UNAVAILABLE', `No network-fee source is configured for ${req.cryptoNetwork} in this environment`);
    }
    return estimateWithdrawalFee(req, account, fee);
  }
}
