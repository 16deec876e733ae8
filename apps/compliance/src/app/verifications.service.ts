import {
  decodeCursor,
  newId,
  pageSize,
  validIds,
  type Clock,
  type Environment,
  type Page,
} from '@sluice/core';
import type { Logger } from '@sluice/logging';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { customerNotFound, verificationNotFound } from '../domain/errors.js';
import {
  customerStatusOf,
  isResubmittable,
  isUnderWay,
  screeningSubject,
  statusOfOutcome,
  verificationRequirements,
  type CustomerFacts,
  type Verification,
  type VerificationStatus,
} from '../domain/verification.js';
import type { BeneficialOwnerRepository } from '../store/beneficial-owner.repository.js';
import type { DocumentRepository } from '../store/document.repository.js';
import type { VerificationRepository } from '../store/verification.repository.js';
import type { ComplianceEvents, CustomerDirectory, KycProvider, ScreeningSubject } from './ports.js';

/**
 * KYC/KYB verifications of customers. A submission lists what is missing (RESOLVE_ERRORS); a
 * later submission of the same customer re-evaluates that verification; once nothing is missing
 * it is IN_PROGRESS and its screening falls due after the provider's delay, when the screening
 * worker asks the provider (`decide`): APPROVED, REJECTED or PENDING_MANUAL_REVIEW. Every status
 * change writes a VERIFICATION.<status> webhook, and each change of what the customer's
 * kycStatus/kybStatus should be an event identity applies.
 */
export class VerificationsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly store: {
      verifications: VerificationRepository;
      owners: BeneficialOwnerRepository;
      documents: DocumentRepository;
    },
    private readonly customers: CustomerDirectory,
    private readonly providers: Record<Environment, KycProvider>,
    private readonly events: ComplianceEvents,
    private readonly logger: Logger,
  ) {}

  /** Submits a customer: a new verification, or the re-evaluation of its open RESOLVE_ERRORS one. */
  async create(platformId: string, environment: Environment, customerId: string): Promise<Verification> {
    validIds(['platformId', platformId, 'Platform'], ['customerId', customerId, 'Customer']);
    const customer = await this.customers.getCustomer(platformId, customerId);
    if (!customer || customer.deleted) throw customerNotFound();
    return transactional(this.orm, async (em) => {
      const latest = await this.store.verifications.latestOfCustomer(em, platformId, customerId);
      if (latest && isUnderWay(latest)) return latest;
      const now = this.clock.now();
      const errors = await this.requirements(em, customer);
      const status: VerificationStatus = errors.length ? 'RESOLVE_ERRORS' : 'IN_PROGRESS';
      const base = latest && isResubmittable(latest) ? latest : undefined;
      const v: Verification = {
        id: base?.id ?? newId('Verification'),
        platformId,
        customerId,
        customerType: customer.customerType,
        environment,
        status,
        errors,
        createdAt: base?.createdAt ?? now,
        updatedAt: now,
      };
      if (status === 'IN_PROGRESS') {
        v.subject = screeningSubject(customer);
        v.decisionDueAt = new Date(now.getTime() + this.providers[environment].decisionDelayMs());
      }
      if (base) await this.store.verifications.update(em, v);
      else await this.store.verifications.insert(em, v);
      if (!base || base.status !== v.status || JSON.stringify(base.errors) !== JSON.stringify(v.errors))
        await this.events.verificationChanged(em, v);
      const customerStatus = customerStatusOf(v.status);
      if (customerStatus) await this.events.customerStatusChanged(em, v, customerStatus);
      return v;
    });
  }

  async get(platformId: string, id: string): Promise<Verification> {
    validIds(['platformId', platformId, 'Platform'], ['verificationId', id, 'Verification']);
    const v = await this.store.verifications.find(this.orm.em.fork(), platformId, id);
    if (!v) throw verificationNotFound();
    return v;
  }

  async list(
    platformId: string,
    filter: { customerId?: string; status?: VerificationStatus },
    limit: number | undefined,
    cursor: string | undefined,
  ): Promise<Page<Verification>> {
    validIds(['platformId', platformId, 'Platform']);
    if (filter.customerId !== undefined) validIds(['customerId', filter.customerId, 'Customer']);
    return this.store.verifications.list(
      this.orm.em.fork(),
      platformId,
      filter,
      pageSize(limit),
      decodeCursor(cursor),
    );
  }

  /**
   * Decides the due screening of one verification: asks the provider (outside any
   * transaction), then writes the outcome if the verification is still waiting for it.
   */
  async decide(due: { id: string; platformId: string }): Promise<void> {
    const v = await this.store.verifications.find(this.orm.em.fork(), due.platformId, due.id);
    if (!v?.decisionDueAt) return;
    const provider = this.providers[v.environment];
    const subject: ScreeningSubject =
      v.customerType === 'BUSINESS'
        ? { kind: 'BUSINESS', id: v.customerId, registrationNumber: v.subject ?? '' }
        : { kind: 'PERSON', id: v.customerId, firstName: '', lastName: lastWord(v.subject ?? '') };
    const outcome = await provider.screen(subject, v.id);
    await transactional(this.orm, async (em) => {
      const current = await this.store.verifications.find(em, due.platformId, due.id, 'update');
      if (!current?.decisionDueAt || current.updatedAt.getTime() !== v.updatedAt.getTime()) return;
      const decided = statusOfOutcome(outcome);
      const next: Verification = { ...current, decidedStatus: decided };
      if (outcome === 'PENDING' && current.environment === 'PRODUCTION')
        next.decisionDueAt = new Date(this.clock.now().getTime() + provider.decisionDelayMs());
      else delete next.decisionDueAt;
      await this.store.verifications.update(em, next);
      // Shown once identity confirms it set the customer's status (confirm).
      await this.events.customerStatusChanged(em, next, customerStatusOf(decided)!);
      this.logger.info({ verificationId: next.id, decided }, 'verification decided; waiting for identity');
    });
  }

  /**
   * Identity applied the customer's status of a decision (CUSTOMER_VERIFICATION.STATUS_APPLIED):
   * the verification now shows its decided status and writes its VERIFICATION.<status> webhook.
   * Idempotent (nothing waiting, or the acknowledgement of another status: nothing to do).
   */
  async confirm(
    em: EntityManager,
    platformId: string,
    applied: { verificationId: string; status: string },
  ): Promise<void> {
    const v = await this.store.verifications.find(em, platformId, applied.verificationId, 'update');
    // Only the acknowledgement of the decision's own status confirms it (the one of the submission's
    // PENDING may arrive after the decision was made).
    if (!v?.decidedStatus || customerStatusOf(v.decidedStatus) !== applied.status) return;
    const next: Verification = { ...v, status: v.decidedStatus, updatedAt: this.clock.now() };
    delete next.decidedStatus;
    await this.store.verifications.update(em, next);
    if (next.status !== v.status) await this.events.verificationChanged(em, next);
  }

  private async requirements(em: EntityManager, customer: CustomerFacts) {
    const owners =
      customer.customerType === 'BUSINESS'
        ? await this.store.owners.ofCustomer(em, customer.platformId, customer.id)
        : [];
    const documents = await this.store.documents.kindsOfCustomer(em, customer.platformId, customer.id);
    return verificationRequirements({ customer, owners, documents });
  }
}

/** The last word of a full name (the sandbox reads its last 3 characters, the full name's too). */
function lastWord(fullName: string): string {
  const words = fullName.trim().split(/\s+/);
  return words[words.length - 1] ?? '';
}
