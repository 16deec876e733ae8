import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { common, identity } from '@sluice/contracts';
import { newPlatform, outbox, startIdentity, type Harness, type TestPlatform } from './support/harness.js';
import { fieldsOf, rejection } from './support/errors.js';

const { CustomerType, VerificationStatus } = identity;
const { Environment } = common;
type CreateInput = Omit<identity.CreateCustomerRequest, 'platformId'>;

let h: Harness;
beforeAll(async () => {
  h = await startIdentity('customers');
});
afterAll(async () => {
  await h?.stop();
});

function individual(over: Partial<CreateInput> = {}): CreateInput {
  return {
    customerType: CustomerType.INDIVIDUAL,
    platformCustomerId: `ind-${Math.random().toString(36).slice(2)}`,
    region: 'US',
    currencies: ['USD', 'USDC'],
    email: 'jane@example.com',
    fullName: 'Jane Smith',
    birthDate: '1990-01-15',
    nationality: 'US',
    address: { line1: '1 Market St', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' },
    ...over,
  };
}

function business(over: Partial<CreateInput> = {}): CreateInput {
  return {
    customerType: CustomerType.BUSINESS,
    platformCustomerId: `biz-${Math.random().toString(36).slice(2)}`,
    region: 'US',
    currencies: ['USD'],
    businessInfo: {
      legalName: 'Acme Corporation',
      doingBusinessAs: 'Acme',
      country: 'US',
      registrationNumber: '5523041',
      incorporatedOn: '2018-03-14',
      entityType: 'LLC',
      taxId: '47-1234567',
      countriesOfOperation: ['US'],
      businessType: 'INFORMATION',
      purposeOfAccount: 'CONTRACTOR_PAYOUTS',
      expectedMonthlyTransactionCount: 'COUNT_100_TO_500',
      expectedMonthlyTransactionVolume: 'VOLUME_100K_TO_1M',
      expectedRecipientJurisdictions: ['US', 'MX'],
    },
    address: { line1: '123 Market Street', postalCode: '94105', country: 'US' },
    ...over,
  };
}

async function create(p: TestPlatform, input: CreateInput): Promise<identity.Customer> {
  h.clock.advance(1000);
  return (await h.client.createCustomer({ platformId: p.id, ...input })).customer!;
}

describe('creating customers', () => {
  it('creates an individual with an UNVERIFIED KYC status, a generated UMA address and a CUSTOMER.CREATED event', async () => {
    const p = await newPlatform(h.client);
    const c = await create(p, individual({ platformCustomerId: 'ind-9f84e0c2' }));
    expect(c).toMatchObject({
      platformId: p.id,
      platformCustomerId: 'ind-9f84e0c2',
      customerType: CustomerType.INDIVIDUAL,
      kycStatus: VerificationStatus.UNVERIFIED,
      kybStatus: VerificationStatus.UNSPECIFIED,
      region: 'US',
      currencies: ['USD', 'USDC'],
      fullName: 'Jane Smith',
      birthDate: '1990-01-15',
      address: { line1: '1 Market St', postalCode: '94105', country: 'US' },
      isDeleted: false,
    });
    expect(c.id).toMatch(/^Customer:[0-9a-f-]{36}$/);
    expect(c.umaAddress).toMatch(/^\$u[a-z2-7]{13}@sandbox\.sluice\.test$/);
    expect(await h.client.getCustomer({ platformId: p.id, customerId: c.id })).toEqual({ customer: c });
    const events = (await outbox(h.sql, p.id)).filter((e) => e.type.startsWith('CUSTOMER.'));
    expect(events).toEqual([
      {
        type: 'CUSTOMER.CREATED',
        envelope: expect.objectContaining({
          platformId: p.id,
          data: {
            customerId: c.id,
            customerType: 'INDIVIDUAL',
            platformCustomerId: 'ind-9f84e0c2',
            currencies: ['USD', 'USDC'],
            umaAddress: c.umaAddress,
            environment: 'SANDBOX',
            embeddedWalletCurrencies: [],
          },
        }),
      },
    ]);
  });

  it('creates a business with its business info and an UNVERIFIED KYB status', async () => {
    const p = await newPlatform(h.client);
    const c = await create(p, business({ umaAddress: '$Acme.Payouts@Pay.Example.com' }));
    expect(c).toMatchObject({
      customerType: CustomerType.BUSINESS,
      kybStatus: VerificationStatus.UNVERIFIED,
      kycStatus: VerificationStatus.UNSPECIFIED,
      umaAddress: '$acme.payouts@pay.example.com',
      businessInfo: {
        legalName: 'Acme Corporation',
        registrationNumber: '5523041',
        entityType: 'LLC',
        expectedRecipientJurisdictions: ['US', 'MX'],
      },
    });
    expect(c.fullName).toBeUndefined();
  });

  it('defaults currencies to the platform’s and generates the UMA address on the platform’s domain', async () => {
    const p = await newPlatform(h.client);
    await h.client.updatePlatformConfig({
      platformId: p.id,
      umaDomain: 'uma.acme.com',
      supportedCurrencies: {
        currencies: ['EUR', 'USDC', 'MXN'].map((currencyCode) => ({
          currencyCode,
          requiredCounterpartyFields: [],
          enabledTransactionTypes: [],
        })),
      },
      clearEmbeddedWalletConfig: false,
    });
    const c = await create(p, individual({ currencies: [], platformCustomerId: undefined }));
    expect(c.currencies).toEqual(['EUR', 'USDC', 'MXN']);
    expect(c.umaAddress).toMatch(/@uma\.acme\.com$/);
    expect(c.platformCustomerId).toBe(c.id.slice('Customer:'.length));
  });

  it('needs an UMA domain to generate addresses for a production platform', async () => {
    const p = await newPlatform(h.client, Environment.PRODUCTION);
    expect(await rejection(create(p, individual()))).toMatchObject({
      kind: 'FAILED_PRECONDITION',
      code: 'UMA_DOMAIN_NOT_CONFIGURED',
    });
    const c = await create(p, individual({ umaAddress: '$jane@pay.example.com' }));
    expect(c.umaAddress).toBe('$jane@pay.example.com');
  });

  it('answers 409 for a duplicate platformCustomerId or UMA address of a live customer', async () => {
    const p = await newPlatform(h.client);
    const first = await create(
      p,
      individual({ platformCustomerId: 'dup-1', umaAddress: '$jane@x.example.com' }),
    );
    const dup = await rejection(create(p, individual({ platformCustomerId: 'dup-1' })));
    expect(dup).toMatchObject({
      kind: 'ALREADY_EXISTS',
      code: 'CUSTOMER_ALREADY_EXISTS',
      details: { platformCustomerId: 'dup-1', customerId: first.id },
    });
    const uma = await rejection(create(p, individual({ umaAddress: '$JANE@x.example.com' })));
    expect(uma).toMatchObject({ kind: 'ALREADY_EXISTS', code: 'UMA_ADDRESS_EXISTS' });
    const count = await h.sql.query('SELECT count(*)::int AS n FROM customers WHERE platform_id = $1', [
      p.id,
    ]);
    expect(count.rows[0].n).toBe(1);
    expect((await outbox(h.sql, p.id)).filter((e) => e.type === 'CUSTOMER.CREATED')).toHaveLength(1);

    // Another platform may use the same ids.
    const q = await newPlatform(h.client);
    await create(q, individual({ platformCustomerId: 'dup-1', umaAddress: '$jane@x.example.com' }));
    // A deleted customer frees them.
    await h.client.deleteCustomer({ platformId: p.id, customerId: first.id });
    const again = await create(
      p,
      individual({ platformCustomerId: 'dup-1', umaAddress: '$jane@x.example.com' }),
    );
    expect(again.id).not.toBe(first.id);
  });

  it('lets exactly one of concurrent creations with the same platformCustomerId win', async () => {
    const p = await newPlatform(h.client);
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, () =>
        h.client.createCustomer({ platformId: p.id, ...individual({ platformCustomerId: 'race' }) }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results)
      if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'CUSTOMER_ALREADY_EXISTS' });
    expect((await outbox(h.sql, p.id)).filter((e) => e.type === 'CUSTOMER.CREATED')).toHaveLength(1);
  });

  it('returns the first customer for a repeated request key, also when the repeats race', async () => {
    const p = await newPlatform(h.client);
    const input = individual({ platformCustomerId: undefined });
    const first = await h.client.createCustomer({ platformId: p.id, ...input, requestKey: 'idem-1' });
    const again = await h.client.createCustomer({ platformId: p.id, ...input, requestKey: 'idem-1' });
    expect(first.replayed).toBe(false);
    expect(again).toEqual({ customer: first.customer, replayed: true });
    const racing = await Promise.all(
      Array.from({ length: 4 }, () =>
        h.client.createCustomer({ platformId: p.id, ...input, requestKey: 'idem-2' }),
      ),
    );
    expect(new Set(racing.map((r) => r.customer!.id)).size).toBe(1);
    expect(racing.filter((r) => !r.replayed)).toHaveLength(1);
    expect((await outbox(h.sql, p.id)).filter((e) => e.type === 'CUSTOMER.CREATED')).toHaveLength(2);
    // Keys are per platform.
    const q = await newPlatform(h.client);
    expect(
      (await h.client.createCustomer({ platformId: q.id, ...input, requestKey: 'idem-1' })).replayed,
    ).toBe(false);
    expect(
      fieldsOf(
        await rejection(h.client.createCustomer({ platformId: p.id, ...input, requestKey: 'has space' })),
      ),
    ).toEqual(['requestKey']);
  });

  it('rejects bad input naming each field, and creates nothing', async () => {
    const p = await newPlatform(h.client);
    const cases: [CreateInput, string[]][] = [
      [individual({ customerType: CustomerType.UNSPECIFIED }), ['customerType']],
      [individual({ region: 'USA', nationality: 'XX' }), ['region', 'nationality']],
      [
        individual({ currencies: ['USD', 'DOGE', 'EUR', 'USD'] }),
        ['currencies[1]', 'currencies[2]', 'currencies[3]'],
      ],
      [individual({ email: 'not-an-email' }), ['email']],
      [individual({ umaAddress: 'jane@example.com' }), ['umaAddress']],
      [individual({ umaAddress: '$ja ne@example.com' }), ['umaAddress']],
      [individual({ birthDate: '1990-02-30' }), ['birthDate']],
      [individual({ birthDate: '2999-01-01' }), ['birthDate']],
      [individual({ fullName: '   ' }), ['fullName']],
      [individual({ platformCustomerId: 'x'.repeat(256) }), ['platformCustomerId']],
      [
        individual({ address: { line1: '', postalCode: '', country: 'ZZ' } }),
        ['address.line1', 'address.postalCode', 'address.country'],
      ],
      [
        individual({
          businessInfo: { legalName: 'Nope', countriesOfOperation: [], expectedRecipientJurisdictions: [] },
        }),
        ['businessInfo'],
      ],
      [business({ fullName: 'Jane', businessInfo: undefined }), ['fullName', 'businessInfo.legalName']],
      [
        business({
          businessInfo: {
            legalName: 'A',
            entityType: 'LLP',
            businessType: 'FARMING',
            countriesOfOperation: ['US', 'U1'],
            expectedRecipientJurisdictions: [],
          },
        }),
        ['businessInfo.entityType', 'businessInfo.businessType', 'businessInfo.countriesOfOperation[1]'],
      ],
    ];
    for (const [input, fields] of cases) {
      const e = await rejection(create(p, input));
      expect(fieldsOf(e).sort(), JSON.stringify(input)).toEqual([...fields].sort());
    }
    expect(
      (
        await h.client.listCustomers({
          platformId: p.id,
          customerType: CustomerType.UNSPECIFIED,
          isIncludingDeleted: true,
          page: { limit: 0 },
        })
      ).page!.totalCount,
    ).toBe(0);
    expect((await outbox(h.sql, p.id)).filter((e) => e.type.startsWith('CUSTOMER.'))).toHaveLength(0);
  });
});

describe('listing customers', () => {
  let p: TestPlatform;
  const c: identity.Customer[] = [];
  beforeAll(async () => {
    p = await newPlatform(h.client);
    await h.client.updatePlatformConfig({
      platformId: p.id,
      supportedCurrencies: {
        currencies: ['USD', 'USDC', 'EUR', 'MXN'].map((currencyCode) => ({
          currencyCode,
          requiredCounterpartyFields: [],
          enabledTransactionTypes: [],
        })),
      },
      clearEmbeddedWalletConfig: false,
    });
    c.push(await create(p, individual({ platformCustomerId: 'a', region: 'US', currencies: ['USD'] })));
    c.push(
      await create(
        p,
        individual({
          platformCustomerId: 'b',
          region: 'MX',
          currencies: ['MXN', 'USDC'],
          umaAddress: '$bea@mx.example.com',
        }),
      ),
    );
    c.push(await create(p, business({ platformCustomerId: 'c', region: 'US', currencies: ['USD', 'EUR'] })));
    c.push(await create(p, individual({ platformCustomerId: 'd', region: 'DE', currencies: ['EUR'] })));
    c.push(await create(p, business({ platformCustomerId: 'e', region: 'MX', currencies: ['USDC'] })));
    h.clock.advance(1000);
    await h.client.updateCustomer({
      platformId: p.id,
      customerId: c[0]!.id,
      customerType: CustomerType.INDIVIDUAL,
      email: 'new@example.com',
    });
    h.clock.advance(1000);
    await h.client.deleteCustomer({ platformId: p.id, customerId: c[3]!.id });
    // Another platform's customers never show up.
    const other = await newPlatform(h.client);
    await create(other, individual({ platformCustomerId: 'a', region: 'US', currencies: ['USD'] }));
  });

  async function ids(filter: Partial<identity.ListCustomersRequest>): Promise<string[]> {
    const r = await h.client.listCustomers({
      platformId: p.id,
      customerType: CustomerType.UNSPECIFIED,
      isIncludingDeleted: false,
      page: { limit: 100 },
      ...filter,
    });
    expect(r.page!.totalCount).toBe(r.customers.length);
    return r.customers.map((x) => x.platformCustomerId);
  }

  it('lists live customers newest first', async () => {
    expect(await ids({})).toEqual(['e', 'c', 'b', 'a']);
    expect(await ids({ isIncludingDeleted: true })).toEqual(['e', 'd', 'c', 'b', 'a']);
  });

  it('filters by every listed criterion', async () => {
    expect(await ids({ platformCustomerId: 'b' })).toEqual(['b']);
    expect(await ids({ platformCustomerId: 'd' })).toEqual([]);
    expect(await ids({ platformCustomerId: 'd', isIncludingDeleted: true })).toEqual(['d']);
    expect(await ids({ customerType: CustomerType.BUSINESS })).toEqual(['e', 'c']);
    expect(await ids({ customerType: CustomerType.INDIVIDUAL })).toEqual(['b', 'a']);
    expect(await ids({ region: 'MX' })).toEqual(['e', 'b']);
    expect(await ids({ currency: 'USDC' })).toEqual(['e', 'b']);
    expect(await ids({ currency: 'EUR', isIncludingDeleted: true })).toEqual(['d', 'c']);
    expect(await ids({ umaAddress: '$BEA@mx.example.com' })).toEqual(['b']);
    // Inclusive bounds on createdAt and updatedAt.
    expect(await ids({ createdAfter: c[1]!.createdAt, createdBefore: c[2]!.createdAt })).toEqual(['c', 'b']);
    expect(await ids({ createdAfter: c[4]!.createdAt })).toEqual(['e']);
    expect(await ids({ createdBefore: c[0]!.createdAt })).toEqual(['a']);
    expect(await ids({ updatedAfter: new Date(c[4]!.createdAt!.getTime() + 1) })).toEqual(['a']);
    expect(await ids({ updatedBefore: c[1]!.updatedAt })).toEqual(['b']);
    expect(await ids({ region: 'US', customerType: CustomerType.BUSINESS, currency: 'EUR' })).toEqual(['c']);
  });

  it('rejects bad filters', async () => {
    const base = {
      platformId: p.id,
      customerType: CustomerType.UNSPECIFIED,
      isIncludingDeleted: false,
      page: { limit: 10 },
    };
    expect(
      fieldsOf(
        await rejection(
          h.client.listCustomers({ ...base, region: 'usa', currency: 'DOGE', umaAddress: 'nope' }),
        ),
      ),
    ).toEqual(['region', 'currency', 'umaAddress']);
    expect(
      fieldsOf(
        await rejection(
          h.client.listCustomers({
            ...base,
            updatedAfter: new Date('2026-03-01'),
            updatedBefore: new Date('2026-02-01'),
          }),
        ),
      ),
    ).toEqual(['updatedBefore']);
    expect(fieldsOf(await rejection(h.client.listCustomers({ ...base, page: { limit: 1000 } })))).toEqual(['limit']);
    expect(fieldsOf(await rejection(h.client.listCustomers({ ...base, page: { cursor: 'eyJ2IjoxfQ' } })))).toEqual([
      'cursor',
    ]);
  });

  it('pages with a keyset cursor and a stable totalCount', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await h.client.listCustomers({
        platformId: p.id,
        customerType: CustomerType.UNSPECIFIED,
        isIncludingDeleted: true,
        page: { limit: 2, cursor },
      });
      expect(r.page!.totalCount).toBe(5);
      expect(r.customers.length).toBeLessThanOrEqual(2);
      expect(r.page!.hasMore).toBe(r.page!.nextCursor !== undefined);
      seen.push(...r.customers.map((x) => x.platformCustomerId));
      cursor = r.page!.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(['e', 'd', 'c', 'b', 'a']);
  });

  it('orders customers created in the same millisecond by id', async () => {
    const q = await newPlatform(h.client);
    const made: string[] = [];
    for (let i = 0; i < 3; i++)
      made.push((await h.client.createCustomer({ platformId: q.id, ...individual() })).customer!.id);
    const first = await h.client.listCustomers({
      platformId: q.id,
      customerType: CustomerType.UNSPECIFIED,
      isIncludingDeleted: false,
      page: { limit: 2 },
    });
    const rest = await h.client.listCustomers({
      platformId: q.id,
      customerType: CustomerType.UNSPECIFIED,
      isIncludingDeleted: false,
      page: { limit: 2, cursor: first.page!.nextCursor },
    });
    expect([...first.customers, ...rest.customers].map((x) => x.id)).toEqual([...made].sort().reverse());
  });
});

describe('updating and deleting customers', () => {
  it('updates the given fields and emits CUSTOMER.UPDATED; an empty change emits nothing', async () => {
    const p = await newPlatform(h.client);
    const c = await create(p, individual({ currencies: ['USD'] }));
    h.clock.advance(5000);
    const { customer } = await h.client.updateCustomer({
      platformId: p.id,
      customerId: c.id,
      customerType: CustomerType.INDIVIDUAL,
      fullName: 'Jane Q. Smith',
      currencies: { codes: ['USD', 'USDC'] },
      umaAddress: '$Jane.Smith@pay.example.com',
      address: { line1: '456 Market St', postalCode: '94103', country: 'US' },
    });
    expect(customer).toMatchObject({
      fullName: 'Jane Q. Smith',
      currencies: ['USD', 'USDC'],
      umaAddress: '$jane.smith@pay.example.com',
      birthDate: '1990-01-15',
      address: { line1: '456 Market St', postalCode: '94103', country: 'US' },
      region: 'US',
      createdAt: c.createdAt,
    });
    expect(customer!.address!.city).toBeUndefined();
    expect(customer!.updatedAt!.getTime()).toBe(c.createdAt!.getTime() + 5000);
    const updated = (await outbox(h.sql, p.id)).filter((e) => e.type === 'CUSTOMER.UPDATED');
    expect(updated.map((e) => e.envelope.data)).toEqual([
      {
        customerId: c.id,
        customerType: 'INDIVIDUAL',
        platformCustomerId: c.platformCustomerId,
        currencies: ['USD', 'USDC'],
        umaAddress: '$jane.smith@pay.example.com',
        environment: 'SANDBOX',
        embeddedWalletCurrencies: [],
      },
    ]);
    h.clock.advance(5000);
    const same = await h.client.updateCustomer({
      platformId: p.id,
      customerId: c.id,
      customerType: CustomerType.INDIVIDUAL,
      fullName: 'Jane Q. Smith',
    });
    expect(same.customer!.updatedAt).toEqual(customer!.updatedAt);
    expect((await outbox(h.sql, p.id)).filter((e) => e.type === 'CUSTOMER.UPDATED')).toHaveLength(1);
  });

  it('merges business info and validates updates', async () => {
    const p = await newPlatform(h.client);
    const b = await create(p, business());
    const { customer } = await h.client.updateCustomer({
      platformId: p.id,
      customerId: b.id,
      customerType: CustomerType.BUSINESS,
      businessInfo: {
        legalName: 'New Tech Solutions LLC',
        countriesOfOperation: [],
        expectedRecipientJurisdictions: [],
      },
    });
    expect(customer!.businessInfo).toMatchObject({
      legalName: 'New Tech Solutions LLC',
      registrationNumber: '5523041',
      taxId: '47-1234567',
    });

    const base = { platformId: p.id, customerId: b.id };
    expect(
      fieldsOf(await rejection(h.client.updateCustomer({ ...base, customerType: CustomerType.INDIVIDUAL }))),
    ).toEqual(['customerType']);
    expect(
      fieldsOf(
        await rejection(
          h.client.updateCustomer({
            ...base,
            customerType: CustomerType.BUSINESS,
            fullName: 'X',
            currencies: { codes: ['JPY'] },
          }),
        ),
      ),
    ).toEqual(['currencies[0]', 'fullName']);
    expect(
      fieldsOf(
        await rejection(
          h.client.updateCustomer({
            ...base,
            customerType: CustomerType.BUSINESS,
            currencies: { codes: [] },
          }),
        ),
      ),
    ).toEqual(['currencies']);
    expect((await h.client.getCustomer(base)).customer).toEqual(customer);
  });

  it('refuses an UMA address another live customer has', async () => {
    const p = await newPlatform(h.client);
    const a = await create(p, individual({ umaAddress: '$taken@pay.example.com' }));
    const b = await create(p, individual());
    expect(
      await rejection(
        h.client.updateCustomer({
          platformId: p.id,
          customerId: b.id,
          customerType: CustomerType.INDIVIDUAL,
          umaAddress: a.umaAddress,
        }),
      ),
    ).toMatchObject({ kind: 'ALREADY_EXISTS', code: 'UMA_ADDRESS_EXISTS' });
  });

  it('soft-deletes: still readable with isDeleted, 410-style error on a second delete or an update', async () => {
    const p = await newPlatform(h.client);
    const c = await create(p, individual());
    h.clock.advance(1000);
    const { customer } = await h.client.deleteCustomer({ platformId: p.id, customerId: c.id });
    expect(customer).toMatchObject({ id: c.id, isDeleted: true, deletedAt: h.clock.now() });
    expect((await h.client.getCustomer({ platformId: p.id, customerId: c.id })).customer!.isDeleted).toBe(
      true,
    );
    expect(await rejection(h.client.deleteCustomer({ platformId: p.id, customerId: c.id }))).toMatchObject({
      kind: 'FAILED_PRECONDITION',
      code: 'CUSTOMER_DELETED',
    });
    expect(
      await rejection(
        h.client.updateCustomer({
          platformId: p.id,
          customerId: c.id,
          customerType: CustomerType.INDIVIDUAL,
          fullName: 'X',
        }),
      ),
    ).toMatchObject({ code: 'CUSTOMER_DELETED' });
    expect(
      (await outbox(h.sql, p.id)).filter((e) => e.type === 'CUSTOMER.DELETED').map((e) => e.envelope.data),
    ).toEqual([{ customerId: c.id }]);
  });

  it('answers NOT_FOUND for another platform’s customer', async () => {
    const a = await newPlatform(h.client);
    const b = await newPlatform(h.client);
    const c = await create(a, individual());
    const ref = { platformId: b.id, customerId: c.id };
    for (const call of [
      () => h.client.getCustomer(ref),
      () => h.client.updateCustomer({ ...ref, customerType: CustomerType.INDIVIDUAL, fullName: 'Mallory' }),
      () => h.client.deleteCustomer(ref),
    ]) {
      expect(await rejection(call())).toMatchObject({ kind: 'NOT_FOUND', code: 'CUSTOMER_NOT_FOUND' });
    }
    expect((await h.client.getCustomer({ platformId: a.id, customerId: c.id })).customer).toEqual(c);
    expect(
      fieldsOf(await rejection(h.client.getCustomer({ platformId: a.id, customerId: 'Customer:xyz' }))),
    ).toEqual(['customerId']);
  });
});

describe('kycStatus / kybStatus set by a platform that verifies its own customers', () => {
  const regulated = () =>
    newPlatform(h.client, Environment.SANDBOX, undefined, { isRegulatedFinancialInstitution: true });
  const events = async (p: TestPlatform) =>
    (await outbox(h.sql, p.id))
      .filter((e) => e.type.startsWith('CUSTOMER.'))
      .map((e) => ({ type: e.type, data: e.envelope.data }));

  it('is the operator’s flag of the platform, shown by its config and set only when the platform is created', async () => {
    const p = await regulated();
    const cfg = await h.client.getPlatformConfig({ platformId: p.id });
    expect(cfg.config!.isRegulatedFinancialInstitution).toBe(true);
    const ordinary = await newPlatform(h.client);
    expect((await h.client.getPlatformConfig({ platformId: ordinary.id })).config!.isRegulatedFinancialInstitution).toBe(false);
  });

  it('applies a status given at creation as a change: CUSTOMER.CREATED, then the KYC/KYB webhook', async () => {
    const p = await regulated();
    const c = await create(p, individual({ verificationStatus: VerificationStatus.APPROVED }));
    expect(c).toMatchObject({ kycStatus: VerificationStatus.APPROVED, kybStatus: VerificationStatus.UNSPECIFIED });
    expect((await h.client.getCustomer({ platformId: p.id, customerId: c.id })).customer).toEqual(c);
    const kinds = await events(p);
    expect(kinds.map((e) => e.type)).toEqual(['CUSTOMER.CREATED', 'CUSTOMER.KYC_APPROVED']);
    expect(kinds[1]!.data).toMatchObject({ id: c.id, customerType: 'INDIVIDUAL', kycStatus: 'APPROVED' });

    const b = await create(p, business({ verificationStatus: VerificationStatus.PENDING }));
    expect(b).toMatchObject({ kybStatus: VerificationStatus.PENDING, kycStatus: VerificationStatus.UNSPECIFIED });
    expect((await events(p)).at(-1)).toMatchObject({
      type: 'CUSTOMER.KYB_PENDING',
      data: { id: b.id, customerType: 'BUSINESS', kybStatus: 'PENDING' },
    });
    // UNVERIFIED, the status a customer starts with, is no change and has no webhook.
    const u = await create(p, individual({ verificationStatus: VerificationStatus.UNVERIFIED }));
    expect(u.kycStatus).toBe(VerificationStatus.UNVERIFIED);
    expect((await events(p)).at(-1)).toMatchObject({ type: 'CUSTOMER.CREATED' });
  });

  it('changes it on update through the path compliance’s decisions take; the same status again sends nothing', async () => {
    const p = await regulated();
    const c = await create(p, individual());
    const before = (await events(p)).length;
    h.clock.advance(1000);
    const set = (over: Partial<identity.UpdateCustomerRequest>) =>
      h.client.updateCustomer({ platformId: p.id, customerId: c.id, customerType: CustomerType.INDIVIDUAL, ...over });
    const rejected = (await set({ verificationStatus: VerificationStatus.REJECTED })).customer!;
    expect(rejected).toMatchObject({ kycStatus: VerificationStatus.REJECTED, updatedAt: h.clock.now() });
    expect((await events(p)).slice(before)).toEqual([
      { type: 'CUSTOMER.KYC_REJECTED', data: expect.objectContaining({ id: c.id, kycStatus: 'REJECTED' }) },
    ]);
    h.clock.advance(1000);
    expect((await set({ verificationStatus: VerificationStatus.REJECTED })).customer).toEqual(rejected);
    expect(await events(p)).toHaveLength(before + 1);
    // Another field and the status: CUSTOMER.UPDATED, then the status webhook with the whole customer.
    const both = (await set({ email: 'new@example.com', verificationStatus: VerificationStatus.APPROVED })).customer!;
    expect(both).toMatchObject({ email: 'new@example.com', kycStatus: VerificationStatus.APPROVED });
    expect((await events(p)).slice(before + 1)).toEqual([
      { type: 'CUSTOMER.UPDATED', data: expect.objectContaining({ customerId: c.id }) },
      {
        type: 'CUSTOMER.KYC_APPROVED',
        data: expect.objectContaining({ id: c.id, email: 'new@example.com', kycStatus: 'APPROVED' }),
      },
    ]);
  });

  it('is refused from a platform that is not a regulated financial institution, and changes nothing', async () => {
    const p = await newPlatform(h.client);
    expect(
      fieldsOf(await rejection(h.client.createCustomer({ platformId: p.id, ...individual({ verificationStatus: VerificationStatus.APPROVED }) }))),
    ).toEqual(['kycStatus']);
    expect(
      fieldsOf(await rejection(h.client.createCustomer({ platformId: p.id, ...business({ verificationStatus: VerificationStatus.APPROVED }) }))),
    ).toEqual(['kybStatus']);
    expect(await events(p)).toEqual([]);
    const c = await create(p, individual());
    const before = await events(p);
    const e = await rejection(
      h.client.updateCustomer({
        platformId: p.id,
        customerId: c.id,
        customerType: CustomerType.INDIVIDUAL,
        email: 'changed@example.com',
        verificationStatus: VerificationStatus.APPROVED,
      }),
    );
    expect(fieldsOf(e)).toEqual(['kycStatus']);
    expect(e.details!.errors).toEqual([
      { field: 'kycStatus', message: expect.stringContaining('isRegulatedFinancialInstitution') },
    ]);
    expect((await h.client.getCustomer({ platformId: p.id, customerId: c.id })).customer).toEqual(c);
    expect(await events(p)).toEqual(before);
  });
});
