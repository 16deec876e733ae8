import { newId, decodeCursor, pageSize, type Clock, type Page } from '@sluice/core';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { customerNotFound, fail } from '../domain/errors.js';
import {
  applyCustomerUpdate,
  newCustomer,
  umaDomainFor,
  validateCustomerFilter,
  validateNewCustomer,
  validateRequestKey,
  type Customer,
  type CustomerFilter,
  type CustomerUpdateInput,
  type NewCustomerInput,
} from '../domain/customer.js';
import { supportedCurrencyCodes } from '../domain/platform-config.js';
import { generateUmaAddress } from '../domain/uma-address.js';
import { validIds } from '../domain/validation.js';
import type { CustomerRepository } from '../store/customer.repository.js';
import type { PlatformConfigRepository } from '../store/platform-config.repository.js';
import type { PlatformRepository } from '../store/platform.repository.js';
import type { Platform, PlatformConfig } from '../domain/platform.js';
import { requirePlatform } from './platforms.service.js';
import type { IdentityEvents } from './ports.js';

/** Customers of platforms. Deleting is soft: the customer stays readable with `deletedAt` set. */
export class CustomersService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly store: {
      platforms: PlatformRepository;
      configs: PlatformConfigRepository;
      customers: CustomerRepository;
    },
    private readonly events: IdentityEvents,
    /** Domain of generated UMA addresses for sandbox platforms without an umaDomain. */
    private readonly sandboxUmaDomain: string,
  ) {}

  /**
   * Creates a customer and writes CUSTOMER.CREATED in the same transaction.
   * Uniqueness of platformCustomerId and umaAddress among the platform's live
   * customers is enforced by unique indexes (no read-then-write race; the UMA
   * address's by its blind index, CustomerRepository). With a
   * `requestKey` (the REST Idempotency-Key), a repeated creation returns the
   * customer the first one made (`replayed`), so a retry after a lost answer
   * neither duplicates the customer nor gets a 409.
   */
  async create(
    platformId: string,
    input: NewCustomerInput,
    requestKey?: string,
  ): Promise<{ customer: Customer; replayed: boolean }> {
    validIds(['platformId', platformId, 'Platform']);
    validateRequestKey(requestKey);
    try {
      return await transactional(this.orm, async (em) => {
        if (requestKey) {
          const earlier = await this.store.customers.findByRequestKey(em, platformId, requestKey);
          if (earlier) return { customer: earlier, replayed: true };
        }
        const platform = await requirePlatform(this.store.platforms, em, platformId);
        // Shared lock until commit: a config change waits for this transaction (or it for the
        // change), so the embedded-wallet currencies CUSTOMER.CREATED carries are never older
        // than a PLATFORM_CONFIG.UPDATED that comes after it in the stream.
        const config = await this.store.configs.get(em, platformId, 'share');
        const created = await this.insertNew(em, { platform, config }, input, requestKey);
        return { customer: created, replayed: false };
      });
    } catch (err) {
      if (requestKey && this.store.customers.uniqueKeyViolated(err)) {
        // A concurrent twin of this request won (on the request key, or on the UMA address both
        // give, which a twin on another master key finds first); answer what it created.
        const earlier = await this.store.customers.findByRequestKey(
          this.orm.em.fork(),
          platformId,
          requestKey,
        );
        if (earlier) return { customer: earlier, replayed: true };
      }
      throw await this.conflict(err, platformId, input.platformCustomerId, input.umaAddress);
    }
  }

  /**
   * THE way a customer is made, in the caller's transaction: validates the creation against the
   * platform (read by the caller, its config share-locked), inserts the customer and writes
   * CUSTOMER.CREATED (and the status change of a self-verifying platform). A taken unique value
   * fails the statement (see `conflict`).
   */
  async insertNew(
    em: EntityManager,
    ctx: { platform: Platform; config: PlatformConfig },
    input: NewCustomerInput,
    requestKey?: string,
  ): Promise<Customer> {
    const { platform, config } = ctx;
    const { settings } = config;
    const now = this.clock.now();
    const draft = validateNewCustomer(input, {
      supportedCurrencies: supportedCurrencyCodes(settings),
      today: now,
      selfVerifying: config.isRegulatedFinancialInstitution,
    });
    const customer = newCustomer(draft, {
      id: newId('Customer'),
      platformId: platform.id,
      umaAddress:
        draft.umaAddress ??
        generateUmaAddress(umaDomainFor(platform.environment, settings.umaDomain, this.sandboxUmaDomain)),
      now,
    });
    await this.store.customers.insert(em, customer, requestKey);
    await this.events.customerCreated(em, customer, { environment: platform.environment, settings });
    // A self-verifying platform's status is a change from UNVERIFIED, as compliance's would be.
    return draft.verificationStatus
      ? await this.changeVerificationStatus(em, customer, draft.verificationStatus)
      : customer;
  }

  /** A customer of the platform, deleted ones included (with deletedAt set). */
  async get(platformId: string, customerId: string): Promise<Customer> {
    validIds(['platformId', platformId, 'Platform'], ['customerId', customerId, 'Customer']);
    return this.require(this.orm.em.fork(), platformId, customerId);
  }

  /** Customers matching every given filter, newest first, keyset paginated. */
  async list(
    platformId: string,
    filter: CustomerFilter,
    limit: number | undefined,
    cursor: string | undefined,
  ): Promise<Page<Customer>> {
    validIds(['platformId', platformId, 'Platform']);
    const valid = validateCustomerFilter(filter);
    const size = pageSize(limit);
    const after = decodeCursor(cursor);
    return this.store.customers.list(this.orm.em.fork(), platformId, valid, size, after);
  }

  /**
   * Applies an update; writes CUSTOMER.UPDATED when a field other than the status changed. A
   * kycStatus/kybStatus set by a self-verifying platform is then applied as compliance's
   * decisions are (changeVerificationStatus: its CUSTOMER.KYC_* / KYB_* webhook).
   */
  async update(platformId: string, customerId: string, input: CustomerUpdateInput): Promise<Customer> {
    validIds(['platformId', platformId, 'Platform'], ['customerId', customerId, 'Customer']);
    try {
      return await transactional(this.orm, async (em) => {
        const current = await this.require(em, platformId, customerId, true);
        const platform = await requirePlatform(this.store.platforms, em, platformId);
        const config = await this.store.configs.get(em, platformId, 'share'); // as in create
        const { settings } = config;
        const now = this.clock.now();
        let next = applyCustomerUpdate(current, input, {
          supportedCurrencies: supportedCurrencyCodes(settings),
          today: now,
          selfVerifying: config.isRegulatedFinancialInstitution,
        });
        if (JSON.stringify(next) === JSON.stringify(current)) next = current;
        else {
          next.updatedAt = now;
          await this.store.customers.update(em, next);
          await this.events.customerUpdated(em, next, { environment: platform.environment, settings });
        }
        return input.verificationStatus
          ? await this.changeVerificationStatus(em, next, input.verificationStatus)
          : next;
      });
    } catch (err) {
      throw await this.conflict(err, platformId, undefined, input.umaAddress);
    }
  }

  /** Soft-deletes a customer and writes CUSTOMER.DELETED; a second delete answers CUSTOMER_DELETED. */
  async delete(platformId: string, customerId: string): Promise<Customer> {
    validIds(['platformId', platformId, 'Platform'], ['customerId', customerId, 'Customer']);
    return transactional(this.orm, async (em) => {
      const current = await this.require(em, platformId, customerId, true);
      if (current.deletedAt)
        throw fail('CUSTOMER_DELETED', 'The customer has already been deleted', { customerId: current.id });
      const now = this.clock.now();
      const deleted: Customer = { ...current, deletedAt: now, updatedAt: now };
      await this.store.customers.update(em, deleted);
      await this.events.customerDeleted(em, deleted);
      return deleted;
    });
  }

  /**
   * Sets a customer's kycStatus (individual) or kybStatus (business) as compliance decided it
   * (CUSTOMER_VERIFICATION.STATUS_CHANGED), in the consumer's inbox transaction: writes the
   * CUSTOMER.KYC_* / KYB_* webhook when the status changed, and always the acknowledgement
   * CUSTOMER_VERIFICATION.STATUS_APPLIED, after which compliance shows its decision (so whoever
   * reads the decided verification reads the customer's status too). Idempotent. A deleted
   * customer or one of another type is left alone (false, acknowledged as not applied).
   */
  async applyVerificationStatus(
    em: EntityManager,
    platformId: string,
    c: {
      customerId: string;
      customerType: Customer['customerType'];
      status: Exclude<Customer['verificationStatus'], 'UNVERIFIED'>;
      verificationId: string;
    },
  ): Promise<boolean> {
    const current = await this.store.customers.find(em, platformId, c.customerId, { forUpdate: true });
    const applicable = !!current && !current.deletedAt && current.customerType === c.customerType;
    if (current && applicable) await this.changeVerificationStatus(em, current, c.status);
    await this.events.customerVerificationStatusApplied(em, {
      platformId,
      customerId: c.customerId,
      verificationId: c.verificationId,
      status: c.status,
      applied: applicable,
    });
    return applicable;
  }

  /**
   * THE way a customer's kycStatus / kybStatus changes, whoever decided it (compliance's
   * CUSTOMER_VERIFICATION.STATUS_CHANGED, or a self-verifying platform on create/update): writes
   * the customer and, when the status really changed, its CUSTOMER.KYC_* / KYB_* webhook (none
   * for a move back to UNVERIFIED, which has no webhook type). `current` is locked by the caller.
   */
  private async changeVerificationStatus(
    em: EntityManager,
    current: Customer,
    status: Customer['verificationStatus'],
  ): Promise<Customer> {
    if (current.verificationStatus === status) return current;
    const next: Customer = { ...current, verificationStatus: status, updatedAt: this.clock.now() };
    await this.store.customers.update(em, next);
    await this.events.customerVerificationStatusChanged(em, next);
    return next;
  }

  private async require(
    em: EntityManager,
    platformId: string,
    customerId: string,
    forUpdate = false,
  ): Promise<Customer> {
    const customer = await this.store.customers.find(em, platformId, customerId, { forUpdate });
    if (!customer) throw customerNotFound();
    return customer;
  }

  /** Turns a unique-index violation into the public 409; anything else passes through. */
  async conflict(
    err: unknown,
    platformId: string,
    platformCustomerId: string | undefined,
    umaAddress: string | undefined,
  ): Promise<unknown> {
    const key = this.store.customers.uniqueKeyViolated(err);
    if (key === 'PLATFORM_CUSTOMER_ID') {
      const existing =
        platformCustomerId === undefined
          ? undefined
          : await this.store.customers.findLiveByPlatformCustomerId(
              this.orm.em.fork(),
              platformId,
              platformCustomerId,
            );
      return fail(
        'CUSTOMER_ALREADY_EXISTS',
        `A customer with platformCustomerId ${platformCustomerId} already exists`,
        {
          platformCustomerId,
          ...(existing ? { customerId: existing.id } : {}),
        },
      );
    }
    if (key === 'UMA_ADDRESS') {
      return fail(
        'UMA_ADDRESS_EXISTS',
        `Another customer already has the UMA address ${umaAddress?.toLowerCase()}`,
        {
          umaAddress: umaAddress?.toLowerCase(),
        },
      );
    }
    return err;
  }
}
