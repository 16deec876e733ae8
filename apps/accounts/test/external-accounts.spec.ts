import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { common, accounts as pb } from '@sluice/contracts';
import { EXTERNAL_ACCOUNT_TYPES, newId, paymentRailsOf } from '@sluice/core';
import { externalAccountJson } from '@sluice/api';
import { EXTERNAL_ACCOUNT_EXAMPLES } from '@sluice/testing/external-accounts';
import { referenceValidator } from '@sluice/testing/reference';
import { PRODUCTION, rejection, SANDBOX, startHarness, type Harness } from './support/harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('accext');
});
afterAll(async () => {
  await h?.stop();
});

const V = pb.BeneficiaryVerificationStatus;
const johnDoe = { beneficiaryType: 'INDIVIDUAL', fullName: 'John Doe' };
const usd = (accountNumber: string, extra: Partial<pb.ExternalAccountInfo> = {}): pb.ExternalAccountInfo => ({
  accountType: 'USD_ACCOUNT',
  accountNumber,
  routingNumber: '021000021',
  paymentRails: [],
  beneficiary: johnDoe,
  ...extra,
});
const address = { line1: '1 Main St', postalCode: '10115', country: 'DE' };
/** A request accountInfo (JSON, as the gateway forwards it) as the proto message. */
const asPb = (info: Record<string, unknown>): pb.ExternalAccountInfo =>
  ({ paymentRails: [], ...info }) as unknown as pb.ExternalAccountInfo;

async function rows(where: string, params: unknown[]): Promise<Record<string, unknown>[]> {
  return (await h.sql.query(`SELECT * FROM accounts.external_accounts WHERE ${where}`, params)).rows;
}
async function outbox(type: string, id: string): Promise<Record<string, unknown>[]> {
  const r = await h.sql.query(`SELECT * FROM accounts.outbox WHERE type = $1`, [type]);
  return r.rows.filter((e) => JSON.stringify(e).includes(id));
}

describe('CreateExternalAccount', () => {
  const publicShape = referenceValidator('ExternalAccount');

  it.each(EXTERNAL_ACCOUNT_TYPES)(
    'creates a %s account, verified with the beneficiary’s (wallets: the customer’s) name, writes EXTERNAL_ACCOUNT.CREATED; its public JSON is the reference’s ExternalAccount',
    async (type) => {
      const { currency, accountInfo } = EXTERNAL_ACCOUNT_EXAMPLES[type];
      const bank = paymentRailsOf(type).length > 0;
      const platformId = await h.platform();
      const customerId = await h.customer(platformId, 'Maria Silva');
      const { account } = await h.client.createExternalAccount({
        platformId,
        environment: SANDBOX,
        customerId,
        currency,
        accountInfo: asPb(accountInfo),
        platformAccountId: 'ext_1',
      });
      expect(account).toMatchObject({
        platformId,
        customerId,
        currency,
        status: pb.ExternalAccountStatus.ACTIVE,
        platformAccountId: 'ext_1',
        defaultUmaDepositAccount: false,
        beneficiaryVerificationStatus: V.MATCHED,
        beneficiaryVerifiedData: { fullName: bank ? 'Ada Lovelace' : 'Maria Silva' },
        environment: SANDBOX,
      });
      expect(account!.id).toMatch(/^ExternalAccount:[0-9a-f-]{36}$/);
      expect(account!.accountInfo).toMatchObject({ ...accountInfo, paymentRails: expect.any(Array) });
      expect(account!.accountInfo!.paymentRails.length > 0).toBe(bank);
      const again = await h.client.getExternalAccount({ platformId, accountId: account!.id });
      expect(again.account).toEqual(account);
      const json = externalAccountJson(again.account!);
      expect(publicShape(json), JSON.stringify(json)).toEqual([]);
      const events = await outbox('EXTERNAL_ACCOUNT.CREATED', account!.id);
      expect(events).toHaveLength(1);
    },
  );

  it('an account stored before payment rails were recorded is read with its type’s rails', async () => {
    const platformId = await h.platform();
    const customerId = await h.customer(platformId, 'Maria Silva');
    const { account } = await h.client.createExternalAccount({
      platformId,
      environment: SANDBOX,
      customerId,
      currency: 'USD',
      accountInfo: usd('12121212', { paymentRails: ['WIRE'] }),
    });
    expect(account!.accountInfo!.paymentRails).toEqual(['WIRE']);
    // A row as written then: plaintext columns, not sealed, no paymentRails.
    const { paymentRails: _rails, ...before } = account!.accountInfo!;
    await h.sql.query(
      `UPDATE accounts.external_accounts SET sealed_data = NULL, account_info = $2::jsonb, primary_identifier = $3
       WHERE id = $1`,
      [account!.id, JSON.stringify({ ...before, beneficiary: johnDoe }), account!.primaryIdentifier],
    );
    const old = await h.client.getExternalAccount({ platformId, accountId: account!.id });
    expect(old.account!.accountInfo!.paymentRails).toEqual(['ACH', 'WIRE', 'RTP', 'FEDNOW']);
    expect(old.account!.primaryIdentifier).toBe(account!.primaryIdentifier);
  });

  it('normalizes and stores the IBAN, uses the request beneficiary name', async () => {
    const platformId = await h.platform();
    const customerId = await h.customer(platformId, 'Maria Silva');
    const { account } = await h.client.createExternalAccount({
      platformId,
      environment: SANDBOX,
      customerId,
      currency: 'EUR',
      accountInfo: {
        accountType: 'EUR_ACCOUNT',
        iban: 'de89 3704 0044 0532 0130 00',
        paymentRails: [],
        beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Hans Müller', address },
      },
    });
    expect(account!.accountInfo).toMatchObject({
      iban: 'DE89370400440532013000',
      beneficiary: { fullName: 'Hans Müller' },
    });
    expect(account!.beneficiaryVerifiedData).toEqual({ fullName: 'Hans Müller' });
    expect(account!.primaryIdentifier).toBe('DE89370400440532013000');
  });

  it('applies every beneficiary verification suffix (sandbox)', async () => {
    const platformId = await h.platform();
    const customerId = await h.customer(platformId, 'John Doe');
    const expectations: [string, pb.BeneficiaryVerificationStatus, string | undefined][] = [
      ['100000102', V.NOT_MATCHED, undefined],
      ['100000103', V.PARTIAL_MATCH, 'J. Doe'],
      ['100000104', V.PENDING, undefined],
      ['100000106', V.UNSUPPORTED, undefined],
      ['100000107', V.CHECKED_BY_RECEIVING_FI, undefined],
      ['100000108', V.MATCHED, 'John Doe'],
    ];
    for (const [number, status, name] of expectations) {
      const { account } = await h.client.createExternalAccount({
        platformId,
        environment: SANDBOX,
        customerId,
        currency: 'USD',
        accountInfo: usd(number),
      });
      expect(account!.beneficiaryVerificationStatus, number).toBe(status);
      if (name) expect(account!.beneficiaryVerifiedData?.fullName).toBe(name);
      if (status === V.NOT_MATCHED) expect(account!.beneficiaryVerifiedData?.fullName).not.toBe('John Doe');
      if (status === V.PENDING) expect(account!.beneficiaryVerifiedData).toBeUndefined();
    }
    // digits at the end of the username of an e-mail pix key
    const pix = await h.client.createExternalAccount({
      platformId,
      environment: SANDBOX,
      customerId,
      currency: 'BRL',
      accountInfo: {
        accountType: 'BRL_ACCOUNT',
        pixKey: 'john103@example.com',
        pixKeyType: 'EMAIL',
        taxId: '52998224725',
        paymentRails: [],
        beneficiary: johnDoe,
      },
    });
    expect(pix.account!.beneficiaryVerificationStatus).toBe(V.PARTIAL_MATCH);
  });

  it('suffix 105: 400 invalid account, nothing stored, no event', async () => {
    const platformId = await h.platform();
    const customerId = await h.customer(platformId, 'John Doe');
    const err = await rejection(() =>
      h.client.createExternalAccount({
        platformId,
        environment: SANDBOX,
        customerId,
        currency: 'USD',
        accountInfo: usd('100000105'),
      }),
    );
    expect(err).toMatchObject({ code: 'EXTERNAL_ACCOUNT_INVALID', kind: 'INVALID_ARGUMENT' });
    expect(err.details).toMatchObject({ errors: [{ field: 'accountInfo.accountNumber' }] });
    expect(await rows('platform_id = $1', [platformId])).toHaveLength(0);
  });

  it('production platforms: UNSUPPORTED, and 105 is not refused', async () => {
    const platformId = await h.platform('PRODUCTION');
    const customerId = await h.customer(platformId, 'John Doe');
    const { account } = await h.client.createExternalAccount({
      platformId,
      environment: PRODUCTION,
      customerId,
      currency: 'USD',
      accountInfo: usd('100000105'),
    });
    expect(account!.beneficiaryVerificationStatus).toBe(V.UNSUPPORTED);
    expect(account!.beneficiaryVerifiedData).toBeUndefined();
  });

  it('unknown, deleted or another platform’s customer: CUSTOMER_NOT_FOUND, nothing stored', async () => {
    const platformId = await h.platform();
    const other = await h.platform();
    const foreign = await h.customer(other, 'Eve');
    const deleted = await h.customer(platformId, 'Gone');
    await h.identity.deleteCustomer({ platformId, customerId: deleted });
    for (const customerId of [foreign, deleted, newId('Customer')]) {
      const err = await rejection(() =>
        h.client.createExternalAccount({
          platformId,
          environment: SANDBOX,
          customerId,
          currency: 'USD',
          accountInfo: usd('12345678'),
        }),
      );
      expect(err).toMatchObject({ code: 'CUSTOMER_NOT_FOUND', kind: 'NOT_FOUND' });
    }
    expect(await rows('platform_id = $1', [platformId])).toHaveLength(0);
  });

  it('bad input: field-level INVALID_INPUT, nothing stored', async () => {
    const platformId = await h.platform();
    const customerId = await h.customer(platformId, 'John Doe');
    const cases: [Partial<pb.CreateExternalAccountRequest>, string][] = [
      [
        {
          currency: 'EUR',
          accountInfo: asPb({
            accountType: 'EUR_ACCOUNT',
            iban: 'DE89370400440532013001',
            beneficiary: johnDoe,
          }),
        },
        'accountInfo.iban',
      ],
      [
        {
          currency: 'MXN',
          accountInfo: asPb({
            accountType: 'MXN_ACCOUNT',
            clabeNumber: '032180000118359718',
            beneficiary: johnDoe,
          }),
        },
        'accountInfo.clabeNumber',
      ],
      [
        { currency: 'USD', accountInfo: usd('12345678', { beneficiary: undefined }) },
        'accountInfo.beneficiary',
      ],
      [
        { currency: 'USD', accountInfo: usd('12345678', { paymentRails: ['SEPA'] }) },
        'accountInfo.paymentRails',
      ],
      [
        {
          currency: 'CAD',
          accountInfo: asPb({ ...EXTERNAL_ACCOUNT_EXAMPLES.CAD_ACCOUNT.accountInfo, bankCode: '1' }),
        },
        'accountInfo.bankCode',
      ],
      [
        {
          currency: 'KES',
          accountInfo: asPb({
            ...EXTERNAL_ACCOUNT_EXAMPLES.KES_ACCOUNT.accountInfo,
            phoneNumber: '+256712345678',
          }),
        },
        'accountInfo.phoneNumber',
      ],
      [
        {
          currency: 'INR',
          accountInfo: asPb({ ...EXTERNAL_ACCOUNT_EXAMPLES.INR_ACCOUNT.accountInfo, vpa: 'nobody' }),
        },
        'accountInfo.vpa',
      ],
      [
        {
          currency: 'AED',
          accountInfo: asPb({
            ...EXTERNAL_ACCOUNT_EXAMPLES.AED_ACCOUNT.accountInfo,
            iban: 'AE070331234567890123457',
          }),
        },
        'accountInfo.iban',
      ],
      [
        { currency: 'USD', accountInfo: usd('12345678', { routingNumber: '021000022' }) },
        'accountInfo.routingNumber',
      ],
      [{ currency: 'EUR', accountInfo: usd('12345678') }, 'currency'],
      [{ currency: 'USD', accountInfo: undefined }, 'accountInfo'],
      [{ currency: 'USD', accountInfo: usd('12345678'), customerId: 'Customer:nope' }, 'customerId'],
      [
        { currency: 'USD', accountInfo: usd('12345678'), environment: common.Environment.UNSPECIFIED },
        'environment',
      ],
    ];
    for (const [req, field] of cases) {
      const err = await rejection(() =>
        h.client.createExternalAccount({
          platformId,
          environment: SANDBOX,
          customerId,
          currency: 'USD',
          ...req,
        } as pb.CreateExternalAccountRequest),
      );
      expect(err.code, field).toBe('INVALID_INPUT');
      expect(
        (err.details as { errors: { field: string }[] }).errors.map((e) => e.field),
        field,
      ).toContain(field);
    }
    expect(await rows('platform_id = $1', [platformId])).toHaveLength(0);
  });

  it('the same account twice for the same customer: EXTERNAL_ACCOUNT_ALREADY_EXISTS; again after delete: fine', async () => {
    const platformId = await h.platform();
    const customerId = await h.customer(platformId, 'John Doe');
    const req = {
      platformId,
      environment: SANDBOX,
      customerId,
      currency: 'USD',
      accountInfo: usd('55555555'),
    };
    const first = await h.client.createExternalAccount(req);
    const [a, b] = await Promise.allSettled([
      h.client.createExternalAccount(req),
      h.client.createExternalAccount(req),
    ]);
    expect([a.status, b.status]).toEqual(['rejected', 'rejected']);
    expect((a as PromiseRejectedResult).reason.code).toBe('EXTERNAL_ACCOUNT_ALREADY_EXISTS');
    // another customer may register the same account
    await h.client.createExternalAccount({ ...req, customerId: await h.customer(platformId, 'Jane Doe') });
    await h.client.deleteExternalAccount({ platformId, accountId: first.account!.id });
    const again = await h.client.createExternalAccount(req);
    expect(again.account!.id).not.toBe(first.account!.id);
  });

  it('keeps one default UMA deposit account per customer', async () => {
    const platformId = await h.platform();
    const customerId = await h.customer(platformId, 'John Doe');
    const a = await h.client.createExternalAccount({
      platformId,
      environment: SANDBOX,
      customerId,
      currency: 'USD',
      accountInfo: usd('11111111'),
      defaultUmaDepositAccount: true,
    });
    const b = await h.client.createExternalAccount({
      platformId,
      environment: SANDBOX,
      customerId,
      currency: 'USD',
      accountInfo: usd('22222222'),
      defaultUmaDepositAccount: true,
    });
    expect(b.account!.defaultUmaDepositAccount).toBe(true);
    expect(
      (await h.client.getExternalAccount({ platformId, accountId: a.account!.id })).account!
        .defaultUmaDepositAccount,
    ).toBe(false);
    const err = await rejection(() =>
      h.client.createExternalAccount({
        platformId,
        environment: SANDBOX,
        currency: 'USD',
        accountInfo: usd('33333333'),
        defaultUmaDepositAccount: true,
      }),
    );
    expect(err.code).toBe('INVALID_INPUT');
  });

  it('10 concurrent creates that each claim the default: all created, exactly one default', async () => {
    const platformId = await h.platform();
    const customerId = await h.customer(platformId, 'John Doe');
    const made = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        h.client.createExternalAccount({
          platformId,
          environment: SANDBOX,
          customerId,
          currency: 'USD',
          accountInfo: usd(`4444444${i}`),
          defaultUmaDepositAccount: true,
        }),
      ),
    );
    expect(made).toHaveLength(10);
    const defaults = await Promise.all(
      made.map(
        async (m) => (await h.client.getExternalAccount({ platformId, accountId: m.account!.id })).account!,
      ),
    );
    expect(defaults.filter((a) => a.defaultUmaDepositAccount)).toHaveLength(1);
  });
});

describe('List, Get, Delete', () => {
  it('lists customer and platform accounts with filters and pagination; deletes softly; other platforms see 404', async () => {
    const platformId = await h.platform();
    const c1 = await h.customer(platformId, 'Ann');
    const c2 = await h.customer(platformId, 'Bob');
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { account } = await h.client.createExternalAccount({
        platformId,
        environment: SANDBOX,
        customerId: i < 3 ? c1 : c2,
        currency: 'USD',
        accountInfo: usd(`9000000${i}`),
      });
      made.push(account!.id);
    }
    const eur = await h.client.createExternalAccount({
      platformId,
      environment: SANDBOX,
      customerId: c1,
      currency: 'EUR',
      accountInfo: asPb({
        accountType: 'EUR_ACCOUNT',
        iban: 'NL91ABNA0417164300',
        beneficiary: { ...johnDoe, address },
      }),
    });
    const plat = await h.client.createExternalAccount({
      platformId,
      environment: SANDBOX,
      currency: 'USD',
      accountInfo: usd('77777777'),
    });
    expect(plat.account!.customerId).toBeUndefined();

    const all = await h.client.listExternalAccounts({ platformId, owner: pb.Owner.CUSTOMERS });
    expect(all.page!.totalCount).toBe(6);
    expect(all.accounts.map((a) => a.id)).toEqual([...made, eur.account!.id]);

    const p1 = await h.client.listExternalAccounts({
      platformId,
      owner: pb.Owner.CUSTOMERS,
      currency: 'USD',
      page: { limit: 2 },
    });
    expect(p1).toMatchObject({ page: { hasMore: true, totalCount: 5 } });
    const p2 = await h.client.listExternalAccounts({
      platformId,
      owner: pb.Owner.CUSTOMERS,
      currency: 'USD',
      page: { limit: 2, cursor: p1.page!.nextCursor! },
    });
    const p3 = await h.client.listExternalAccounts({
      platformId,
      owner: pb.Owner.CUSTOMERS,
      currency: 'USD',
      page: { limit: 2, cursor: p2.page!.nextCursor! },
    });
    expect([...p1.accounts, ...p2.accounts, ...p3.accounts].map((a) => a.id)).toEqual(made);
    expect(p3.page!.hasMore).toBe(false);
    expect(p3.page!.nextCursor).toBeUndefined();

    const byCustomer = await h.client.listExternalAccounts({
      platformId,
      owner: pb.Owner.CUSTOMERS,
      customerId: c2,
    });
    expect(byCustomer.accounts.map((a) => a.id)).toEqual(made.slice(3));

    const platform = await h.client.listExternalAccounts({ platformId, owner: pb.Owner.PLATFORM });
    expect(platform.accounts.map((a) => a.id)).toEqual([plat.account!.id]);

    // another platform: nothing listed, 404 on get and delete
    const other = await h.platform();
    expect(
      (await h.client.listExternalAccounts({ platformId: other, owner: pb.Owner.CUSTOMERS })).page!
        .totalCount,
    ).toBe(0);
    expect(
      (await rejection(() => h.client.getExternalAccount({ platformId: other, accountId: made[0]! }))).code,
    ).toBe('EXTERNAL_ACCOUNT_NOT_FOUND');
    expect(
      (await rejection(() => h.client.deleteExternalAccount({ platformId: other, accountId: made[0]! })))
        .code,
    ).toBe('EXTERNAL_ACCOUNT_NOT_FOUND');

    // delete: gone from reads, event written, second delete 404
    await h.client.deleteExternalAccount({ platformId, accountId: made[0]! });
    expect(
      (await rejection(() => h.client.getExternalAccount({ platformId, accountId: made[0]! }))).code,
    ).toBe('EXTERNAL_ACCOUNT_NOT_FOUND');
    expect(
      (await h.client.listExternalAccounts({ platformId, owner: pb.Owner.CUSTOMERS, currency: 'USD' })).page!
        .totalCount,
    ).toBe(4);
    expect(
      (await rejection(() => h.client.deleteExternalAccount({ platformId, accountId: made[0]! }))).code,
    ).toBe('EXTERNAL_ACCOUNT_NOT_FOUND');
    expect(await outbox('EXTERNAL_ACCOUNT.DELETED', made[0]!)).toHaveLength(1);
    expect(await rows('id = $1 AND deleted_at IS NOT NULL', [made[0]])).toHaveLength(1);

    const bad = await rejection(() =>
      h.client.listExternalAccounts({ platformId, owner: pb.Owner.PLATFORM, customerId: c1 }),
    );
    expect(bad.code).toBe('INVALID_INPUT');
    const badCur = await rejection(() =>
      h.client.listExternalAccounts({ platformId, owner: pb.Owner.CUSTOMERS, currency: 'DOGE' }),
    );
    expect(badCur.details).toMatchObject({ errors: [{ field: 'currency' }] });
  });

  it('reports the stored status (an account an operator set INACTIVE or UNDER_REVIEW is not shown ACTIVE)', async () => {
    const platformId = await h.platform();
    const c = await h.customer(platformId, 'Ann');
    const { account } = await h.client.createExternalAccount({
      platformId,
      environment: SANDBOX,
      customerId: c,
      currency: 'USD',
      accountInfo: usd('91919191'),
    });
    expect(account!.status).toBe(pb.ExternalAccountStatus.ACTIVE);
    for (const [stored, shown] of [
      ['INACTIVE', pb.ExternalAccountStatus.INACTIVE],
      ['UNDER_REVIEW', pb.ExternalAccountStatus.UNDER_REVIEW],
      ['PENDING', pb.ExternalAccountStatus.PENDING],
    ] as const) {
      await h.sql.query(`UPDATE accounts.external_accounts SET status = $1 WHERE id = $2`, [
        stored,
        account!.id,
      ]);
      expect(
        (await h.client.getExternalAccount({ platformId, accountId: account!.id })).account!.status,
      ).toBe(shown);
      const listed = await h.client.listExternalAccounts({
        platformId,
        owner: pb.Owner.CUSTOMERS,
        customerId: c,
      });
      expect(listed.accounts.map((a) => a.status)).toEqual([shown]);
    }
  });
});
