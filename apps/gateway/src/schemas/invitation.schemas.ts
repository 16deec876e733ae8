import { Type, type Static } from '@sinclair/typebox';
import { PositiveAmount, UmaAddress } from '@sluice/api';
import { named } from './common.js';

/** Request schemas of `/invitations` (reference UmaInvitationCreateRequest / UmaInvitationClaimRequest). */

export const InvitationCreateRequest = named(
  'UmaInvitationCreateRequest',
  Type.Object(
    {
      inviterUma: UmaAddress('UMA address of the inviting customer (a live customer of the platform)'),
      firstName: Type.Optional(
        Type.String({ minLength: 1, maxLength: 100, description: 'First name to show with the invitation' }),
      ),
      amountToSend: Type.Optional(
        PositiveAmount(
          'Display only, in the smallest unit of the inviter’s first currency: your platform sends it after INVITATION.CLAIMED',
        ),
      ),
      expiresAt: Type.Optional(
        Type.String({
          format: 'date-time',
          maxLength: 64,
          description: 'When the invitation expires (future); none: never',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type InvitationCreateRequest = Static<typeof InvitationCreateRequest>;

export const InvitationClaimRequest = named(
  'UmaInvitationClaimRequest',
  Type.Object(
    { inviteeUma: UmaAddress('UMA address of the customer claiming the invitation') },
    { additionalProperties: false },
  ),
);

export const InvitationParams = Type.Object(
  { invitationCode: Type.String({ minLength: 1, maxLength: 64, description: 'The invitation’s code' }) },
  { additionalProperties: false },
);
