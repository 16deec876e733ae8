import { decodeCursor, newId, pageSize, type Clock, type Page, type Environment } from '@sluice/core';
import { transactional, type MikroORM } from '@sluice/store';
import { customerNotFound, externalAccountNotFound, fail } from '../domain/errors.js';
import {
  beneficiaryName,
  validateNewExternalAccount,
  type ExternalAccountRecord,
  type NewExternalAccountRequest,
} from '../domain/external-account.js';
import type { BeneficiaryVerifier } from '../domain/beneficiary-verification.js';
import { validateAccountIds, validateAccountList, type AccountListRequest } from '../domain/validation.js';
import type { ExternalAccountRepository } from '../store/external-account.repository.js';
import { keysetPage } from './page.js';
import type { AccountEvents, HolderDirectory } from './ports.js';

/** Registering, reading and deleting external accounts. */
export class ExternalAccountsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly events: AccountEvents,
    private readonly holders: HolderDirectory,
    private readonly verifiers: Record<Environment, BeneficiaryVerifier>,
    private readonly repo: ExternalAccountRepository,
  ) {}

  /**
   * Registers the account: the request is validated, the customer must be the
   * platform's and live (asked of identity before the transaction); the beneficiary's
   * name (bank variants; wallets: the customer's or platform's name) is verified by the
   * environment's verifier; an invalid account is refused with nothing stored.
   * Writes EXTERNAL_ACCOUNT.CREATED in the same transaction as the account.
   */
  async create(request: NewExternalAccountRequest): Promise<ExternalAccountRecord> {
    const req = validateNewExternalAccount(request, this.clock.now());
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
      await this.events.externalAccountCreated(em, account);
      return account;
    });
  }

  /** A live account of the platform; deleted or another platform's: EXTERNAL_ACCOUNT_NOT_FOUND. */
  async get(platformId: string, accountId: string): Promise<ExternalAccountRecord> {
    validateAccountIds(platformId, accountId, 'ExternalAccount');
    const account = await this.repo.get(this.orm.em.fork(), platformId, accountId);
    if (!account) throw externalAccountNotFound(accountId);
    return account;
  }

  /** Soft-deletes the account and writes EXTERNAL_ACCOUNT.DELETED; a second delete is EXTERNAL_ACCOUNT_NOT_FOUND. */
  async delete(platformId: string, accountId: string): Promise<ExternalAccountRecord> {
    validateAccountIds(platformId, accountId, 'ExternalAccount');
    const now = this.clock.now();
    return transactional(this.orm, async (em) => {
      const account = await this.repo.softDelete(em, platformId, accountId, now);
      if (!account) throw externalAccountNotFound(accountId);
      await this.events.externalAccountDeleted(em, account, now);
      return account;
    });
  }

  /** A page of live accounts, oldest first. `limit` 1..100 (default 20). */
  async list(
    request: AccountListRequest,
    limit: number | undefined,
    cursor: string | undefined,
  ): Promise<Page<ExternalAccountRecord>> {
    const filter = validateAccountList(request, { withType: false });
    const size = pageSize(limit);
    const after = decodeCursor(cursor);
    const { rows, total } = await this.repo.list(this.orm.em.fork(), filter, size, after);
    return keysetPage(rows, size, total);
  }
}
