import { decodeCursor, newId, pageSize, type Clock, type Page, type Environment } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { accountNotFound, fail } from '../domain/errors.js';
import { holdingAccountType, knownCurrencies, type AccountOwner, type InternalAccountRecord, type InternalAccountType } from '../domain/internal-account.js';
import {
  validateAccountIds,
  validateAccountList,
  validateAccountUpdate,
  validateEnsureAccounts,
  type AccountListRequest,
  type EnsureAccountsRequest,
} from '../domain/validation.js';
import { InternalAccountRepository } from '../store/internal-account.repository.js';
import { keysetPage } from './page.js';
import type { PlatformDirectory } from './ports.js';

/** Provisioning, reading and updating internal accounts. */
export class InternalAccountsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly platforms: PlatformDirectory,
    private readonly logger: Logger,
    private readonly repo = new InternalAccountRepository(),
  ) {}

  /**
   * EnsureCustomerAccounts / EnsurePlatformAccounts: the owner's holding accounts in
   * the request's currencies and, for a customer, an EMBEDDED_WALLET account per
   * embedded-wallet currency of its platform (asked of identity before the
   * transaction; when identity cannot answer, the CUSTOMER.CREATED consumer adds
   * them later).
   */
  async ensureAccounts(request: EnsureAccountsRequest): Promise<InternalAccountRecord[]> {
    const { owner, currencies, environment } = validateEnsureAccounts(request);
    let embedded: string[] = [];
    if (owner.owner === 'CUSTOMER') {
      try {
        embedded = knownCurrencies(await this.platforms.embeddedWalletCurrencies(owner.platformId)).known;
      } catch (err) {
        this.logger.warn(
          { err: (err as Error).message },
          'embedded-wallet currencies unavailable; EMBEDDED_WALLET accounts deferred',
        );
      }
    }
    return this.ensure(owner, currencies, environment, embedded);
  }

  /**
   * Makes sure the owner has one holding account per currency (validated codes) and
   * returns them in the order of `currencies`. Idempotent; concurrent calls create
   * each account once. Runs in the caller's transaction.
   */
  async ensureIn(
    em: EntityManager,
    owner: AccountOwner,
    currencies: readonly string[],
    environment: Environment,
    /** Currencies of EMBEDDED_WALLET accounts (customers of platforms with embedded wallets); appended after the holding accounts. */
    embeddedWalletCurrencies: readonly string[] = [],
  ): Promise<InternalAccountRecord[]> {
    const wanted: { currency: string; type: InternalAccountType }[] = [
      ...currencies.map((currency) => ({ currency, type: holdingAccountType(currency) })),
      ...(owner.owner === 'CUSTOMER' ? embeddedWalletCurrencies : []).map((currency) => ({
        currency,
        type: 'EMBEDDED_WALLET' as const,
      })),
    ];
    const codes = [...new Set(wanted.map((w) => w.currency))];
    const pick = (rows: InternalAccountRecord[]) =>
      wanted
        .map((w) => rows.find((r) => r.currency === w.currency && r.type === w.type))
        .filter((r): r is InternalAccountRecord => r !== undefined);
    let rows = await this.repo.findByOwner(em, owner, codes);
    const missing = wanted.filter((w) => !rows.some((r) => r.currency === w.currency && r.type === w.type));
    if (missing.length === 0) return pick(rows);
    await this.repo.insertMissing(
      em,
      owner,
      environment,
      missing.map((m) => ({ id: newId('InternalAccount'), ...m })),
      this.clock.now(),
    );
    rows = await this.repo.findByOwner(em, owner, codes);
    const result = pick(rows);
    if (result.length !== wanted.length) throw new Error('provisioning left an account missing');
    return result;
  }

  /** `ensureIn` (validated currency codes) in its own transaction. */
  ensure(
    owner: AccountOwner,
    currencies: readonly string[],
    environment: Environment,
    embeddedWalletCurrencies: readonly string[] = [],
  ): Promise<InternalAccountRecord[]> {
    return transactional(this.orm, (em) =>
      this.ensureIn(em, owner, currencies, environment, embeddedWalletCurrencies),
    );
  }

  /** Gives every customer of the platform (that has accounts) an EMBEDDED_WALLET account per currency. Idempotent. */
  async ensureEmbeddedWalletsIn(
    em: EntityManager,
    platformId: string,
    currencies: readonly string[],
    environment: Environment,
  ): Promise<number> {
    if (currencies.length === 0) return 0;
    const customers = await this.repo.customersOf(em, platformId);
    for (const customerId of customers)
      await this.ensureIn(em, { platformId, owner: 'CUSTOMER', customerId }, [], environment, currencies);
    return customers.length;
  }

  /** Updates an EMBEDDED_WALLET account's settings; NOT_EMBEDDED_WALLET for another type. */
  async update(request: {
    platformId: string;
    accountId: string;
    privateEnabled?: boolean;
  }): Promise<InternalAccountRecord> {
    const { privateEnabled } = validateAccountUpdate(request);
    const { platformId, accountId } = request;
    const account = await this.get(platformId, accountId);
    if (account.type !== 'EMBEDDED_WALLET')
      throw fail('NOT_EMBEDDED_WALLET', 'Only EMBEDDED_WALLET internal accounts have updatable settings', {
        errors: [{ field: 'id', message: 'must be an EMBEDDED_WALLET internal account' }],
      });
    await transactional(this.orm, (em) =>
      this.repo.setPrivateEnabled(em, platformId, accountId, privateEnabled, this.clock.now()),
    );
    return this.get(platformId, accountId);
  }

  /** One account of the platform; another platform's account is INTERNAL_ACCOUNT_NOT_FOUND. */
  async get(platformId: string, accountId: string): Promise<InternalAccountRecord> {
    validateAccountIds(platformId, accountId, 'InternalAccount');
    const account = await this.repo.get(this.orm.em.fork(), platformId, accountId);
    if (!account) throw accountNotFound(accountId);
    return account;
  }

  /** A page of accounts, oldest first. `limit` 1..100 (default 20), `cursor` from a previous page. */
  async list(
    request: AccountListRequest,
    limit: number | undefined,
    cursor: string | undefined,
  ): Promise<Page<InternalAccountRecord>> {
    const filter = validateAccountList(request, { withType: true });
    const size = pageSize(limit);
    const after = decodeCursor(cursor);
    const { rows, total } = await this.repo.list(this.orm.em.fork(), filter, size, after);
    return keysetPage(rows, size, total);
  }
}
