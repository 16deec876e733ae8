import { isId } from '@sluice/core';
import { EVENTS, type EventData } from '@sluice/api';
import {
  EventConsumer,
  on,
  streamName,
  type Bus,
  type EventEnvelope,
  type EventHandler,
} from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { EntityManager, MikroORM } from '@sluice/store';
import type { InternalAccountsService } from '../app/internal-accounts.service.js';
import { knownCurrencies } from '../domain/internal-account.js';

/** Durable consumer name, shared by every replica of the accounts service. */
export const IDENTITY_CONSUMER = 'accounts-identity';

/**
 * The provisioning backstop: accounts appear from identity's events even when
 * the synchronous Ensure* call from the customer/config flow failed.
 * CUSTOMER.CREATED / CUSTOMER.UPDATED provision the customer's accounts in its
 * currencies and its platform's embedded-wallet currencies (new ones only;
 * accounts are never removed), PLATFORM_CONFIG.UPDATED the platform's accounts in
 * its supported currencies and every existing customer's embedded wallets. The
 * events carry the platform's environment, so handling one calls no other service
 * inside the inbox transaction; an event without it (written before identity
 * added it) is skipped. Unknown currencies are skipped with a warning.
 */
export class IdentityEventsHandler {
  constructor(
    private readonly accounts: InternalAccountsService,
    private readonly logger: Logger,
  ) {}

  /** The identity events accounts handles, each typed by its contract. */
  handlers(): EventHandler[] {
    const customerChanged = async (
      em: EntityManager,
      data: EventData<typeof EVENTS.CUSTOMER_CREATED>,
      event: EventEnvelope,
    ) => {
      if (!isId(data.customerId, 'Customer')) {
        this.logger.warn(
          { type: event.type, eventId: event.id },
          'customer event without a customer id; skipped',
        );
        return;
      }
      if (!data.environment) return this.skipWithoutEnvironment(event);
      const currencies = this.known(event, data.currencies);
      const embedded = this.known(event, data.embeddedWalletCurrencies ?? []);
      if (currencies.length === 0 && embedded.length === 0) return;
      const accounts = await this.accounts.ensureIn(
        em,
        { platformId: event.platformId, owner: 'CUSTOMER', customerId: data.customerId },
        currencies,
        data.environment,
        embedded,
      );
      this.logger.debug(
        { type: event.type, accounts: accounts.map((a) => a.id) },
        'accounts provisioned from event',
      );
    };
    return [
      on(EVENTS.CUSTOMER_CREATED, customerChanged),
      on(EVENTS.CUSTOMER_UPDATED, customerChanged),
      on(EVENTS.PLATFORM_CONFIG_UPDATED, async (em, data, event) => {
        if (!data.environment) return this.skipWithoutEnvironment(event);
        const currencies = this.known(event, data.supportedCurrencies);
        if (currencies.length) {
          const accounts = await this.accounts.ensureIn(
            em,
            { platformId: event.platformId, owner: 'PLATFORM' },
            currencies,
            data.environment,
          );
          this.logger.debug(
            { type: event.type, accounts: accounts.map((a) => a.id) },
            'accounts provisioned from event',
          );
        }
        const wallets = knownCurrencies(data.embeddedWalletCurrencies).known;
        const customers = await this.accounts.ensureEmbeddedWalletsIn(
          em,
          event.platformId,
          wallets,
          data.environment,
        );
        if (wallets.length)
          this.logger.debug(
            { type: event.type, customers, currencies: wallets },
            'embedded wallets provisioned from event',
          );
      }),
    ];
  }

  /** The known currency codes of an event's list; unknown ones are logged. */
  private known(event: EventEnvelope, codes: readonly string[]): string[] {
    const { known, unknown } = knownCurrencies(codes);
    if (unknown.length)
      this.logger.warn({ type: event.type, eventId: event.id, unknown }, 'unknown currencies skipped');
    return known;
  }

  private skipWithoutEnvironment(event: EventEnvelope): void {
    this.logger.warn(
      { type: event.type, eventId: event.id },
      'identity event without the platform environment (written before identity carried it); skipped',
    );
  }
}

/**
 * The durable JetStream consumer of identity events (`<prefix>.identity.>`,
 * durable `accounts-identity`).
 */
export class IdentityConsumer extends EventConsumer {
  constructor(o: {
    bus: Bus;
    orm: MikroORM;
    logger: Logger;
    prefix: string;
    handler: IdentityEventsHandler;
  }) {
    super({
      bus: o.bus,
      orm: o.orm,
      logger: o.logger,
      stream: streamName(o.prefix, 'identity'),
      durable: IDENTITY_CONSUMER,
      filterSubjects: [`${o.prefix}.identity.>`],
      handlers: o.handler.handlers(),
    });
  }
}
