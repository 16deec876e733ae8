import { LockMode } from '@mikro-orm/core';
import { isId, type CursorPosition, type Page } from '@sluice/core';
import { isUniqueViolation, type EntityManager } from '@sluice/store';
import type { Customer, CustomerFilter } from '../domain/customer.js';
import type { MasterKeyring } from '@sluice/crypto';
import { CustomerEntity, type CustomerRecord } from './entities.js';
import { customerFromRow, customerToRow } from './mappers.js';
import { afterCursor, between, pageOf } from './keyset.js';

/** The unique keys of `customers` a write can collide with (migrations.ts names their indexes). */
export type CustomerUniqueKey = 'REQUEST_KEY' | 'PLATFORM_CUSTOMER_ID' | 'UMA_ADDRESS';

const UNIQUE_INDEXES: Record<CustomerUniqueKey, string> = {
  REQUEST_KEY: 'customers_request_key',
  // These two cover live customers only: a deleted customer frees its values.
  PLATFORM_CUSTOMER_ID: 'customers_platform_customer_id',
  UMA_ADDRESS: 'customers_uma_address',
};

/** The `customers` table (personal fields sealed under `keyring`). Deleting is soft: the row keeps `deleted_at`. */
export class CustomerRepository {
  constructor(private readonly keyring: MasterKeyring) {}

  private readonly fromRow = (r: CustomerRecord): Customer => customerFromRow(r, this.keyring);

  /** A customer of the platform, deleted ones included (a malformed id finds none). `forUpdate` locks its row. */
  async find(
    em: EntityManager,
    platformId: string,
    customerId: string,
    o: { forUpdate?: boolean } = {},
  ): Promise<Customer | undefined> {
    if (!isId(customerId, 'Customer')) return undefined;
    const row = await em.findOne(
      CustomerEntity,
      { id: customerId, platformId },
      o.forUpdate ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
    );
    return row ? this.fromRow(row) : undefined;
  }

  /** The customer a request with this Idempotency-Key created. */
  async findByRequestKey(
    em: EntityManager,
    platformId: string,
    requestKey: string,
  ): Promise<Customer | undefined> {
    const row = await em.findOne(CustomerEntity, { platformId, requestKey });
    return row ? this.fromRow(row) : undefined;
  }

  /** The platform's live customer with this platformCustomerId. */
  async findLiveByPlatformCustomerId(
    em: EntityManager,
    platformId: string,
    platformCustomerId: string,
  ): Promise<Customer | undefined> {
    const row = await em.findOne(CustomerEntity, { platformId, platformCustomerId, deletedAt: null });
    return row ? this.fromRow(row) : undefined;
  }

  /** The platform's live customers with these platformCustomerIds, by platformCustomerId. */
  async findLiveByPlatformCustomerIds(
    em: EntityManager,
    platformId: string,
    platformCustomerIds: string[],
  ): Promise<Map<string, Customer>> {
    if (platformCustomerIds.length === 0) return new Map();
    const rows = await em.find(CustomerEntity, {
      platformId,
      platformCustomerId: { $in: platformCustomerIds },
      deletedAt: null,
    });
    return new Map(rows.map((r) => [r.platformCustomerId, this.fromRow(r)]));
  }

  /** The platform's live customer with this (normalized) UMA address. */
  async findLiveByUmaAddress(
    em: EntityManager,
    platformId: string,
    umaAddress: string,
  ): Promise<Customer | undefined> {
    const row = await em.findOne(CustomerEntity, { platformId, umaAddress, deletedAt: null });
    return row ? this.fromRow(row) : undefined;
  }

  /** Inserts the customer; a taken unique value fails the flush (see `uniqueKeyViolated`). */
  async insert(em: EntityManager, customer: Customer, requestKey?: string): Promise<void> {
    em.create(CustomerEntity, customerToRow(customer, this.keyring, requestKey ?? null));
    await em.flush();
  }

  /** Writes the customer over its row (the creating request's key stays). */
  async update(em: EntityManager, customer: Customer): Promise<void> {
    const row = await em.findOneOrFail(CustomerEntity, { id: customer.id });
    const { requestKey: _kept, ...changes } = customerToRow(customer, this.keyring);
    Object.assign(row, changes);
    await em.flush();
  }

  /** Customers matching every given filter (validated), newest first: a page of `size` after `after`. */
  async list(
    em: EntityManager,
    platformId: string,
    filter: CustomerFilter,
    size: number,
    after: CursorPosition | undefined,
  ): Promise<Page<Customer>> {
    const where: Record<string, unknown> = { platformId };
    if (!filter.includeDeleted) where.deletedAt = null;
    if (filter.platformCustomerId !== undefined) where.platformCustomerId = filter.platformCustomerId;
    if (filter.customerType) where.customerType = filter.customerType;
    if (filter.region) where.region = filter.region;
    if (filter.currency) where.currencies = { $contains: [filter.currency] };
    if (filter.umaAddress) where.umaAddress = filter.umaAddress;
    const created = between(filter.createdAfter, filter.createdBefore);
    if (created) where.createdAt = created;
    const updated = between(filter.updatedAfter, filter.updatedBefore);
    if (updated) where.updatedAt = updated;
    const position = afterCursor(after);
    const [total, rows] = await Promise.all([
      em.count(CustomerEntity, where),
      em.fork().find(CustomerEntity, position ? { $and: [where, position] } : where, {
        orderBy: { createdAt: 'desc', id: 'desc' },
        limit: size + 1,
      }),
    ]);
    return pageOf(rows, size, total, this.fromRow);
  }

  /** The unique key a failed write collided with, if that is why it failed. */
  uniqueKeyViolated(err: unknown): CustomerUniqueKey | undefined {
    return (Object.keys(UNIQUE_INDEXES) as CustomerUniqueKey[]).find((k) =>
      isUniqueViolation(err, UNIQUE_INDEXES[k]),
    );
  }
}
