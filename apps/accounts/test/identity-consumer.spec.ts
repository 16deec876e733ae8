import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accounts as pb, identity } from '@sluice/contracts';
import { newId } from '@sluice/core';
import { EVENTS } from '@sluice/api';
import { eventually } from '@sluice/testing';
import { SANDBOX, startHarness, type Harness } from './support/harness.js';
import { customerChange, publishIdentityEvent } from './support/identity-events.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('accconsumer', { consume: true });
});
afterAll(async () => {
  await h?.stop();
});

async function customerAccounts(platformId: string, customerId: string) {
  return (await h.client.listInternalAccounts({ platformId, owner: pb.Owner.CUSTOMERS, customerId }))
    .accounts;
}

describe('identity events consumer (durable accounts-identity)', () => {
  it('provisions a customer’s accounts from CUSTOMER.CREATED, with the platform’s environment from identity', async () => {
    const platformId = await h.platform('SANDBOX');
    // identity's CreateCustomer writes the CUSTOMER.CREATED its relay publishes.
    const { customer } = await h.identity.createCustomer({
      platformId,
      customerType: identity.CustomerType.INDIVIDUAL,
      currencies: ['USD', 'USDC'],
      fullName: 'Ada Lovelace',
    });
    const customerId = customer!.id;
    const accounts = await eventually(async () => {
      const rows = await customerAccounts(platformId, customerId);
      return rows.length === 2 ? rows : undefined;
    }, 15_000);
    expect(accounts.map((a) => [a.currency, a.type, a.environment])).toEqual([
      ['USD', pb.InternalAccountType.INTERNAL_FIAT, SANDBOX],
      ['USDC', pb.InternalAccountType.INTERNAL_CRYPTO, SANDBOX],
    ]);
    expect(accounts[0]!.fundingPaymentInstructions[0]!.accountOrWalletInfo!.accountType).toBe('USD_ACCOUNT');
  });

  it('adds accounts for new currencies on CUSTOMER.UPDATED and keeps the existing ones', async () => {
    const platformId = await h.platform('PRODUCTION');
    const customerId = newId('Customer');
    await publishIdentityEvent(h, EVENTS.CUSTOMER_CREATED, platformId, customerChange(h, platformId, customerId, ['EUR']));
    const [eur] = await eventually(async () => {
      const rows = await customerAccounts(platformId, customerId);
      return rows.length === 1 ? rows : undefined;
    }, 15_000);
    expect(eur!.fundingPaymentInstructions).toEqual([]);
    await publishIdentityEvent(h, EVENTS.CUSTOMER_UPDATED, platformId, customerChange(h, platformId, customerId, ['GBP', 'DOGE']));
    const after = await eventually(async () => {
      const rows = await customerAccounts(platformId, customerId);
      return rows.length === 2 ? rows : undefined;
    }, 15_000);
    expect(after.map((a) => a.currency)).toEqual(['EUR', 'GBP']);
    expect(after[0]!.id).toBe(eur!.id);
  });

  it('provisions platform accounts from PLATFORM_CONFIG.UPDATED', async () => {
    // identity's platform creation and UpdatePlatformConfig write the PLATFORM_CONFIG.UPDATED events.
    const platformId = await h.platform('SANDBOX');
    const platformAccounts = (n: number) =>
      eventually(async () => {
        const r = await h.client.listInternalAccounts({ platformId, owner: pb.Owner.PLATFORM });
        return r.accounts.length === n ? r.accounts : undefined;
      }, 15_000);
    // A new platform supports USD and USDC.
    const first = await platformAccounts(2);
    expect(first.map((a) => [a.currency, a.customerId])).toEqual([
      ['USD', undefined],
      ['USDC', undefined],
    ]);
    await h.identity.updatePlatformConfig({
      platformId,
      supportedCurrencies: identity.CurrencyConfigList.fromPartial({
        currencies: [{ currencyCode: 'USD' }, { currencyCode: 'MXN' }],
      }),
      clearEmbeddedWalletConfig: false,
    });
    const accounts = await platformAccounts(3);
    expect(accounts.map((a) => [a.currency, a.customerId])).toEqual([
      ['USD', undefined],
      ['USDC', undefined],
      ['MXN', undefined],
    ]);
    expect(accounts[0]!.id).toBe(first[0]!.id);
  });

  it('handles a redelivered event once, agrees with a concurrent synchronous call, and skips unknown platforms', async () => {
    const platformId = await h.platform('SANDBOX');
    const customerId = newId('Customer');
    const sync = h.client.ensureCustomerAccounts({
      platformId,
      customerId,
      currencies: ['CAD'],
      environment: SANDBOX,
    });
    const created = customerChange(h, platformId, customerId, ['CAD']);
    const eventId = await publishIdentityEvent(h, EVENTS.CUSTOMER_CREATED, platformId, created);
    await publishIdentityEvent(h, EVENTS.CUSTOMER_CREATED, platformId, created, eventId);
    const unknownPlatform = newId('Platform');
    const strayId = await publishIdentityEvent(
      h,
      EVENTS.CUSTOMER_CREATED,
      unknownPlatform,
      customerChange(h, unknownPlatform, newId('Customer'), ['USD']),
    );
    const { accounts } = await sync;
    const inbox = await eventually(async () => {
      const r = await h.sql.query(
        `SELECT event_id FROM accounts.inbox WHERE consumer = 'accounts-identity' AND event_id = ANY($1)`,
        [[eventId, strayId]],
      );
      return r.rows.length === 2 ? r.rows : undefined;
    }, 15_000);
    expect(inbox).toHaveLength(2);
    expect((await customerAccounts(platformId, customerId)).map((a) => a.id)).toEqual([accounts[0]!.id]);
    const stray = await h.sql.query(
      `SELECT count(*)::int AS n FROM accounts.internal_accounts WHERE platform_id = $1`,
      [unknownPlatform],
    );
    expect(stray.rows[0].n).toBe(0);
  });
});
