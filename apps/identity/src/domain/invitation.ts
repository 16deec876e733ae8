import { randomBytes } from 'node:crypto';
import { FieldErrors, MAX_AMOUNT } from '@sluice/core';
import { fail } from './errors.js';
import { normalizeUmaAddress } from './uma-address.js';
import { text } from './validation.js';

/** Stored: PENDING, CLAIMED, CANCELLED; EXPIRED is derived from expiresAt when read (`invitationStatus`). */
export type InvitationStatus = 'PENDING' | 'CLAIMED' | 'CANCELLED' | 'EXPIRED';

/** An UMA invitation of a platform's customer (REST UmaInvitation). */
export interface Invitation {
  code: string;
  platformId: string;
  inviterCustomerId: string;
  inviterUma: string;
  /** Where it is claimed, fixed at creation: https://<umaDomain>/invitations/<code>. */
  url: string;
  inviteeUma?: string;
  /** As stored; a view read at `now` shows EXPIRED for a PENDING one past expiresAt. */
  status: InvitationStatus;
  firstName?: string;
  /** Display only: the inviter's platform sends it after INVITATION.CLAIMED. */
  amountToSend?: { amount: bigint; currency: string };
  expiresAt?: Date;
  claimedAt?: Date;
  cancelledAt?: Date;
  createdAt: Date;
}

export interface NewInvitationInput {
  inviterUma: string;
  firstName?: string;
  amountToSend?: bigint;
  expiresAt?: Date;
}

/** A validated creation (inviterUma normalized). */
export type ValidInvitationInput = NewInvitationInput;

const CODE_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * A fresh invitation code: 26 base32 characters from 130 random bits, so a code cannot be
 * guessed (the primary key still guards the negligible collision).
 */
export function newInvitationCode(random: (n: number) => Buffer = randomBytes): string {
  const bytes = random(26);
  let code = '';
  for (const b of bytes) code += CODE_ALPHABET[b & 31];
  return code;
}

/** Whether a string can be an invitation code at all (an impossible one finds nothing, as an unknown). */
export const isInvitationCode = (code: string): boolean => /^[a-z2-7]{26}$/.test(code);

/** Validates a creation request; throws INVALID_INPUT naming every bad field. */
export function validateNewInvitation(input: NewInvitationInput, now: Date): ValidInvitationInput {
  const p = new FieldErrors();
  const inviterUma = normalizeUmaAddress(p, 'inviterUma', input.inviterUma);
  const firstName = text(p, 'firstName', input.firstName, 100);
  if (input.amountToSend !== undefined && (input.amountToSend < 1n || input.amountToSend > MAX_AMOUNT))
    p.add('amountToSend', `must be 1 to ${MAX_AMOUNT} in the smallest unit of the currency`);
  if (input.expiresAt !== undefined && input.expiresAt.getTime() <= now.getTime())
    p.add('expiresAt', 'must be in the future');
  p.throwIfAny();
  const out: ValidInvitationInput = { inviterUma: inviterUma! };
  if (firstName !== undefined) out.firstName = firstName;
  if (input.amountToSend !== undefined) out.amountToSend = input.amountToSend;
  if (input.expiresAt !== undefined) out.expiresAt = input.expiresAt;
  return out;
}

/** The URL of an invitation on the platform's UMA domain. */
export const invitationUrl = (umaDomain: string, code: string): string =>
  `https://${umaDomain}/invitations/${code}`;

/** The status the API shows: a PENDING invitation past its expiresAt is EXPIRED. */
export function invitationStatus(i: Invitation, now: Date): InvitationStatus {
  if (i.status === 'PENDING' && i.expiresAt && i.expiresAt.getTime() <= now.getTime()) return 'EXPIRED';
  return i.status;
}

/** Refuses a change of an invitation that is no longer PENDING (claimed, cancelled or expired). */
function requirePending(i: Invitation, now: Date): void {
  const status = invitationStatus(i, now);
  if (status === 'CLAIMED')
    throw fail('INVITATION_ALREADY_CLAIMED', 'Invitation has already been claimed', { code: i.code });
  if (status === 'CANCELLED')
    throw fail('INVITATION_CANCELLED', 'Invitation has been cancelled', { code: i.code });
  // The reference has no code of its own for this 400: INVALID_INPUT on the code.
  if (status === 'EXPIRED')
    new FieldErrors()
      .add('invitationCode', `the invitation expired at ${i.expiresAt!.toISOString()}`)
      .throwIfAny();
}

/** PENDING -> CLAIMED by `inviteeUma` (validated; not the inviter's own address). */
export function claimInvitation(i: Invitation, inviteeUma: string, now: Date): Invitation {
  const p = new FieldErrors();
  const invitee = normalizeUmaAddress(p, 'inviteeUma', inviteeUma);
  if (invitee && invitee === i.inviterUma) p.add('inviteeUma', 'must not be the inviter’s own UMA address');
  p.throwIfAny();
  requirePending(i, now);
  return { ...i, status: 'CLAIMED', inviteeUma: invitee!, claimedAt: now };
}

/** PENDING -> CANCELLED. */
export function cancelInvitation(i: Invitation, now: Date): Invitation {
  requirePending(i, now);
  return { ...i, status: 'CANCELLED', cancelledAt: now };
}
