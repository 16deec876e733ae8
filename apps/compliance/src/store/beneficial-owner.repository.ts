import type { MasterKeyring } from '@sluice/crypto';
import type { EntityManager } from '@sluice/store';
import type { CursorPosition, Environment, Page } from '@sluice/core';
import type {
  BeneficialOwner,
  BeneficialOwnerRole,
  KycStatus,
  PersonalInfo,
} from '../domain/beneficial-owner.js';
import { openPersonalInfo, sealPersonalInfo } from './sealing.js';
import { announceDue, date, fromJson, keysetPage, optDate } from './sql.js';

/**
 * Beneficial owners (exact SQL). The personal info is sealed in `personal_data` (store/sealing.ts);
 * `personal_info` holds it in plain text only in rows written before sealing, until `rewrap`.
 */

const COLUMNS = `id, platform_id, customer_id, roles, ownership_percentage, personal_data, personal_info, kyc_status,
  environment, kyc_due_at, created_at, updated_at`;

interface Row {
  id: string;
  platform_id: string;
  customer_id: string;
  roles: BeneficialOwnerRole[];
  ownership_percentage: number;
  personal_data: string | null;
  personal_info: PersonalInfo | string | null;
  kyc_status: KycStatus;
  environment: Environment;
  kyc_due_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

function toOwner(r: Row, keyring: MasterKeyring): BeneficialOwner {
  const o: BeneficialOwner = {
    id: r.id,
    platformId: r.platform_id,
    customerId: r.customer_id,
    roles: [...r.roles],
    ownershipPercentage: r.ownership_percentage,
    personalInfo: r.personal_data
      ? openPersonalInfo(keyring, r.id, r.personal_data)
      : fromJson<PersonalInfo>(r.personal_info as PersonalInfo | string),
    kycStatus: r.kyc_status,
    environment: r.environment,
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
  const due = optDate(r.kyc_due_at);
  if (due) o.kycDueAt = due;
  return o;
}

export class BeneficialOwnerRepository {
  constructor(private readonly keyring: MasterKeyring) {}

  private readonly toOwner = (r: Row): BeneficialOwner => toOwner(r, this.keyring);

  async insert(em: EntityManager, o: BeneficialOwner): Promise<void> {
    await em.execute(
      `INSERT INTO beneficial_owners (${COLUMNS}) VALUES (?, ?, ?, ?::text[], ?, ?, NULL, ?, ?, ?, ?, ?)`,
      [
        o.id,
        o.platformId,
        o.customerId,
        `{${o.roles.join(',')}}`,
        o.ownershipPercentage,
        sealPersonalInfo(this.keyring, o.id, o.personalInfo),
        o.kycStatus,
        o.environment,
        o.kycDueAt ?? null,
        o.createdAt,
        o.updatedAt,
      ],
    );
    announceDue(em, o.kycDueAt);
  }

  async update(em: EntityManager, o: BeneficialOwner): Promise<void> {
    await em.execute(
      `UPDATE beneficial_owners SET roles = ?::text[], ownership_percentage = ?, personal_data = ?, personal_info = NULL,
         kyc_status = ?, environment = ?, kyc_due_at = ?, updated_at = ? WHERE id = ?`,
      [
        `{${o.roles.join(',')}}`,
        o.ownershipPercentage,
        sealPersonalInfo(this.keyring, o.id, o.personalInfo),
        o.kycStatus,
        o.environment,
        o.kycDueAt ?? null,
        o.updatedAt,
        o.id,
      ],
    );
    announceDue(em, o.kycDueAt);
  }

  async find(
    em: EntityManager,
    platformId: string,
    id: string,
    lock?: 'update',
  ): Promise<BeneficialOwner | undefined> {
    const rows = await em.execute<Row[]>(
      `SELECT ${COLUMNS} FROM beneficial_owners WHERE platform_id = ? AND id = ?${lock ? ' FOR UPDATE' : ''}`,
      [platformId, id],
    );
    return rows[0] ? this.toOwner(rows[0]) : undefined;
  }

  /**
   * Every owner of a business, locked when `lock` (taken by whoever changes the owners of the
   * business, so two concurrent changes cannot both pass the UBO total).
   */
  async ofCustomer(
    em: EntityManager,
    platformId: string,
    customerId: string,
    lock?: 'update',
  ): Promise<BeneficialOwner[]> {
    if (lock)
      await em.execute(`SELECT pg_advisory_xact_lock(hashtext(?))`, [`bo:${platformId}:${customerId}`]);
    const rows = await em.execute<Row[]>(
      `SELECT ${COLUMNS} FROM beneficial_owners WHERE platform_id = ? AND customer_id = ? ORDER BY created_at, id`,
      [platformId, customerId],
    );
    return rows.map(this.toOwner);
  }

  list(
    em: EntityManager,
    platformId: string,
    customerId: string,
    size: number,
    after: CursorPosition | undefined,
  ): Promise<Page<BeneficialOwner>> {
    return keysetPage<Row, BeneficialOwner>(em, {
      table: 'beneficial_owners',
      columns: COLUMNS,
      where: ['platform_id = ?', 'customer_id = ?'],
      params: [platformId, customerId],
      order: 'ASC',
      size,
      after,
      map: this.toOwner,
    });
  }

  /** Ids (with platform) of owners whose KYC check is due at `now`, oldest first. */
  async due(em: EntityManager, now: Date, limit: number): Promise<{ id: string; platformId: string }[]> {
    const rows = await em.execute<{ id: string; platform_id: string }[]>(
      `SELECT id, platform_id FROM beneficial_owners WHERE kyc_due_at <= ? ORDER BY kyc_due_at LIMIT ?`,
      [now, limit],
    );
    return rows.map((r) => ({ id: r.id, platformId: r.platform_id }));
  }

  /** When the next screening of this table falls due (undefined: none is). */
  async nextDueAt(em: EntityManager): Promise<Date | undefined> {
    const rows = await em.execute<{ at: Date | string | null }[]>(`SELECT min(kyc_due_at) AS at FROM beneficial_owners`);
    return optDate(rows[0]?.at ?? null);
  }
}
