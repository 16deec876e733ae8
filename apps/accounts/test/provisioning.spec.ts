import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { common, accounts as pb } from '@sluice/contracts';
import { newId } from '@sluice/core';
import { PRODUCTION, rejection, SANDBOX, startHarness, type Harness } from './support/harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('accprov');
});
afterAll(async () => {
  await h?.stop();
});

async function countAccounts(where = 'true', params: unknown[] = []): Promise<number> {
  const r = await h.sql.query(
    `SELECT count(*)::int AS n FROM accounts.internal_accounts WHERE ${where}`,
    params,
  );
  return r.rows[0].n as number;
}

describe('EnsureCustomerAccounts', () => {
  it('creates one holding account per currency, of the right type, with a zero balance', async () => {
    const platformId = await h.platform();
    const customerId = newId('Customer');
    const { accounts } = await h.client.ensureCustomerAccounts({
      platformId,
      customerId,
      currencies: ['USD', 'USDC', 'EUR', 'USD'],
      environment: SANDBOX,
    });
    expect(accounts.map((a) => [a.currency, a.type])).toEqual([
      ['USD', pb.InternalAccountType.INTERNAL_FIAT],
      ['USDC', pb.InternalAccountType.INTERNAL_CRYPTO],
      ['EUR', pb.InternalAccountType.INTERNAL_FIAT],
    ]);
    for (const a of accounts) {
      expect(a.id).toMatch(/^InternalAccount:[0-9a-f-]{36}$/);
      expect(a.customerId).toBe(customerId);
      expect(a.platformId).toBe(platformId);
      expect(a.balance?.amount).toBe(0n);
      expect(a.balance?.currency?.code).toBe(a.currency);
      expect(a.environment).toBe(SANDBOX);
      expect(a.fundingPaymentInstructions).toHaveLength(1);
    }
    const usd = accounts[0]!.fundingPaymentInstructions[0]!;
    expect(usd.accountOrWalletInfo).toMatchObject({
      accountType: 'USD_ACCOUNT',
      paymentRails: ['ACH', 'WIRE'],
      reference: accounts[0]!.fundingReference,
    });
    expect(usd.isPlatformAccount).toBe(false);
    expect(accounts[1]!.fundingPaymentInstructions[0]!.accountOrWalletInfo?.accountType).toBe('SOLANA_WALLET');
    expect(await countAccounts('customer_id = $1', [customerId])).toBe(3);
  });

  it('is idempotent and adds only the new currencies', async () => {
    const platformId = await h.platform();
    const customerId = newId('Customer');
    const first = await h.client.ensureCustomerAccounts({
      platformId,
      customerId,
      currencies: ['USD', 'BTC'],
      environment: SANDBOX,
    });
    const again = await h.client.ensureCustomerAccounts({
      platformId,
      customerId,
      currencies: ['USD', 'BTC'],
      environment: SANDBOX,
    });
    expect(again.accounts).toEqual(first.accounts);
    const more = await h.client.ensureCustomerAccounts({
      platformId,
      customerId,
      currencies: ['GBP', 'USD'],
      environment: SANDBOX,
    });
    expect(more.accounts.map((a) => a.currency)).toEqual(['GBP', 'USD']);
    expect(more.accounts[1]!.id).toBe(first.accounts[0]!.id);
    expect(await countAccounts('customer_id = $1', [customerId])).toBe(3);
  });

  it('20 concurrent calls create exactly one account per currency', async () => {
    const platformId = await h.platform();
    const customerId = newId('Customer');
    const currencies = ['USD', 'EUR', 'USDC', 'MXN'];
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        h.client.ensureCustomerAccounts({ platformId, customerId, currencies, environment: SANDBOX }),
      ),
    );
    const idSets = results.map((r) => r.accounts.map((a) => a.id).join(','));
    expect(new Set(idSets).size).toBe(1);
    expect(results[0]!.accounts).toHaveLength(4);
    expect(await countAccounts('customer_id = $1', [customerId])).toBe(4);
    const ledger = await h.sql.query(
      `SELECT count(*)::int AS n FROM accounts.ledger_accounts WHERE id = ANY($1)`,
      [results[0]!.accounts.map((a) => a.id)],
    );
    expect(ledger.rows[0].n).toBe(4);
  });

  it('keeps customers and platforms apart', async () => {
    const p1 = await h.platform();
    const p2 = await h.platform();
    const customerId = newId('Customer');
    const a1 = await h.client.ensureCustomerAccounts({
      platformId: p1,
      customerId,
      currencies: ['USD'],
      environment: SANDBOX,
    });
    const a2 = await h.client.ensureCustomerAccounts({
      platformId: p2,
      customerId,
      currencies: ['USD'],
      environment: SANDBOX,
    });
    expect(a1.accounts[0]!.id).not.toBe(a2.accounts[0]!.id);
    expect(a1.accounts[0]!.fundingReference).not.toBe(a2.accounts[0]!.fundingReference);
  });

  it('production accounts carry no sandbox instructions', async () => {
    const platformId = await h.platform('PRODUCTION');
    const { accounts } = await h.client.ensureCustomerAccounts({
      platformId,
      customerId: newId('Customer'),
      currencies: ['USD'],
      environment: PRODUCTION,
    });
    expect(accounts[0]!.environment).toBe(PRODUCTION);
    expect(accounts[0]!.fundingPaymentInstructions).toEqual([]);
  });

  it('rejects bad input with the field at fault and creates nothing', async () => {
    const platformId = await h.platform();
    const customerId = newId('Customer');
    const before = await countAccounts();
    const badCurrency = await rejection(() =>
      h.client.ensureCustomerAccounts({
        platformId,
        customerId,
        currencies: ['USD', 'DOGE'],
        environment: SANDBOX,
      }),
    );
    expect(badCurrency.code).toBe('INVALID_INPUT');
    expect(badCurrency.kind).toBe('INVALID_ARGUMENT');
    expect(badCurrency.details).toEqual({
      errors: [{ field: 'currencies[1]', message: 'unknown currency "DOGE"' }],
    });
    const noEnv = await rejection(() =>
      h.client.ensureCustomerAccounts({
        platformId,
        customerId,
        currencies: ['USD'],
        environment: common.Environment.UNSPECIFIED,
      }),
    );
    expect(noEnv.details).toEqual({
      errors: [{ field: 'environment', message: 'must be SANDBOX or PRODUCTION' }],
    });
    const badCustomer = await rejection(() =>
      h.client.ensureCustomerAccounts({
        platformId,
        customerId: 'Customer:nope',
        currencies: ['USD'],
        environment: SANDBOX,
      }),
    );
    expect((badCustomer.details!.errors as { field: string }[])[0]!.field).toBe('customerId');
    const badPlatform = await rejection(() =>
      h.client.ensureCustomerAccounts({
        platformId: '',
        customerId,
        currencies: ['USD'],
        environment: SANDBOX,
      }),
    );
    expect((badPlatform.details!.errors as { field: string }[])[0]!.field).toBe('platformId');
    expect(await countAccounts()).toBe(before);
  });
});

describe('EnsurePlatformAccounts and ListInternalAccounts', () => {
  it('provisions platform accounts, listed apart from customer accounts', async () => {
    const platformId = await h.platform();
    const { accounts } = await h.client.ensurePlatformAccounts({
      platformId,
      currencies: ['USD', 'USDC'],
      environment: SANDBOX,
    });
    expect(accounts.map((a) => a.customerId)).toEqual([undefined, undefined]);
    expect(accounts[0]!.fundingPaymentInstructions[0]!.isPlatformAccount).toBe(true);
    const again = await h.client.ensurePlatformAccounts({
      platformId,
      currencies: ['USDC', 'USD'],
      environment: SANDBOX,
    });
    expect(again.accounts.map((a) => a.id)).toEqual([accounts[1]!.id, accounts[0]!.id]);
    await h.client.ensureCustomerAccounts({
      platformId,
      customerId: newId('Customer'),
      currencies: ['USD'],
      environment: SANDBOX,
    });

    const platformList = await h.client.listInternalAccounts({ platformId, owner: pb.Owner.PLATFORM });
    expect(platformList.accounts.map((a) => a.id)).toEqual(accounts.map((a) => a.id));
    expect(platformList.page!.totalCount).toBe(2);
    const customerList = await h.client.listInternalAccounts({ platformId, owner: pb.Owner.CUSTOMERS });
    expect(customerList.accounts).toHaveLength(1);
    expect(customerList.accounts[0]!.customerId).toBeTruthy();
  });

  it('10 concurrent calls create one platform account per currency', async () => {
    const platformId = await h.platform();
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        h.client.ensurePlatformAccounts({ platformId, currencies: ['EUR', 'BTC'], environment: SANDBOX }),
      ),
    );
    expect(new Set(results.map((r) => r.accounts.map((a) => a.id).join(','))).size).toBe(1);
    expect(await countAccounts('platform_id = $1', [platformId])).toBe(2);
  });

  it('filters by customer, currency and type and pages with a cursor', async () => {
    const platformId = await h.platform();
    const customers = [newId('Customer'), newId('Customer'), newId('Customer')];
    for (const customerId of customers)
      await h.client.ensureCustomerAccounts({
        platformId,
        customerId,
        currencies: ['USD', 'USDC'],
        environment: SANDBOX,
      });

    const first = await h.client.listInternalAccounts({ platformId, owner: pb.Owner.CUSTOMERS, page: { limit: 4 } });
    expect(first.accounts).toHaveLength(4);
    expect(first.page!.hasMore).toBe(true);
    expect(first.page!.totalCount).toBe(6);
    const second = await h.client.listInternalAccounts({
      platformId,
      owner: pb.Owner.CUSTOMERS,
      page: { limit: 4, cursor: first.page!.nextCursor! },
    });
    expect(second.accounts).toHaveLength(2);
    expect(second.page!.hasMore).toBe(false);
    expect(second.page!.nextCursor).toBeUndefined();
    const all = [...first.accounts, ...second.accounts].map((a) => a.id);
    expect(new Set(all).size).toBe(6);

    const byCustomer = await h.client.listInternalAccounts({
      platformId,
      owner: pb.Owner.CUSTOMERS,
      customerId: customers[1]!,
    });
    expect(byCustomer.accounts.map((a) => a.customerId)).toEqual([customers[1], customers[1]]);
    const byCurrency = await h.client.listInternalAccounts({
      platformId,
      owner: pb.Owner.CUSTOMERS,
      currency: 'USDC',
    });
    expect(byCurrency.accounts.map((a) => a.currency)).toEqual(['USDC', 'USDC', 'USDC']);
    const byType = await h.client.listInternalAccounts({
      platformId,
      owner: pb.Owner.CUSTOMERS,
      type: pb.InternalAccountType.INTERNAL_FIAT,
    });
    expect(byType.page!.totalCount).toBe(3);
    expect(byType.accounts.every((a) => a.type === pb.InternalAccountType.INTERNAL_FIAT)).toBe(true);
    const wallets = await h.client.listInternalAccounts({
      platformId,
      owner: pb.Owner.CUSTOMERS,
      type: pb.InternalAccountType.EMBEDDED_WALLET,
    });
    expect(wallets).toMatchObject({ accounts: [], page: { hasMore: false, totalCount: 0 } });
    const otherPlatform = await h.client.listInternalAccounts({
      platformId: await h.platform(),
      owner: pb.Owner.CUSTOMERS,
      customerId: customers[0]!,
    });
    expect(otherPlatform.page!.totalCount).toBe(0);
  });

  it('rejects bad filters, limits and cursors', async () => {
    const platformId = await h.platform();
    const field = async (req: Partial<pb.ListInternalAccountsRequest>) => {
      const e = await rejection(() =>
        h.client.listInternalAccounts({ platformId, owner: pb.Owner.CUSTOMERS, ...req }),
      );
      expect(e.code).toBe('INVALID_INPUT');
      return (e.details!.errors as { field: string }[]).map((x) => x.field);
    };
    expect(await field({ page: { limit: 101 } })).toEqual(['limit']);
    expect(await field({ page: { limit: -1 } })).toEqual(['limit']);
    expect(await field({ page: { cursor: 'not-a-cursor' } })).toEqual(['cursor']);
    expect(await field({ currency: 'DOGE' })).toEqual(['currency']);
    expect(await field({ customerId: 'Customer:1' })).toEqual(['customerId']);
    expect(await field({ owner: pb.Owner.UNSPECIFIED })).toEqual(['owner']);
    expect(await field({ owner: pb.Owner.PLATFORM, customerId: newId('Customer') })).toEqual(['customerId']);
    expect(await field({ type: pb.InternalAccountType.UNSPECIFIED })).toEqual(['type']);
  });
});

describe('GetInternalAccount', () => {
  it('returns the platform’s account and NOT_FOUND for another platform’s', async () => {
    const platformId = await h.platform();
    const { accounts } = await h.client.ensureCustomerAccounts({
      platformId,
      customerId: newId('Customer'),
      currencies: ['EUR'],
      environment: SANDBOX,
    });
    const { account } = await h.client.getInternalAccount({ platformId, accountId: accounts[0]!.id });
    expect(account).toEqual(accounts[0]);
    const otherPlatform = await h.platform();
    const other = await rejection(() =>
      h.client.getInternalAccount({ platformId: otherPlatform, accountId: accounts[0]!.id }),
    );
    expect([other.kind, other.code]).toEqual(['NOT_FOUND', 'INTERNAL_ACCOUNT_NOT_FOUND']);
    const missing = await rejection(() =>
      h.client.getInternalAccount({ platformId, accountId: newId('InternalAccount') }),
    );
    expect(missing.code).toBe('INTERNAL_ACCOUNT_NOT_FOUND');
    const malformed = await rejection(() =>
      h.client.getInternalAccount({ platformId, accountId: 'Customer:123' }),
    );
    expect(malformed.code).toBe('INVALID_INPUT');
  });
});
