import { newId, type Clock } from '@sluice/core';
import { transactional, type MikroORM } from '@sluice/store';
import { fail } from '../domain/errors.js';
import type { ExchangeRateProvider } from '../domain/exchange-rates.js';
import { currencyPreferences, type ReceiverLookup } from '../domain/receiver-lookup.js';
import { parseUmaAddress, type UmaCounterparty } from '../domain/uma.js';
import { ReceiverLookupRepository } from '../store/receiver-lookup.repository.js';

export type Environment = 'SANDBOX' | 'PRODUCTION';

/** Per-environment adapters: sandbox platforms talk to the simulated world only. */
export interface EnvironmentAdapters {
  rates: ExchangeRateProvider;
  uma: UmaCounterparty;
}

/** What payments needs to know about an external account (answered by the accounts service). */
export interface ExternalAccountSummary {
  id: string;
  currency: string;
  customerId?: string;
  status: 'ACTIVE' | 'PENDING' | 'UNDER_REVIEW' | 'INACTIVE' | 'UNKNOWN';
}

/** Port to the accounts service; throws EXTERNAL_ACCOUNT_NOT_FOUND for an unknown, deleted or foreign account. */
export interface ExternalAccountDirectory {
  getExternalAccount(platformId: string, accountId: string): Promise<ExternalAccountSummary>;
}

/** Receiver lookups: ask the counterparty, store the answer with an expiry, read it back for quotes. */
export class ReceiverLookupsService {
  private readonly repo = new ReceiverLookupRepository();

  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly adapters: Record<Environment, EnvironmentAdapters>,
    private readonly ttlMs: number,
    private readonly externalAccounts?: ExternalAccountDirectory,
  ) {}

  /**
   * An external account of the platform as a payment destination: its currency
   * with the estimated rate and limits. No payer data is required (the sender is
   * the platform's own, already verified customer).
   */
  async lookupExternalAccount(req: {
    platformId: string;
    environment: Environment;
    accountId: string;
    senderUmaAddress?: string;
    customerId?: string;
    sendingCurrency: string;
  }): Promise<ReceiverLookup> {
    const sender = req.senderUmaAddress
      ? parseUmaAddress(req.senderUmaAddress, 'senderUmaAddress')
      : undefined;
    if (!this.externalAccounts) throw new Error('no external-account directory configured');
    const account = await this.externalAccounts.getExternalAccount(req.platformId, req.accountId);
    if (account.status !== 'ACTIVE') {
      throw fail(
        'EXTERNAL_ACCOUNT_NOT_USABLE',
        `External account ${account.id} is ${account.status.toLowerCase()}, not active`,
        {
          field: 'accountId',
          status: account.status,
        },
      );
    }
    const { rates } = this.adapters[req.environment];
    if (!rates.currencies().includes(account.currency)) {
      throw fail('UNSUPPORTED_CURRENCY', `Payments in ${account.currency} are not supported`, {
        field: 'accountId',
        supported: rates.currencies(),
      });
    }
    const now = this.clock.now();
    const lookup: ReceiverLookup = {
      id: newId('Lookup'),
      platformId: req.platformId,
      kind: 'EXTERNAL_ACCOUNT',
      externalAccountId: account.id,
      ...(sender ? { senderUmaAddress: sender.address } : {}),
      ...(req.customerId ? { customerId: req.customerId } : {}),
      sendingCurrency: req.sendingCurrency,
      supportedCurrencies: currencyPreferences(
        { currencies: [account.currency] },
        req.sendingCurrency,
        rates,
      ),
      requiredPayerDataFields: [],
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.ttlMs),
    };
    await transactional(this.orm, (em) => this.repo.insert(em, lookup));
    return lookup;
  }

  async lookupUma(req: {
    platformId: string;
    environment: Environment;
    receiverUmaAddress: string;
    senderUmaAddress?: string;
    customerId?: string;
    sendingCurrency: string;
  }): Promise<ReceiverLookup> {
    const address = parseUmaAddress(req.receiverUmaAddress, 'receiverUmaAddress');
    const sender = req.senderUmaAddress
      ? parseUmaAddress(req.senderUmaAddress, 'senderUmaAddress')
      : undefined;
    const { rates, uma } = this.adapters[req.environment];
    const profile = await uma.lookupReceiver(address);
    if (!profile) {
      throw fail('UMA_RECEIVER_NOT_FOUND', `No receiver ${address.address} at ${address.domain}`, {
        field: 'receiverUmaAddress',
        receiverUmaAddress: address.address,
      });
    }
    const now = this.clock.now();
    const lookup: ReceiverLookup = {
      id: newId('Lookup'),
      platformId: req.platformId,
      kind: 'UMA',
      receiverUmaAddress: profile.address,
      ...(sender ? { senderUmaAddress: sender.address } : {}),
      ...(req.customerId ? { customerId: req.customerId } : {}),
      sendingCurrency: req.sendingCurrency,
      supportedCurrencies: currencyPreferences(profile, req.sendingCurrency, rates),
      requiredPayerDataFields: profile.requiredPayerDataFields,
      ...(profile.sandboxBehavior ? { sandboxBehavior: profile.sandboxBehavior } : {}),
      counterpartyName: profile.counterpartyName,
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.ttlMs),
    };
    await transactional(this.orm, (em) => this.repo.insert(em, lookup));
    return lookup;
  }

  /** The platform's lookup; LOOKUP_NOT_FOUND (also for another platform's), LOOKUP_EXPIRED past expiresAt unless asked. */
  async get(platformId: string, id: string, includeExpired = false): Promise<ReceiverLookup> {
    const lookup = await this.repo.find(this.orm.em.fork(), platformId, id);
    if (!lookup) throw fail('LOOKUP_NOT_FOUND', `Lookup ${id} not found`, { field: 'lookupId' });
    if (!includeExpired && lookup.expiresAt.getTime() <= this.clock.now().getTime()) {
      throw fail(
        'LOOKUP_EXPIRED',
        `Lookup ${id} expired at ${lookup.expiresAt.toISOString()}; look the receiver up again`,
        {
          field: 'lookupId',
          expiresAt: lookup.expiresAt.toISOString(),
        },
      );
    }
    return lookup;
  }

  /** Deletes lookups expired for more than a day (scheduled job). */
  async purgeExpired(): Promise<number> {
    const before = new Date(this.clock.now().getTime() - 86_400_000);
    return transactional(this.orm, (em) => this.repo.purgeExpired(em, before));
  }
}
