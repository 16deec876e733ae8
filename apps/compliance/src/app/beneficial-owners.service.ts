import {
  decodeCursor,
  invalidInput,
  newId,
  pageSize,
  validIds,
  type Clock,
  type Environment,
  type Page,
} from '@sluice/core';
import type { Logger } from '@sluice/logging';
import { transactional, type MikroORM } from '@sluice/store';
import {
  applyBeneficialOwnerUpdate,
  validateNewBeneficialOwner,
  type BeneficialOwner,
  type BeneficialOwnerUpdateInput,
  type NewBeneficialOwnerInput,
} from '../domain/beneficial-owner.js';
import { beneficialOwnerNotFound, customerNotFound } from '../domain/errors.js';
import type { BeneficialOwnerRepository } from '../store/beneficial-owner.repository.js';
import type { CustomerDirectory, KycProvider } from './ports.js';

/**
 * Beneficial owners of business customers. KYC starts on creation and again when personal data
 * changes: the owner is PENDING and its check falls due after the provider's delay; the
 * screening worker asks the provider then (`decideKyc`).
 */
export class BeneficialOwnersService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly owners: BeneficialOwnerRepository,
    private readonly customers: CustomerDirectory,
    private readonly providers: Record<Environment, KycProvider>,
    private readonly logger: Logger,
  ) {}

  async create(
    platformId: string,
    environment: Environment,
    customerId: string,
    input: NewBeneficialOwnerInput,
  ): Promise<BeneficialOwner> {
    validIds(['platformId', platformId, 'Platform'], ['customerId', customerId, 'Customer']);
    // Read (identity) before the transaction: no remote call while it is open.
    const customer = await this.customers.getCustomer(platformId, customerId);
    if (!customer || customer.deleted) throw customerNotFound();
    if (customer.customerType !== 'BUSINESS')
      throw invalidInput([
        {
          field: 'customerId',
          message: 'must be a BUSINESS customer (only businesses have beneficial owners)',
        },
      ]);
    return transactional(this.orm, async (em) => {
      const others = await this.owners.ofCustomer(em, platformId, customerId, 'update');
      const now = this.clock.now();
      const valid = validateNewBeneficialOwner(input, { today: now, others });
      const owner: BeneficialOwner = {
        id: newId('BeneficialOwner'),
        platformId,
        customerId,
        ...valid,
        ...this.kycStarted(environment, now),
        createdAt: now,
        updatedAt: now,
      };
      await this.owners.insert(em, owner);
      return owner;
    });
  }

  async get(platformId: string, id: string): Promise<BeneficialOwner> {
    validIds(['platformId', platformId, 'Platform'], ['beneficialOwnerId', id, 'BeneficialOwner']);
    const owner = await this.owners.find(this.orm.em.fork(), platformId, id);
    if (!owner) throw beneficialOwnerNotFound();
    return owner;
  }

  async list(
    platformId: string,
    customerId: string,
    limit: number | undefined,
    cursor: string | undefined,
  ): Promise<Page<BeneficialOwner>> {
    validIds(['platformId', platformId, 'Platform'], ['customerId', customerId, 'Customer']);
    return this.owners.list(
      this.orm.em.fork(),
      platformId,
      customerId,
      pageSize(limit),
      decodeCursor(cursor),
    );
  }

  /** Applies an update; a change of personal data restarts KYC (PENDING). */
  async update(
    platformId: string,
    environment: Environment,
    id: string,
    input: BeneficialOwnerUpdateInput,
  ): Promise<BeneficialOwner> {
    validIds(['platformId', platformId, 'Platform'], ['beneficialOwnerId', id, 'BeneficialOwner']);
    return transactional(this.orm, async (em) => {
      const found = await this.owners.find(em, platformId, id);
      if (!found) throw beneficialOwnerNotFound();
      const all = await this.owners.ofCustomer(em, platformId, found.customerId, 'update');
      const current = all.find((o) => o.id === id)!;
      const now = this.clock.now();
      const { next, personalDataChanged } = applyBeneficialOwnerUpdate(current, input, {
        today: now,
        others: all.filter((o) => o.id !== id),
      });
      if (!personalDataChanged && JSON.stringify(next) === JSON.stringify(current)) return current;
      const updated: BeneficialOwner = {
        ...next,
        ...(personalDataChanged ? this.kycStarted(environment, now) : {}),
        updatedAt: now,
      };
      await this.owners.update(em, updated);
      return updated;
    });
  }

  /** The KYC fields of an owner whose check starts now. */
  private kycStarted(
    environment: Environment,
    now: Date,
  ): Pick<BeneficialOwner, 'kycStatus' | 'environment' | 'kycDueAt'> {
    return {
      kycStatus: 'PENDING',
      environment,
      kycDueAt: new Date(now.getTime() + this.providers[environment].decisionDelayMs()),
    };
  }

  /**
   * Decides the due KYC check of one owner: asks the provider (outside any transaction), then
   * writes the outcome if the check is still the one that was due (a change of personal data in
   * between restarted it; another replica may have decided it already). A production PENDING
   * (review open) is asked again after the provider's delay; the sandbox's PENDING (suffix 001)
   * is final.
   */
  async decideKyc(due: { id: string; platformId: string }): Promise<void> {
    const owner = await this.owners.find(this.orm.em.fork(), due.platformId, due.id);
    if (!owner?.kycDueAt) return;
    const provider = this.providers[owner.environment];
    const p = owner.personalInfo;
    const outcome = await provider.screen(
      {
        kind: 'PERSON',
        id: owner.id,
        firstName: p.firstName,
        lastName: p.lastName,
        birthDate: p.birthDate,
        nationality: p.nationality,
      },
      `${owner.id}@${owner.updatedAt.toISOString()}`,
    );
    await transactional(this.orm, async (em) => {
      const current = await this.owners.find(em, due.platformId, due.id, 'update');
      if (!current?.kycDueAt || current.updatedAt.getTime() !== owner.updatedAt.getTime()) return;
      const now = this.clock.now();
      const recheck = outcome === 'PENDING' && current.environment === 'PRODUCTION';
      const next: BeneficialOwner = { ...current, kycStatus: outcome, updatedAt: now };
      if (recheck) next.kycDueAt = new Date(now.getTime() + provider.decisionDelayMs());
      else delete next.kycDueAt;
      await this.owners.update(em, next);
      this.logger.info({ beneficialOwnerId: current.id, kycStatus: outcome }, 'beneficial owner KYC decided');
    });
  }
}
