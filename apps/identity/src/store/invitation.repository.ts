import { optDate, type EntityManager } from '@sluice/store';
import type { Invitation } from '../domain/invitation.js';

/** A row of `invitations` as Postgres returns it (bigint as string). */
interface Row {
  code: string;
  platform_id: string;
  inviter_customer_id: string;
  inviter_uma: string;
  url: string;
  invitee_uma: string | null;
  status: Invitation['status'];
  first_name: string | null;
  amount_to_send: string | number | null;
  amount_currency: string | null;
  expires_at: Date | string | null;
  claimed_at: Date | string | null;
  cancelled_at: Date | string | null;
  created_at: Date | string;
}

function invitationFromRow(r: Row): Invitation {
  const i: Invitation = {
    code: r.code,
    platformId: r.platform_id,
    inviterCustomerId: r.inviter_customer_id,
    inviterUma: r.inviter_uma,
    url: r.url,
    status: r.status,
    createdAt: new Date(r.created_at),
  };
  if (r.invitee_uma !== null) i.inviteeUma = r.invitee_uma;
  if (r.first_name !== null) i.firstName = r.first_name;
  if (r.amount_to_send !== null && r.amount_currency !== null)
    i.amountToSend = { amount: BigInt(r.amount_to_send), currency: r.amount_currency };
  const expiresAt = optDate(r.expires_at);
  if (expiresAt) i.expiresAt = expiresAt;
  const claimedAt = optDate(r.claimed_at);
  if (claimedAt) i.claimedAt = claimedAt;
  const cancelledAt = optDate(r.cancelled_at);
  if (cancelledAt) i.cancelledAt = cancelledAt;
  return i;
}

/** The `invitations` table (exact SQL). A code belongs to one platform: others never find it. */
export class InvitationRepository {
  async insert(em: EntityManager, i: Invitation): Promise<void> {
    await em.execute(
      `INSERT INTO invitations (code, platform_id, inviter_customer_id, inviter_uma, url, invitee_uma, status,
         first_name, amount_to_send, amount_currency, expires_at, claimed_at, cancelled_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        i.code,
        i.platformId,
        i.inviterCustomerId,
        i.inviterUma,
        i.url,
        i.inviteeUma ?? null,
        i.status,
        i.firstName ?? null,
        i.amountToSend ? i.amountToSend.amount.toString() : null,
        i.amountToSend?.currency ?? null,
        i.expiresAt ?? null,
        i.claimedAt ?? null,
        i.cancelledAt ?? null,
        i.createdAt,
      ],
    );
  }

  /** The platform's invitation with this code; `forUpdate` locks it (one claim or cancel at a time). */
  async find(
    em: EntityManager,
    platformId: string,
    code: string,
    o: { forUpdate?: boolean } = {},
  ): Promise<Invitation | undefined> {
    const rows = await em.execute<Row[]>(
      `SELECT * FROM invitations WHERE code = ? AND platform_id = ?${o.forUpdate ? ' FOR UPDATE' : ''}`,
      [code, platformId],
    );
    return rows[0] ? invitationFromRow(rows[0]) : undefined;
  }

  /** Writes the invitation's status and what its claim or cancellation set. */
  async update(em: EntityManager, i: Invitation): Promise<void> {
    await em.execute(
      `UPDATE invitations SET status = ?, invitee_uma = ?, claimed_at = ?, cancelled_at = ?
       WHERE code = ? AND platform_id = ?`,
      [i.status, i.inviteeUma ?? null, i.claimedAt ?? null, i.cancelledAt ?? null, i.code, i.platformId],
    );
  }
}
