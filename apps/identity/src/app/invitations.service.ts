import { FieldErrors, isDomainError, type Clock } from '@sluice/core';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { fail, invitationNotFound } from '../domain/errors.js';
import { umaDomainFor } from '../domain/customer.js';
import {
  cancelInvitation,
  claimInvitation,
  invitationStatus,
  invitationUrl,
  isInvitationCode,
  newInvitationCode,
  validateNewInvitation,
  type Invitation,
  type NewInvitationInput,
} from '../domain/invitation.js';
import { validIds } from '../domain/validation.js';
import type { CustomerRepository } from '../store/customer.repository.js';
import type { InvitationRepository } from '../store/invitation.repository.js';
import type { PlatformConfigRepository } from '../store/platform-config.repository.js';
import type { PlatformRepository } from '../store/platform.repository.js';
import { requirePlatform } from './platforms.service.js';
import type { IdentityEvents } from './ports.js';

/**
 * UMA invitations of a platform's customers: made from a live customer's UMA address, claimed
 * once by an invitee UMA address (INVITATION.CLAIMED), or cancelled. Codes are random and
 * unguessable; a code is the creating platform's only (any other platform: INVITATION_NOT_FOUND).
 */
export class InvitationsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly store: {
      platforms: PlatformRepository;
      configs: PlatformConfigRepository;
      customers: CustomerRepository;
      invitations: InvitationRepository;
    },
    private readonly events: IdentityEvents,
    /** Domain of sandbox platforms without an umaDomain (as generated UMA addresses). */
    private readonly sandboxUmaDomain: string,
  ) {}

  async create(platformId: string, input: NewInvitationInput): Promise<Invitation> {
    validIds(['platformId', platformId, 'Platform']);
    return transactional(this.orm, async (em) => {
      const platform = await requirePlatform(this.store.platforms, em, platformId);
      const now = this.clock.now();
      const valid = validateNewInvitation(input, now);
      const inviter = await this.store.customers.findLiveByUmaAddress(em, platformId, valid.inviterUma);
      if (!inviter)
        new FieldErrors()
          .add('inviterUma', 'is not the UMA address of a customer of the platform')
          .throwIfAny();
      const { settings } = await this.store.configs.get(em, platformId);
      let domain: string;
      try {
        domain = umaDomainFor(platform.environment, settings.umaDomain, this.sandboxUmaDomain);
      } catch (err) {
        if (isDomainError(err) && err.code === 'UMA_DOMAIN_NOT_CONFIGURED')
          throw fail(
            'INVITATIONS_NOT_CONFIGURED',
            'Set umaDomain with PATCH /config before creating invitations',
          );
        throw err;
      }
      const code = newInvitationCode();
      const invitation: Invitation = {
        code,
        platformId,
        inviterCustomerId: inviter!.id,
        inviterUma: inviter!.umaAddress,
        url: invitationUrl(domain, code),
        status: 'PENDING',
        createdAt: now,
      };
      if (valid.firstName !== undefined) invitation.firstName = valid.firstName;
      if (valid.amountToSend !== undefined)
        invitation.amountToSend = { amount: valid.amountToSend, currency: inviter!.currencies[0]! };
      if (valid.expiresAt !== undefined) invitation.expiresAt = valid.expiresAt;
      await this.store.invitations.insert(em, invitation);
      return invitation;
    });
  }

  /** The platform's invitation as of now (EXPIRED once a PENDING one is past expiresAt). */
  async get(platformId: string, code: string): Promise<Invitation> {
    validIds(['platformId', platformId, 'Platform']);
    const found = isInvitationCode(code)
      ? await this.store.invitations.find(this.orm.em.fork(), platformId, code)
      : undefined;
    if (!found) throw invitationNotFound();
    return this.view(found);
  }

  /** PENDING -> CLAIMED once (the row is locked: of concurrent claims one wins); writes INVITATION.CLAIMED. */
  async claim(platformId: string, code: string, inviteeUma: string): Promise<Invitation> {
    return this.change(platformId, code, async (em, current, now) => {
      const claimed = claimInvitation(current, inviteeUma, now);
      await this.store.invitations.update(em, claimed);
      await this.events.invitationClaimed(em, claimed);
      return claimed;
    });
  }

  /** PENDING -> CANCELLED: it can no longer be claimed. */
  async cancel(platformId: string, code: string): Promise<Invitation> {
    return this.change(platformId, code, async (em, current, now) => {
      const cancelled = cancelInvitation(current, now);
      await this.store.invitations.update(em, cancelled);
      return cancelled;
    });
  }

  private async change(
    platformId: string,
    code: string,
    apply: (em: EntityManager, current: Invitation, now: Date) => Promise<Invitation>,
  ): Promise<Invitation> {
    validIds(['platformId', platformId, 'Platform']);
    if (!isInvitationCode(code)) throw invitationNotFound();
    return transactional(this.orm, async (em) => {
      const current = await this.store.invitations.find(em, platformId, code, { forUpdate: true });
      if (!current) throw invitationNotFound();
      return this.view(await apply(em, current, this.clock.now()));
    });
  }

  private view(i: Invitation): Invitation {
    return { ...i, status: invitationStatus(i, this.clock.now()) };
  }
}
