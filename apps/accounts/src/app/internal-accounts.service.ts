import { decodeCursor, newId, pageSize, toPage, type Clock, type Page } from '@sluice/core';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { accountNotFound } from '../domain/errors.js';
import {
  holdingAccountType,
  type Environment,
  type InternalAccountRecord,
  type InternalAccountType,
} from '../domain/internal-account.js';
import {
  InternalAccountRepository,
  type AccountFilter,
  type AccountOwner,
} from '../store/internal-account.repository.js';

/** Provisioning and reading internal accounts. Inputs are validated by the callers (RPC handlers, consumer). */
export class InternalAccountsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly repo = new InternalAccountRepository(),
  ) {}

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
  ): Promise<InternalAccountRecord[]> {
    const wanted = currencies.map((currency) => ({ currency, type: holdingAccountType(currency) }));
    const pick = (rows: InternalAccountRecord[]) =>
      wanted
        .map((w) => rows.find((r) => r.currency === w.currency && r.type === w.type))
        .filter((r): r is InternalAccountRecord => r !== undefined);
    let rows = await this.repo.findByOwner(em, owner, currencies);
    const missing = wanted.filter((w) => !rows.some((r) => r.currency === w.currency && r.type === w.type));
    if (missing.length === 0) return pick(rows);
    await this.repo.insertMissing(
      em,
      owner,
      environment,
      missing.map((m) => ({ id: newId('InternalAccount'), ...m })),
      this.clock.now(),
    );
    rows = await this.repo.findByOwner(em, owner, currencies);
    const result = pick(rows);
    if (result.length !== wanted.length) throw new Error('provisioning left an account missing');
    return result;
  }

  /** `ensureIn` in its own transaction. */
  ensure(
    owner: AccountOwner,
    currencies: readonly string[],
    environment: Environment,
  ): Promise<InternalAccountRecord[]> {
    return transactional(this.orm, (em) => this.ensureIn(em, owner, currencies, environment));
  }

  /** One account of the platform; another platform's account is INTERNAL_ACCOUNT_NOT_FOUND. */
  async get(platformId: string, accountId: string): Promise<InternalAccountRecord> {
    const account = await this.repo.get(this.orm.em.fork(), platformId, accountId);
    if (!account) throw accountNotFound(accountId);
    return account;
  }

  /** A page of accounts, oldest first. `limit` 1..100 (default 20), `cursor` from a previous page. */
  async list(
    filter: AccountFilter,
    limit: number | undefined,
    cursor: string | undefined,
  ): Promise<Page<InternalAccountRecord>> {
    const size = pageSize(limit);
    const after = decodeCursor(cursor);
    const { rows, total } = await this.repo.list(this.orm.em.fork(), filter, size, after);
    return toPage(
      rows,
      size,
      total,
      (a) => ({ k: a.createdAt.toISOString(), id: a.id }),
      (a) => a,
    );
  }
}

export type { AccountFilter, AccountOwner, InternalAccountType };
