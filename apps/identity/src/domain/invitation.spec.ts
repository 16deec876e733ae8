import { describe, expect, it } from 'vitest';
import {
  cancelInvitation,
  claimInvitation,
  invitationStatus,
  isInvitationCode,
  newInvitationCode,
  type Invitation,
} from './invitation.js';
import { errorOf, fieldNames } from '../../test/support/errors.js';

const now = new Date('2026-01-10T12:00:00Z');
const pending: Invitation = {
  code: 'a'.repeat(26),
  platformId: 'Platform:019542f5-b3e7-1d02-0000-000000000001',
  inviterCustomerId: 'Customer:019542f5-b3e7-1d02-0000-000000000001',
  inviterUma: '$ada@pay.example.com',
  url: 'https://pay.example.com/invitations/aaaaaaaaaaaaaaaaaaaaaaaaaa',
  status: 'PENDING',
  expiresAt: new Date(now.getTime() + 1000),
  createdAt: now,
};

describe('invitations', () => {
  it('codes are 26 base32 characters of fresh randomness', () => {
    const codes = new Set(Array.from({ length: 200 }, () => newInvitationCode()));
    expect(codes.size).toBe(200);
    for (const c of codes) expect(isInvitationCode(c)).toBe(true);
    expect(isInvitationCode('Invitation:1')).toBe(false);
  });

  it('a PENDING invitation reads EXPIRED from its expiresAt on, and then neither claims nor cancels', () => {
    expect(invitationStatus(pending, now)).toBe('PENDING');
    const later = new Date(now.getTime() + 1000);
    expect(invitationStatus(pending, later)).toBe('EXPIRED');
    expect(fieldNames(errorOf(() => claimInvitation(pending, '$bob@x.example', later)))).toEqual([
      'invitationCode',
    ]);
    expect(fieldNames(errorOf(() => cancelInvitation(pending, later)))).toEqual(['invitationCode']);
    expect(invitationStatus({ ...pending, expiresAt: undefined }, later)).toBe('PENDING');
  });

  it('claims once with a valid invitee that is not the inviter', () => {
    const claimed = claimInvitation(pending, '$Bob@X.example', now);
    expect(claimed).toMatchObject({ status: 'CLAIMED', inviteeUma: '$bob@x.example', claimedAt: now });
    expect(errorOf(() => claimInvitation(claimed, '$eve@x.example', now)).code).toBe(
      'INVITATION_ALREADY_CLAIMED',
    );
    expect(fieldNames(errorOf(() => claimInvitation(pending, '$ADA@pay.example.com', now)))).toEqual([
      'inviteeUma',
    ]);
    const cancelled = cancelInvitation(pending, now);
    expect(errorOf(() => claimInvitation(cancelled, '$bob@x.example', now)).code).toBe(
      'INVITATION_CANCELLED',
    );
  });
});
