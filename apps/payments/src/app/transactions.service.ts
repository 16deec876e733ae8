import { decodeCursor, encodeCursor, pageSize, type Page } from '@sluice/core';
import type { EntityManager, MikroORM } from '@sluice/store';
import { fail } from '../domain/errors.js';
import type { Transaction } from '../domain/transaction.js';
import type { TransactionQuery } from '../domain/transaction-query.js';
import type { TransactionRepository } from '../store/transaction.repository.js';

/** Reads of transactions: GET /transactions/{id} and GET /transactions (and the use cases' reads). */
export class TransactionsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly transactions: TransactionRepository,
  ) {}

  /** GET /transactions/{id}: TRANSACTION_NOT_FOUND for an unknown or another platform's id. */
  async get(platformId: string, id: string): Promise<Transaction> {
    const t = await this.find(platformId, id);
    if (!t) throw fail('TRANSACTION_NOT_FOUND', `Transaction ${id} not found`, { transactionId: id });
    return t;
  }

  /** The platform's transaction, or undefined; `em` (with `forUpdate`) reads it in a transaction. */
  find(platformId: string, id: string, em?: EntityManager, forUpdate = false): Promise<Transaction | undefined> {
    return this.transactions.get(em ?? this.orm.em.fork(), platformId, id, forUpdate);
  }

  /** Transactions by id, whatever their platform (for a batch of jobs, which check it), in `em`. */
  findMany(em: EntityManager, ids: string[]): Promise<Map<string, Transaction>> {
    return this.transactions.getMany(em, ids);
  }

  /** The platform's transaction made under a request key, if any. */
  byRequestKey(platformId: string, requestKey: string): Promise<Transaction | undefined> {
    return this.transactions.byRequestKey(this.orm.em.fork(), platformId, requestKey);
  }

  /** GET /transactions: one page, newest first unless asked otherwise. */
  async list(q: TransactionQuery): Promise<Page<Transaction>> {
    const limit = pageSize(q.limit);
    const pos = decodeCursor(q.cursor);
    const { cursor: _cursor, limit: _limit, ...filter } = q;
    const { rows, total } = await this.transactions.list(this.orm.em.fork(), {
      ...filter,
      limit,
      ...(pos ? { after: { createdAt: new Date(pos.k), id: pos.id } } : {}),
    });
    const hasMore = rows.length > limit;
    const data = hasMore ? rows.slice(0, limit) : rows;
    const last = data[data.length - 1];
    return {
      data,
      hasMore,
      totalCount: total,
      ...(hasMore && last ? { nextCursor: encodeCursor({ k: last.createdAt.toISOString(), id: last.id }) } : {}),
    };
  }
}
