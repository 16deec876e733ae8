import { LockMode } from '@mikro-orm/core';
import { isId, type CursorPosition, type Page } from '@sluice/core';
import { isUniqueViolation, lockKeys, pgTextArray, type EntityManager } from '@sluice/store';
import type { Customer, CustomerFilter } from '../domain/customer.js';
import type { MasterKeyring } from '@sluice/crypto';
import { CustomerEntity, type CustomerRecord } from './entities.js';
import { customerFromRow, customerToRow } from './mappers.js';
import { afterCursor, between, pageOf } from './keyset.js';
import { umaAddressIndexes } from './sealing.js';

/** The unique keys of `customers` a write can collide with (migrations.ts names their indexes). */
export type CustomerUniqueKey = 'REQUEST_KEY' | 'PLATFORM_CUSTOMER_ID' | 'UMA_ADDRESS';

const UNIQUE_INDEXES: Record<CustomerUniqueKey, string> = {
  REQUEST_KEY: 'customers_request_key',
  // These two cover live customers only: a deleted customer frees its values.
  PLATFORM_CUSTOMER_ID: 'customers_platform_customer_id',
  // The blind index under the current key; its other forms are looked for before a write (`claimUmaAddress`).
  UMA_ADDRESS: 'customers_uma_address_index',
};

/** A write found a unique value taken before the statement that would have collided (`claimUmaAddress`). */
class UniqueKeyTaken extends Error {
  constructor(readonly key: CustomerUniqueKey) {
    super(`${key} taken`);
  }
}

/**
 * The `customers` table (personal fields and UMA address sealed under `keyring`, the address found
 * by its blind index). Deleting is soft: the row keeps `deleted_at`.
 */
export class CustomerRepository {
  constructor(private readonly keyring: MasterKeyring) {}

  private readonly fromRow = (r: CustomerRecord): Customer => customerFromRow(r, this.keyring);

  /**
   * The rows holding a (normalized) UMA address: its blind index under any key of the ring, or
   * the address itself on a row written before sealing.
   */
  private umaAddressIs(umaAddress: string) {
    return { $or: [{ umaAddressIndex: { $in: umaAddressIndexes(this.keyring, umaAddress) } }, { umaAddress }] };
  }

  /**
   * Before `customer`'s row is written live with its UMA address under the current key's blind
   * index (which `customers_uma_address_index` keeps unique): another live customer of the
   * platform holding the address in another form — a retired key's index, or in plain text (written
   * before sealing) — takes it (UniqueKeyTaken). During a rolling rotation one replica may index
   * under the old key and another under the new one: both lock every index of the ring (the same
   * set, in order) before looking, so the second sees the first's row.
   */
  private async claimUmaAddress(em: EntityManager, customer: Customer): Promise<void> {
    const indexes = umaAddressIndexes(this.keyring, customer.umaAddress);
    await lockKeys(em, indexes);
    const taken = await em.execute<{ id: string }[]>(
      `SELECT id FROM customers WHERE platform_id = ? AND id <> ? AND deleted_at IS NULL
         AND (uma_address_index = ANY(?::text[]) OR uma_address = ?) LIMIT 1`,
      [customer.platformId, customer.id, pgTextArray(indexes.slice(1)), customer.umaAddress],
    );
    if (taken.length) throw new UniqueKeyTaken('UMA_ADDRESS');
  }

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
    const row = await em.findOne(CustomerEntity, { platformId, deletedAt: null, ...this.umaAddressIs(umaAddress) });
    return row ? this.fromRow(row) : undefined;
  }

  /** Inserts the customer; a taken unique value fails the insert (see `uniqueKeyViolated`). */
  async insert(em: EntityManager, customer: Customer, requestKey?: string): Promise<void> {
    await this.claimUmaAddress(em, customer);
    em.create(CustomerEntity, customerToRow(customer, this.keyring, requestKey ?? null));
    await em.flush();
  }

  /** Writes the customer over its row (the creating request's key stays); a taken UMA address fails it. */
  async update(em: EntityManager, customer: Customer): Promise<void> {
    const row = await em.findOneOrFail(CustomerEntity, { id: customer.id });
    const sameAddress =
      row.umaAddress === customer.umaAddress ||
      umaAddressIndexes(this.keyring, customer.umaAddress).includes(row.umaAddressIndex ?? '');
    if (!customer.deletedAt && !sameAddress) await this.claimUmaAddress(em, customer);
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
    if (filter.umaAddress) Object.assign(where, this.umaAddressIs(filter.umaAddress));
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
    if (err instanceof UniqueKeyTaken) return err.key;
    return (Object.keys(UNIQUE_INDEXES) as CustomerUniqueKey[]).find((k) =>
      isUniqueViolation(err, UNIQUE_INDEXES[k]),
    );
  }
}
