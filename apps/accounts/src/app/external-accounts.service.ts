import { decodeCursor, newId, pageSize, toPage, type Clock, type Page } from '@sluice/core';
import { transactional, type MikroORM } from '@sluice/store';
import type { Outbox } from '@sluice/events';
import { customerNotFound, externalAccountNotFound, fail } from '../domain/errors.js';
import {
  beneficiaryName,
  type ExternalAccountRecord,
  type ValidatedAccountInfo,
} from '../domain/external-account.js';
import type { BeneficiaryVerifier } from '../domain/beneficiary-verification.js';
import type { Environment } from '../domain/internal-account.js';
import { EVENTS, type EventData } from '@sluice/api';
import {
  ExternalAccountRepository,
  type ExternalAccountFilter,
} from '../store/external-account.repository.js';
import type { HolderDirectory } from './ports.js';

export interface NewExternalAccount {
  platformId: string;
  environment: Environment;
  /** Absent: a platform-owned account. */
  customerId?: string;
  currency: string;
  validated: ValidatedAccountInfo;
  platformAccountId?: string;
  defaultUmaDepositAccount: boolean;
}

function eventData(a: ExternalAccountRecord): EventData<typeof EVENTS.EXTERNAL_ACCOUNT_CREATED> {
  return {
    externalAccountId: a.id,
    ...(a.customerId ? { customerId: a.customerId } : {}),
    currency: a.currency,
    accountType: a.accountInfo.accountType,
    beneficiaryVerificationStatus: a.beneficiaryVerificationStatus,
    ...(a.platformAccountId ? { platformAccountId: a.platformAccountId } : {}),
  };
}

/** Registering, reading and deleting external accounts. Inputs are validated by the RPC handlers. */
export class ExternalAccountsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly outbox: Outbox,
    private readonly holders: HolderDirectory,
    private readonly verifiers: Record<Environment, BeneficiaryVerifier>,
    private readonly repo = new ExternalAccountRepository(),
  ) {}

  /**
   * Registers the account: the customer must be the platform's and live; the
   * beneficiary name (request, else the customer's or platform's name) is verified by
   * the environment's verifier; an invalid account is refused with nothing stored.
   * Writes EXTERNAL_ACCOUNT.CREATED in the same transaction.
   */
  async create(req: NewExternalAccount): Promise<ExternalAccountRecord> {
    let holderName: string | undefined;
    if (req.customerId) {
      const customer = await this.holders.customer(req.platformId, req.customerId);
      if (!customer) throw customerNotFound(req.customerId);
      holderName = customer.name;
    } else {
      holderName = await this.holders.platformName(req.platformId);
    }
    const { info, primaryIdentifier, primaryField, dedupeKey } = req.validated;
    const name = beneficiaryName(info.beneficiary) ?? holderName;
    const verification = await this.verifiers[req.environment].verify({
      accountType: info.accountType,
      currency: req.currency,
      primaryIdentifier,
      beneficiaryName: name,
    });
    if (verification.outcome === 'INVALID_ACCOUNT')
      throw fail('EXTERNAL_ACCOUNT_INVALID', `The account is invalid: ${verification.reason}`, {
        errors: [{ field: primaryField, message: verification.reason }],
      });

    const now = this.clock.now();
    const account: ExternalAccountRecord = {
      id: newId('ExternalAccount'),
      platformId: req.platformId,
      owner: req.customerId ? 'CUSTOMER' : 'PLATFORM',
      ...(req.customerId ? { customerId: req.customerId } : {}),
      currency: req.currency,
      status: 'ACTIVE',
      accountInfo: info,
      primaryIdentifier,
      ...(req.platformAccountId ? { platformAccountId: req.platformAccountId } : {}),
      defaultUmaDepositAccount: req.defaultUmaDepositAccount && !!req.customerId,
      beneficiaryVerificationStatus: verification.status,
      ...(verification.verifiedFullName ? { verifiedFullName: verification.verifiedFullName } : {}),
      environment: req.environment,
      createdAt: now,
      updatedAt: now,
    };
    return transactional(this.orm, async (em) => {
      if (account.defaultUmaDepositAccount) {
        await this.repo.lockUmaDefault(em, account.platformId, account.customerId!);
        await this.repo.clearUmaDefault(em, account.platformId, account.customerId!, now);
      }
      if (!(await this.repo.insert(em, account, dedupeKey)))
        throw fail(
          'EXTERNAL_ACCOUNT_ALREADY_EXISTS',
          `This ${info.accountType} account is already registered for this ${account.customerId ? 'customer' : 'platform'} in ${account.currency}`,
          { field: primaryField },
        );
      await this.outbox.add(em, EVENTS.EXTERNAL_ACCOUNT_CREATED, {
        platformId: account.platformId,
        data: eventData(account),
        occurredAt: now,
      });
      return account;
    });
  }

  /** A live account of the platform; deleted or another platform's: EXTERNAL_ACCOUNT_NOT_FOUND. */
  async get(platformId: string, accountId: string): Promise<ExternalAccountRecord> {
    const account = await this.repo.get(this.orm.em.fork(), platformId, accountId);
    if (!account) throw externalAccountNotFound(accountId);
    return account;
  }

  /** Soft-deletes the account and writes EXTERNAL_ACCOUNT.DELETED; a second delete is EXTERNAL_ACCOUNT_NOT_FOUND. */
  delete(platformId: string, accountId: string): Promise<ExternalAccountRecord> {
    const now = this.clock.now();
    return transactional(this.orm, async (em) => {
      const account = await this.repo.softDelete(em, platformId, accountId, now);
      if (!account) throw externalAccountNotFound(accountId);
      await this.outbox.add(em, EVENTS.EXTERNAL_ACCOUNT_DELETED, {
        platformId,
        data: eventData(account),
        occurredAt: now,
      });
      return account;
    });
  }

  /** A page of live accounts, oldest first. `limit` 1..100 (default 20). */
  async list(
    filter: ExternalAccountFilter,
    limit: number | undefined,
    cursor: string | undefined,
  ): Promise<Page<ExternalAccountRecord>> {
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
