import { randomBytes, randomInt } from 'node:crypto';
import { accounts, agents as pb, identity, payments, walletAuth } from '@sluice/contracts';
import { DomainError, type Clock } from '@sluice/core';
import { germanIban, startServices, World } from '@sluice/testing';
import { accountsService } from '@sluice/accounts';
import { identityService } from '@sluice/identity';
import { paymentsService } from '@sluice/payments';
import { walletAuthService } from '@sluice/wallet-auth';
import type { PaymentsPort } from '../../src/app/ports.js';
import { PaymentsClient } from '../../src/clients/payments.client.js';
import { defineAgentsService } from '../../src/service.js';

/**
 * The agents service's own client of payments, with a switch that makes it answer as an outage
 * would (UNAVAILABLE) — the deliberate fault of the recovery test. Everything else is the real
 * client of the real payments service.
 */
export class PaymentsWithOutage implements PaymentsPort {
  down = false;
  private inner: PaymentsClient | undefined;

  connect(address: string): void {
    this.inner = new PaymentsClient(address);
  }

  close(): void {
    this.inner?.close();
  }

  private get real(): PaymentsClient {
    if (this.down) throw new DomainError('UNAVAILABLE', 'SERVICE_UNAVAILABLE', 'payments is down (deliberate fault)');
    if (!this.inner) throw new Error('payments is not connected yet');
    return this.inner;
  }

  createQuote: PaymentsPort['createQuote'] = (...a) => this.real.createQuote(...a);
  getQuote: PaymentsPort['getQuote'] = (...a) => this.real.getQuote(...a);
  executeQuote: PaymentsPort['executeQuote'] = (...a) => this.real.executeQuote(...a);
  transfer: PaymentsPort['transfer'] = (...a) => this.real.transfer(...a);
  getTransaction: PaymentsPort['getTransaction'] = (...a) => this.real.getTransaction(...a);
  exchangeRate: PaymentsPort['exchangeRate'] = (...a) => this.real.exchangeRate(...a);
}

/**
 * Agents started in-process with its real neighbours — identity (platforms, customers), accounts
 * (internal and external accounts, the ledger), wallet-auth (wallet signatures) and payments
 * (quotes, transfers, rates; its sandbox rails are the only simulation) — on one fresh database
 * and subject prefix, every service on `clock`. Money is read where it lives: balances from
 * accounts, transactions (and their agent_id) from payments.
 */
export async function startAgentsWithNeighbours(label: string, opts: { env?: Record<string, string>; clock?: Clock } = {}) {
  const outage = new PaymentsWithOutage();
  const services = await startServices(
    label,
    {
      identity: identityService,
      accounts: accountsService,
      'wallet-auth': walletAuthService,
      payments: paymentsService,
      agents: defineAgentsService({ payments: outage }),
    },
    {
      env: { SANDBOX_UMA_DOMAIN: 'sandbox.sluice.local', DATABASE_POOL_MAX: '12' },
      envOf: {
        'wallet-auth': { WALLET_MASTER_KEY: randomBytes(32).toString('base64') },
        payments: { JOB_POLL_MS: '50' },
        agents: opts.env ?? {},
      },
      ...(opts.clock ? { clock: opts.clock } : {}),
    },
  );
  outage.connect(services.address('payments'));
  const identityClient = services.client(identity.IdentityServiceClient, 'identity');
  const accountsClient = services.client(accounts.AccountsServiceClient, 'accounts');
  const walletAuthClient = services.client(walletAuth.WalletAuthServiceClient, 'wallet-auth');
  const world = new World({ identity: identityClient, accounts: accountsClient, walletAuth: walletAuthClient, sql: services.sql });
  return {
    services,
    world,
    outage,
    client: services.client(pb.AgentsServiceClient, 'agents', { defaultDeadlineMs: 20_000 }),
    payments: services.client(payments.PaymentsServiceClient, 'payments'),
    sql: services.sql,
    stop: async () => {
      outage.close();
      await services.stop();
    },
  };
}

/** A complete ExternalAccountInfo without a beneficiary (World.externalAccount names Ada Lovelace). */
function bankAccount(fields: Partial<accounts.ExternalAccountInfo>): accounts.ExternalAccountInfo {
  const { beneficiary: _none, ...info } = accounts.ExternalAccountInfo.fromPartial(fields);
  return info as accounts.ExternalAccountInfo;
}

/** A USD bank account number ending in `suffix` (the sandbox rails read its last 3 digits: 000 settles). */
export function usdAccountInfo(suffix = '000'): accounts.ExternalAccountInfo {
  const digits = Array.from({ length: 12 - suffix.length }, () => randomInt(10)).join('');
  return bankAccount({ accountType: 'USD_ACCOUNT', accountNumber: `${digits}${suffix}`, routingNumber: '021000021' });
}

/** A EUR bank account (German IBAN) whose account number ends in `suffix`. */
export function eurAccountInfo(suffix = '000'): accounts.ExternalAccountInfo {
  const digits = Array.from({ length: 10 - suffix.length }, () => randomInt(10)).join('');
  return bankAccount({ accountType: 'EUR_ACCOUNT', iban: germanIban(`${digits}${suffix}`) });
}
