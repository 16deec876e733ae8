import { Type, type Static } from '@sinclair/typebox';
import type { identity } from '@sluice/contracts';
import { currencyView } from '@sluice/core';
import { Amount, Currency, Timestamp, bare, iso, stringEnum } from '../schema.js';

/** The public UmaInvitation (reference `UmaInvitation`): REST answers and the INVITATION.CLAIMED webhook. */

export const INVITATION_STATUSES = ['PENDING', 'CLAIMED', 'EXPIRED', 'CANCELLED'] as const;

export const UmaInvitation = Type.Object(
  {
    code: Type.String({ description: 'The unique, unguessable code of the invitation' }),
    createdAt: Timestamp,
    claimedAt: Type.Optional(Timestamp),
    url: Type.String({ description: 'Where the invitation is claimed' }),
    expiresAt: Type.Optional(Timestamp),
    inviterUma: Type.String({ description: 'UMA address of the inviting customer' }),
    inviteeUma: Type.Optional(Type.String({ description: 'UMA address that claimed the invitation' })),
    status: stringEnum(INVITATION_STATUSES, { description: 'EXPIRED: PENDING past expiresAt' }),
    firstName: Type.Optional(Type.String()),
    amountToSend: Type.Optional(
      Type.Object(
        { amount: Amount, currency: Currency },
        {
          description:
            'Display only: the inviter’s platform sends it after INVITATION.CLAIMED (in the inviter’s first currency)',
        },
      ),
    ),
  },
  { $id: 'UmaInvitation' },
);
export type UmaInvitation = Static<typeof UmaInvitation>;

/** The public UmaInvitation of an identity.v1 Invitation. */
export function invitationJson(i: identity.Invitation): UmaInvitation {
  const out: UmaInvitation = {
    code: i.code,
    createdAt: iso(i.createdAt)!,
    url: i.url,
    inviterUma: i.inviterUma,
    status: bare(i.status, 'INVITATION_STATUS_') as UmaInvitation['status'],
  };
  if (i.claimedAt) out.claimedAt = iso(i.claimedAt);
  if (i.expiresAt) out.expiresAt = iso(i.expiresAt);
  if (i.inviteeUma !== undefined) out.inviteeUma = i.inviteeUma;
  if (i.firstName !== undefined) out.firstName = i.firstName;
  if (i.amountToSend !== undefined && i.amountCurrency !== undefined)
    out.amountToSend = { amount: Number(i.amountToSend), currency: currencyView(i.amountCurrency) };
  return out;
}
