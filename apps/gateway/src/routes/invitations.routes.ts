import { UmaInvitation, invitationJson } from '@sluice/api';
import type { RouteModule } from '../http/types.js';
import { errorResponses } from '../schemas/common.js';
import {
  InvitationClaimRequest,
  InvitationCreateRequest,
  InvitationParams,
} from '../schemas/invitation.schemas.js';

const TAGS = ['Invitations'];
const errors = errorResponses();

/**
 * UMA invitations (identity service): `POST /invitations`, `GET /invitations/{invitationCode}`,
 * `POST /invitations/{invitationCode}/claim` (INVITATION.CLAIMED webhook) and `.../cancel`.
 * A code is its platform's only: any other platform's code answers 404, as an unknown one.
 */
const invitationsRoutes: RouteModule = (app, { clients }) => {
  app.post(
    '/invitations',
    {
      schema: {
        tags: TAGS,
        operationId: 'createInvitation',
        summary: 'Create an UMA invitation',
        description:
          'An invitation from a live customer of the platform (inviterUma, its UMA address), PENDING, with a random unguessable code and the url where it is claimed (on the platform’s umaDomain; a production platform without one: 400 INVITATIONS_NOT_CONFIGURED). amountToSend is display only (in the inviter’s first currency): your platform sends it after INVITATION.CLAIMED. expiresAt must be in the future; past it the invitation is EXPIRED.',
        body: InvitationCreateRequest,
        response: { 201: UmaInvitation, ...errors },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const { invitation } = await clients.identity.createInvitation({
        platformId: request.platform.id,
        inviterUma: b.inviterUma,
        firstName: b.firstName,
        amountToSend: b.amountToSend === undefined ? undefined : BigInt(b.amountToSend),
        expiresAt: b.expiresAt === undefined ? undefined : new Date(b.expiresAt),
      });
      return reply.code(201).send(invitationJson(invitation!));
    },
  );

  app.get(
    '/invitations/:invitationCode',
    {
      schema: {
        tags: TAGS,
        operationId: 'getInvitation',
        summary: 'Get an UMA invitation by code',
        description: 'The invitation as of now (a PENDING one past expiresAt is EXPIRED).',
        params: InvitationParams,
        response: { 200: UmaInvitation, ...errors },
      },
    },
    async (request) => {
      const { invitation } = await clients.identity.getInvitation({
        platformId: request.platform.id,
        code: request.params.invitationCode,
      });
      return invitationJson(invitation!);
    },
  );

  app.post(
    '/invitations/:invitationCode/claim',
    {
      schema: {
        tags: TAGS,
        operationId: 'claimInvitation',
        summary: 'Claim an UMA invitation',
        description:
          'PENDING -> CLAIMED with inviteeUma (not the inviter’s own address) and claimedAt, exactly once; sends the INVITATION.CLAIMED webhook. 400 INVITATION_ALREADY_CLAIMED / INVITATION_CANCELLED, or INVALID_INPUT on invitationCode when it expired.',
        params: InvitationParams,
        body: InvitationClaimRequest,
        response: { 200: UmaInvitation, ...errors },
      },
    },
    async (request) => {
      const { invitation } = await clients.identity.claimInvitation({
        platformId: request.platform.id,
        code: request.params.invitationCode,
        inviteeUma: request.body.inviteeUma,
      });
      return invitationJson(invitation!);
    },
  );

  app.post(
    '/invitations/:invitationCode/cancel',
    {
      schema: {
        tags: TAGS,
        operationId: 'cancelInvitation',
        summary: 'Cancel an UMA invitation',
        description:
          'PENDING -> CANCELLED: it can no longer be claimed. 400 INVITATION_ALREADY_CLAIMED / INVITATION_CANCELLED, or INVALID_INPUT on invitationCode when it expired.',
        params: InvitationParams,
        response: { 200: UmaInvitation, ...errors },
      },
    },
    async (request) => {
      const { invitation } = await clients.identity.cancelInvitation({
        platformId: request.platform.id,
        code: request.params.invitationCode,
      });
      return invitationJson(invitation!);
    },
  );
};

export default invitationsRoutes;
