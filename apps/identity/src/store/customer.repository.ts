import { EVENTS } from '@sluice/api';
import { LockMode } from '@mikro-orm/core';
import { idUuid, invalidInput, isId, newId, type Clock, type Page } from '@sluice/core';
import { isUniqueViolation, transactional, type EntityManager, type MikroORM } from '@sluice/store';
import type { Outbox } from '@sluice/events';
import { fail } from '../domain/errors.js';
import {
  applyCustomerUpdate,
  umaDomainFor,
  validateCustomerFilter,
  validateNewCustomer,
  type Customer,
  type CustomerFilter,
  type CustomerUpdateInput,
  type NewCustomerInput,
} from '../domain/customer.js';
import { supportedCurrencyCodes } from '../domain/platform-config.js';
import { generateUmaAddress } from '../domain/uma-address.js';
import { customerEventData } from '../events/identity.events.js';
import { CustomerEntity, type CustomerRecord } from './entities.js';
import { customerFromRecord, customerToRecord } from './mappers.js';
import { afterCursor, between, pageOf, pageSize } from './keyset.js';
import type { PlatformRepository } from './platform.repository.js';

const PLATFORM_CUSTOMER_ID_INDEX = 'customers_platform_customer_id';
const UMA_ADDRESS_INDEX = 'customers_uma_address';
const REQUEST_KEY_INDEX = 'customers_request_key';

/** Customers of platforms. Deleting is a soft delete (`deleted_at`). */
export class CustomerRepository {
  constructor(
    private readonly orm: MikroORM,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
    private readonly platforms: PlatformRepository,
    /** Domain of generated UMA addresses for sandbox platforms without an umaDomain. */
    private readonly sandboxUmaDomain: string,
  ) {}

  /**
   * Creates a customer and emits CUSTOMER.CREATED in the same transaction.
   * Uniqueness of platformCustomerId and umaAddress among the platform's live
   * customers is enforced by unique indexes (no read-then-write race). With a
   * `requestKey` (the REST Idempotency-Key), a repeated creation returns the
   * customer the first one made (`replayed`), so a retry after a lost answer
   * neither duplicates the customer nor gets a 409.
   */
  async create(
    platformId: string,
    input: NewCustomerInput,
    requestKey?: string,
  ): Promise<{ customer: Customer; replayed: boolean }> {
    if (requestKey !== undefined && !/^[\x21-\x7e]{1,255}$/.test(requestKey)) {
      throw invalidInput([{ field: 'requestKey', message: 'must be 1 to 255 visible ASCII characters' }]);
    }
    try {
      return await transactional(this.orm, async (em) => {
        if (requestKey) {
          const earlier = await em.findOne(CustomerEntity, { platformId, requestKey });
          if (earlier) return { customer: customerFromRecord(earlier), replayed: true };
        }
        const { platform, settings } = await this.platforms.platformWithSettings(em, platformId);
        const now = this.clock.now();
        const draft = validateNewCustomer(input, {
          supportedCurrencies: supportedCurrencyCodes(settings),
          today: now,
        });
        const id = newId('Customer');
        const umaAddress =
          draft.umaAddress ??
          generateUmaAddress(umaDomainFor(platform.environment, settings.umaDomain, this.sandboxUmaDomain));
        const row = em.create(CustomerEntity, {
          id,
          platformId,
          platformCustomerId: draft.platformCustomerId ?? idUuid(id),
          customerType: draft.customerType,
          region: draft.region ?? null,
          currencies: draft.currencies,
          email: draft.email ?? null,
          umaAddress,
          verificationStatus: 'UNVERIFIED',
          fullName: draft.fullName ?? null,
          birthDate: draft.birthDate ?? null,
          nationality: draft.nationality ?? null,
          address: draft.address ? { ...draft.address } : null,
          businessInfo: draft.businessInfo ? { ...draft.businessInfo } : null,
          createdAt: now,
          updatedAt: now,
          deletedAt: null,
          requestKey: requestKey ?? null,
        });
        await em.flush();
        const customer = customerFromRecord(row);
        await this.outbox.add(em, EVENTS.CUSTOMER_CREATED, {
          platformId,
          data: customerEventData(customer),
          occurredAt: now,
        });
        return { customer, replayed: false };
      });
    } catch (err) {
      if (requestKey && isUniqueViolation(err, REQUEST_KEY_INDEX)) {
        // A concurrent twin of this request won; answer what it created.
        const earlier = await this.orm.em.fork().findOne(CustomerEntity, { platformId, requestKey });
        if (earlier) return { customer: customerFromRecord(earlier), replayed: true };
      }
      throw await this.conflict(err, platformId, input.platformCustomerId, input.umaAddress);
    }
  }

  /** A customer of the platform, deleted ones included (with deletedAt set). */
  async get(platformId: string, customerId: string): Promise<Customer> {
    return customerFromRecord(await this.require(this.orm.em.fork(), platformId, customerId));
  }

  /** Customers matching every given filter, newest first, keyset paginated. */
  async list(
    platformId: string,
    filter: CustomerFilter,
    limit: number | undefined,
    cursor: string | undefined,
  ): Promise<Page<Customer>> {
    const f = validateCustomerFilter(filter);
    const size = pageSize(limit);
    const after = afterCursor(cursor);
    const where: Record<string, unknown> = { platformId };
    if (!f.includeDeleted) where.deletedAt = null;
    if (f.platformCustomerId !== undefined) where.platformCustomerId = f.platformCustomerId;
    if (f.customerType) where.customerType = f.customerType;
    if (f.region) where.region = f.region;
    if (f.currency) where.currencies = { $contains: [f.currency] };
    if (f.umaAddress) where.umaAddress = f.umaAddress;
    const created = between(f.createdAfter, f.createdBefore);
    if (created) where.createdAt = created;
    const updated = between(f.updatedAfter, f.updatedBefore);
    if (updated) where.updatedAt = updated;
    const em = this.orm.em.fork();
    const [total, rows] = await Promise.all([
      em.count(CustomerEntity, where),
      em
        .fork()
        .find(CustomerEntity, after ? { $and: [where, after] } : where, {
          orderBy: { createdAt: 'desc', id: 'desc' },
          limit: size + 1,
        }),
    ]);
    return pageOf(rows, size, total, customerFromRecord);
  }

  /** Applies an update; emits CUSTOMER.UPDATED when something changed. */
  async update(platformId: string, customerId: string, input: CustomerUpdateInput): Promise<Customer> {
    try {
      return await transactional(this.orm, async (em) => {
        const row = await this.require(em, platformId, customerId, true);
        const { settings } = await this.platforms.platformWithSettings(em, platformId);
        const now = this.clock.now();
        const current = customerFromRecord(row);
        const next = applyCustomerUpdate(current, input, {
          supportedCurrencies: supportedCurrencyCodes(settings),
          today: now,
        });
        if (JSON.stringify(next) === JSON.stringify(current)) return current;
        next.updatedAt = now;
        customerToRecord(next, row);
        await em.flush();
        await this.outbox.add(em, EVENTS.CUSTOMER_UPDATED, {
          platformId,
          data: customerEventData(next),
          occurredAt: now,
        });
        return next;
      });
    } catch (err) {
      throw await this.conflict(err, platformId, undefined, input.umaAddress);
    }
  }

  /** Soft-deletes a customer; a second delete answers CUSTOMER_DELETED. */
  async delete(platformId: string, customerId: string): Promise<Customer> {
    return transactional(this.orm, async (em) => {
      const row = await this.require(em, platformId, customerId, true);
      if (row.deletedAt)
        throw fail('CUSTOMER_DELETED', 'The customer has already been deleted', { customerId: row.id });
      const now = this.clock.now();
      row.deletedAt = now;
      row.updatedAt = now;
      await em.flush();
      await this.outbox.add(em, EVENTS.CUSTOMER_DELETED, {
        platformId,
        data: { customerId: row.id },
        occurredAt: now,
      });
      return customerFromRecord(row);
    });
  }

  private async require(
    em: EntityManager,
    platformId: string,
    customerId: string,
    lock = false,
  ): Promise<CustomerRecord> {
    const row = isId(customerId, 'Customer')
      ? await em.findOne(
          CustomerEntity,
          { id: customerId, platformId },
          lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
        )
      : null;
    if (!row) throw fail('CUSTOMER_NOT_FOUND', 'Customer not found');
    return row;
  }

  /** Turns a unique-index violation into the public 409; anything else passes through. */
  private async conflict(
    err: unknown,
    platformId: string,
    platformCustomerId: string | undefined,
    umaAddress: string | undefined,
  ): Promise<unknown> {
    if (isUniqueViolation(err, PLATFORM_CUSTOMER_ID_INDEX)) {
      const existing = await this.orm.em
        .fork()
        .findOne(CustomerEntity, { platformId, platformCustomerId, deletedAt: null });
      return fail(
        'CUSTOMER_ALREADY_EXISTS',
        `A customer with platformCustomerId ${platformCustomerId} already exists`,
        {
          platformCustomerId,
          ...(existing ? { customerId: existing.id } : {}),
        },
      );
    }
    if (isUniqueViolation(err, UMA_ADDRESS_INDEX)) {
      return fail(
        'UMA_ADDRESS_EXISTS',
        `Another customer already has the UMA address ${umaAddress?.toLowerCase()}`,
        { umaAddress: umaAddress?.toLowerCase() },
      );
    }
    return err;
  }
}
