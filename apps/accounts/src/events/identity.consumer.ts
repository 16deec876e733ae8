import { isCurrencyCode, isId } from '@sluice/core';
import { EVENTS, type EventData } from '@sluice/api';
import { EventConsumer, on, streamName, type Bus, type EventEnvelope, type EventHandler } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { EntityManager, MikroORM } from '@sluice/store';
import type { InternalAccountsService } from '../app/internal-accounts.service.js';
import type { PlatformDirectory } from '../app/platform-directory.js';

/** Durable consumer name, shared by every replica of the accounts service. */
export const IDENTITY_CONSUMER = 'accounts-identity';

/**
 * The provisioning backstop: accounts appear from identity's events even when
 * the synchronous Ensure* call from the customer/config flow failed.
 * CUSTOMER.CREATED / CUSTOMER.UPDATED provision the customer's accounts in its
 * currencies (new ones only; accounts are never removed), PLATFORM_CONFIG.UPDATED
 * the platform's accounts in its supported currencies. The platform's environment
 * comes from identity (cached). Unknown currencies are skipped with a warning.
 */
export class IdentityEventsHandler {
  constructor(
    private readonly accounts: InternalAccountsService,
    private readonly platforms: PlatformDirectory,
    private readonly logger: Logger,
  ) {}

  /** The identity events accounts handles, each typed by its contract. */
  handlers(): EventHandler[] {
    const customerChanged = async (em: EntityManager, data: EventData<typeof EVENTS.CUSTOMER_CREATED>, event: EventEnvelope) => {
      if (!isId(data.customerId, 'Customer')) {
        this.logger.warn({ type: event.type, eventId: event.id }, 'customer event without a customer id; skipped');
        return;
      }
      await this.provision(
        em,
        event,
        { platformId: event.platformId, owner: 'CUSTOMER', customerId: data.customerId },
        data.currencies,
        (await this.platforms.embeddedWalletCurrencies?.(event.platformId)) ?? [],
      );
    };
    return [
      on(EVENTS.CUSTOMER_CREATED, customerChanged),
      on(EVENTS.CUSTOMER_UPDATED, customerChanged),
      on(EVENTS.PLATFORM_CONFIG_UPDATED, async (em, data, event) => {
        await this.provision(em, event, { platformId: event.platformId, owner: 'PLATFORM' }, data.supportedCurrencies);
        await this.provisionEmbeddedWallets(em, event, data.embeddedWalletCurrencies);
      }),
    ];
  }

  /** Existing customers get an EMBEDDED_WALLET account per embedded-wallet currency. */
  private async provisionEmbeddedWallets(em: EntityManager, event: EventEnvelope, codes: unknown): Promise<void> {
    const currencies = [...new Set((Array.isArray(codes) ? codes : []).filter((c): c is string => isCurrencyCode(c)))];
    if (currencies.length === 0) return;
    const environment = await this.platforms.environmentOf(event.platformId);
    if (!environment) return;
    const n = await this.accounts.ensureEmbeddedWalletsIn(em, event.platformId, currencies, environment);
    this.logger.debug({ type: event.type, customers: n, currencies }, 'embedded wallets provisioned from event');
  }

  private async provision(
    em: EntityManager,
    event: EventEnvelope,
    owner: { platformId: string; owner: 'CUSTOMER' | 'PLATFORM'; customerId?: string },
    codes: unknown,
    embeddedCodes: unknown = [],
  ): Promise<void> {
    const list = Array.isArray(codes) ? codes : [];
    const unknown = list.filter((c) => !isCurrencyCode(c));
    if (unknown.length)
      this.logger.warn({ type: event.type, eventId: event.id, unknown }, 'unknown currencies skipped');
    const currencies = [...new Set(list.filter((c): c is string => isCurrencyCode(c)))];
    const embedded = [...new Set((Array.isArray(embeddedCodes) ? embeddedCodes : []).filter((c): c is string => isCurrencyCode(c)))];
    if (currencies.length === 0 && embedded.length === 0) return;
    const environment = await this.platforms.environmentOf(owner.platformId);
    if (!environment) {
      this.logger.warn({ type: event.type, eventId: event.id }, 'event of an unknown platform; skipped');
      return;
    }
    const accounts = await this.accounts.ensureIn(em, owner, currencies, environment, embedded);
    this.logger.debug(
      { type: event.type, accounts: accounts.map((a) => a.id) },
      'accounts provisioned from event',
    );
  }
}

/**
 * The durable JetStream consumer of identity events (`<prefix>.identity.>`,
 * durable `accounts-identity`).
 */
export class IdentityConsumer extends EventConsumer {
  constructor(o: { bus: Bus; orm: MikroORM; logger: Logger; prefix: string; handler: IdentityEventsHandler }) {
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
