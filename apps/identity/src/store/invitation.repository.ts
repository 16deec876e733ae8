import type { MasterKeyring } from '@sluice/crypto';
import { optDate, type EntityManager } from '@sluice/store';
import type { Invitation } from '../domain/invitation.js';
import { openInvitationUma, sealInvitationUma } from './sealing.js';

/**
 * A row of `invitations` as Postgres returns it (bigint as string). The UMA addresses are in the
 * sealed columns; their plain columns hold them only on rows written before sealing (until rewrap).
 */
interface Row {
  code: string;
  platform_id: string;
  inviter_customer_id: string;
  inviter_uma: string | null;
  sealed_inviter_uma: string | null;
  url: string;
  invitee_uma: string | null;
  sealed_invitee_uma: string | null;
  status: Invitation['status'];
  first_name: string | null;
  amount_to_send: string | number | null;
  amount_currency: string | null;
  expires_at: Date | string | null;
  claimed_at: Date | string | null;
  cancelled_at: Date | string | null;
  created_at: Date | string;
}

function invitationFromRow(r: Row, keyring: MasterKeyring): Invitation {
  const i: Invitation = {
    code: r.code,
    platformId: r.platform_id,
    inviterCustomerId: r.inviter_customer_id,
    inviterUma: r.sealed_inviter_uma
      ? openInvitationUma(keyring, 'inviter', r.code, r.sealed_inviter_uma)
      : r.inviter_uma!,
    url: r.url,
    status: r.status,
    createdAt: new Date(r.created_at),
  };
  if (r.sealed_invitee_uma !== null) i.inviteeUma = openInvitationUma(keyring, 'invitee', r.code, r.sealed_invitee_uma);
  else if (r.invitee_uma !== null) i.inviteeUma = r.invitee_uma;
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

/**
 * The `invitations` table (exact SQL), the UMA addresses sealed under `keyring` and bound to the
 * code (their plain columns stay null). A code belongs to one platform: others never find it.
 * Nothing looks an invitation up by a UMA address (only by its code), so they have no blind index.
 */
export class InvitationRepository {
  constructor(private readonly keyring: MasterKeyring) {}

  /** The sealed invitee address to write (null while unclaimed). */
  private sealedInvitee(i: Invitation): string | null {
    return i.inviteeUma === undefined ? null : sealInvitationUma(this.keyring, 'invitee', i.code, i.inviteeUma);
  }

  async insert(em: EntityManager, i: Invitation): Promise<void> {
    await em.execute(
      `INSERT INTO invitations (code, platform_id, inviter_customer_id, sealed_inviter_uma, url, sealed_invitee_uma,
         status, first_name, amount_to_send, amount_currency, expires_at, claimed_at, cancelled_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        i.code,
        i.platformId,
        i.inviterCustomerId,
        sealInvitationUma(this.keyring, 'inviter', i.code, i.inviterUma),
        i.url,
        this.sealedInvitee(i),
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
    return rows[0] ? invitationFromRow(rows[0], this.keyring) : undefined;
  }

  /**
   * Writes the invitation's status and what its claim or cancellation set (the invitee sealed).
   * The inviter's address is not rewritten: a row written before sealing keeps it plain until rewrap.
   */
  async update(em: EntityManager, i: Invitation): Promise<void> {
    await em.execute(
      `UPDATE invitations SET status = ?, invitee_uma = NULL, sealed_invitee_uma = ?, claimed_at = ?, cancelled_at = ?
       WHERE code = ? AND platform_id = ?`,
      [i.status, this.sealedInvitee(i), i.claimedAt ?? null, i.cancelledAt ?? null, i.code, i.platformId],
    );
  }
}
