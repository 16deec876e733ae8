import { newId, type Clock, type Environment } from '@sluice/core';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { fail } from '../domain/errors.js';
import type { ExchangeRateProvider } from '../domain/exchange-rates.js';
import { currencyPreferences, type LookupRequest, type ReceiverLookup } from '../domain/receiver-lookup.js';
import { parseUmaAddress } from '../domain/uma.js';
import type { ReceiverLookupRepository } from '../store/receiver-lookup.repository.js';
import type { AccountsPort, UmaCounterparty } from './ports.js';

/** Receiver lookups: ask the counterparty (or accounts), store the answer with an expiry, read it back for quotes. */
export class ReceiverLookupsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly deps: {
      accounts: AccountsPort;
      rates: Record<Environment, ExchangeRateProvider>;
      counterparties: Record<Environment, UmaCounterparty>;
      lookups: ReceiverLookupRepository;
      /** How long a lookup stays usable (LOOKUP_TTL_SECONDS). */
      ttlMs: number;
    },
  ) {}

  /**
   * An external account of the platform as a payment destination: its currency
   * with the estimated rate and limits. No payer data is required (the sender is
   * the platform's own, already verified customer).
   */
  async lookupExternalAccount(req: LookupRequest & { accountId: string }): Promise<ReceiverLookup> {
    const sender = req.senderUmaAddress ? parseUmaAddress(req.senderUmaAddress, 'senderUmaAddress') : undefined;
    const account = await this.deps.accounts.getExternalAccount(req.platformId, req.accountId);
    if (account.status !== 'ACTIVE') {
      throw fail('EXTERNAL_ACCOUNT_NOT_USABLE', `External account ${account.id} is ${account.status.toLowerCase()}, not active`, {
        field: 'accountId',
        status: account.status,
      });
    }
    const rates = this.deps.rates[req.environment];
    if (!rates.currencies().includes(account.currency)) {
      throw fail('UNSUPPORTED_CURRENCY', `Payments in ${account.currency} are not supported`, {
        field: 'accountId',
        supported: rates.currencies(),
      });
    }
    return this.store(req, sender?.address, {
      kind: 'EXTERNAL_ACCOUNT',
      externalAccountId: account.id,
      supportedCurrencies: currencyPreferences({ currencies: [account.currency] }, req.sendingCurrency, rates),
      requiredPayerDataFields: [],
    });
  }

  /** A UMA receiver as its institution describes it (INVALID_UMA_ADDRESS, UMA_RECEIVER_NOT_FOUND otherwise). */
  async lookupUma(req: LookupRequest & { receiverUmaAddress: string }): Promise<ReceiverLookup> {
    const address = parseUmaAddress(req.receiverUmaAddress, 'receiverUmaAddress');
    const sender = req.senderUmaAddress ? parseUmaAddress(req.senderUmaAddress, 'senderUmaAddress') : undefined;
    const profile = await this.deps.counterparties[req.environment].lookupReceiver(address);
    if (!profile) {
      throw fail('UMA_RECEIVER_NOT_FOUND', `No receiver ${address.address} at ${address.domain}`, {
        field: 'receiverUmaAddress',
        receiverUmaAddress: address.address,
      });
    }
    return this.store(req, sender?.address, {
      kind: 'UMA',
      receiverUmaAddress: profile.address,
      supportedCurrencies: currencyPreferences(profile, req.sendingCurrency, this.deps.rates[req.environment]),
      requiredPayerDataFields: profile.requiredPayerDataFields,
      ...(profile.sandboxBehavior ? { sandboxBehavior: profile.sandboxBehavior } : {}),
      counterpartyName: profile.counterpartyName,
    });
  }

  /** Stores what was found about a receiver as a new lookup, usable for LOOKUP_TTL_SECONDS. */
  private async store(
    req: LookupRequest,
    senderUmaAddress: string | undefined,
    found: Omit<ReceiverLookup, 'id' | 'platformId' | 'senderUmaAddress' | 'customerId' | 'sendingCurrency' | 'createdAt' | 'expiresAt'>,
  ): Promise<ReceiverLookup> {
    const now = this.clock.now();
    const lookup: ReceiverLookup = {
      id: newId('Lookup'),
      platformId: req.platformId,
      ...found,
      ...(senderUmaAddress ? { senderUmaAddress } : {}),
      ...(req.customerId ? { customerId: req.customerId } : {}),
      sendingCurrency: req.sendingCurrency,
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.deps.ttlMs),
    };
    await transactional(this.orm, (em) => this.deps.lookups.insert(em, lookup));
    return lookup;
  }

  /** The platform's lookup; LOOKUP_REQUEST_NOT_FOUND (also for another platform's), LOOKUP_EXPIRED past expiresAt unless asked. */
  async get(platformId: string, id: string, includeExpired = false): Promise<ReceiverLookup> {
    const lookup = await this.deps.lookups.find(this.orm.em.fork(), platformId, id);
    if (!lookup) throw fail('LOOKUP_REQUEST_NOT_FOUND', `Lookup ${id} not found`, { field: 'lookupId' });
    if (!includeExpired && lookup.expiresAt.getTime() <= this.clock.now().getTime()) {
      throw fail('LOOKUP_EXPIRED', `Lookup ${id} expired at ${lookup.expiresAt.toISOString()}; look the receiver up again`, {
        field: 'lookupId',
        expiresAt: lookup.expiresAt.toISOString(),
      });
    }
    return lookup;
  }

  /** Deletes lookups expired for more than a day, in `em` (the purge job's transaction). */
  async purgeExpired(em: EntityManager): Promise<number> {
    return this.deps.lookups.purgeExpired(em, new Date(this.clock.now().getTime() - 86_400_000));
  }
}
