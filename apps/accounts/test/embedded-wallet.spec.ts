import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accounts as pb } from '@sluice/contracts';
import { eventually } from '@sluice/testing';
import { rejection, SANDBOX, startHarness, type Harness } from './support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness('accembedded', { consume: true });
});
afterAll(async () => {
  await h?.stop();
});

const wallets = async (platformId: string, customerId: string) =>
  (await h.client.listInternalAccounts({ platformId, owner: pb.Owner.CUSTOMERS, customerId, type: pb.InternalAccountType.EMBEDDED_WALLET })).accounts;

describe('EMBEDDED_WALLET internal accounts', () => {
  it('EnsureCustomerAccounts adds one EMBEDDED_WALLET per embedded-wallet currency, privateEnabled false, idempotently', async () => {
    const platformId = await h.platform();
    await h.enableEmbeddedWallets(platformId, ['USDC']);
    const customerId = await h.customer(platformId);
    const req = { platformId, customerId, currencies: ['USD', 'USDC'], environment: SANDBOX };
    const first = await h.client.ensureCustomerAccounts(req);
    expect(first.accounts.map((a) => [a.type, a.currency])).toEqual([
      [pb.InternalAccountType.INTERNAL_FIAT, 'USD'],
      [pb.InternalAccountType.INTERNAL_CRYPTO, 'USDC'],
      [pb.InternalAccountType.EMBEDDED_WALLET, 'USDC'],
    ]);
    expect(first.accounts[2]!.privateEnabled).toBe(false);
    expect(first.accounts[0]!.privateEnabled).toBeUndefined();
    const again = await h.client.ensureCustomerAccounts(req);
    expect(again.accounts.map((a) => a.id)).toEqual(first.accounts.map((a) => a.id));
    expect(await wallets(platformId, customerId)).toHaveLength(1);
  });

  it('PLATFORM_CONFIG.UPDATED enabling a currency gives existing customers their wallets', async () => {
    const platformId = await h.platform();
    const customerId = await h.customer(platformId);
    await h.client.ensureCustomerAccounts({ platformId, customerId, currencies: ['EUR'], environment: SANDBOX });
    expect(await wallets(platformId, customerId)).toHaveLength(0);
    // identity's UpdatePlatformConfig writes the PLATFORM_CONFIG.UPDATED accounts consumes.
    await h.enableEmbeddedWallets(platformId, ['USDC']);
    const w = await eventually(async () => {
      const list = await wallets(platformId, customerId);
      return list.length === 1 ? list : undefined;
    });
    expect(w[0]).toMatchObject({ currency: 'USDC', privateEnabled: false, customerId });
  });

  it('UpdateInternalAccount sets privateEnabled on embedded wallets only, with at least one field', async () => {
    const platformId = await h.platform();
    await h.enableEmbeddedWallets(platformId, ['USDC']);
    const customerId = await h.customer(platformId);
    const { accounts } = await h.client.ensureCustomerAccounts({ platformId, customerId, currencies: ['USD'], environment: SANDBOX });
    const wallet = accounts.find((a) => a.type === pb.InternalAccountType.EMBEDDED_WALLET)!;
    const updated = await h.client.updateInternalAccount({ platformId, accountId: wallet.id, privateEnabled: true });
    expect(updated.account!.privateEnabled).toBe(true);
    expect((await h.client.getInternalAccount({ platformId, accountId: wallet.id })).account!.privateEnabled).toBe(true);
    const none = await rejection(() => h.client.updateInternalAccount({ platformId, accountId: wallet.id }));
    expect([none.code, (none.details?.errors as { field: string }[])[0]!.field]).toEqual(['INVALID_INPUT', 'privateEnabled']);
    const fiat = accounts.find((a) => a.type === pb.InternalAccountType.INTERNAL_FIAT)!;
    expect((await rejection(() => h.client.updateInternalAccount({ platformId, accountId: fiat.id, privateEnabled: true }))).code).toBe('NOT_EMBEDDED_WALLET');
    const otherPlatform = await h.platform();
    expect((await rejection(() => h.client.updateInternalAccount({ platformId: otherPlatform, accountId: wallet.id, privateEnabled: false }))).code).toBe('INTERNAL_ACCOUNT_NOT_FOUND');
    expect((await h.client.getInternalAccount({ platformId, accountId: wallet.id })).account!.privateEnabled).toBe(true);
  });
});
