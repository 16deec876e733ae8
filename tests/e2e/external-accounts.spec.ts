/**
 * End to end: external accounts of every variant of the reference document through the real
 * processes (gateway → accounts, identity): each created account, its GET and the list answer
 * the reference's ExternalAccount / ExternalAccountListResponse schemas (ajv over the reference
 * document itself); the sandbox beneficiary-verification suffixes on the new variants; bad input
 * of every kind answered 400 naming the field, with nothing stored. Beside them, in the same stack:
 * `GET /discoveries` (the institutions whose bankName the variants take) and
 * `POST /crypto/estimate-withdrawal-fee` (the destination checked by the wallet variants' grammar).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@sluice/testing';
import { EXTERNAL_ACCOUNT_TYPES, paymentRailsOf, type ExternalAccountType } from '@sluice/core';
import {
  BUSINESS_BENEFICIARY,
  EXTERNAL_ACCOUNT_EXAMPLES,
  exampleWith,
  INDIVIDUAL_BENEFICIARY,
  individualWith,
  withSuffix,
} from '@sluice/testing/external-accounts';
import { referenceValidator } from '@sluice/testing/reference';
import { accountRightAfterCreate, apiClient, newCredential, startE2eStack, type Api, type E2eStack } from './support.js';

describe('external accounts of every variant through the real processes', () => {
  let e2e: E2eStack;
  let client: Api;
  let customerId: string;
  const sandbox = newCredential();
  const externalAccount = referenceValidator('ExternalAccount');
  const list = referenceValidator('ExternalAccountListResponse');

  const api = (method: string, path: string, body?: unknown) => client(method, path, { body });
  const create = (
    type: ExternalAccountType,
    accountInfo: Record<string, unknown>,
    currency?: string,
    owner = customerId,
  ) =>
    api('POST', '/customers/external-accounts', {
      customerId: owner,
      currency: currency ?? EXTERNAL_ACCOUNT_EXAMPLES[type].currency,
      accountInfo,
    });
  const countOf = async (owner: string) =>
    (await api('GET', `/customers/external-accounts?customerId=${encodeURIComponent(owner)}&limit=1`)).json
      .totalCount as number;
  const newCustomer = async (platformCustomerId: string) => {
    const c = await api('POST', '/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId,
      fullName: 'Maria Silva',
      region: 'US',
      currencies: ['USD'],
    });
    expect(c.status, c.text).toBe(201);
    return c.json.id as string;
  };

  beforeAll(async () => {
    e2e = await startE2eStack(
      'e2eextacc',
      { sandbox },
      { migrate: false, env: { SANDBOX_TIME_SCALE: '0.01' } },
    );
    client = apiClient(e2e.stack, sandbox);
    customerId = await newCustomer('ext-accounts-user');
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
  });

  it('creates one account of each of the 43 variants: 201, the reference’s ExternalAccount, with its rails and beneficiary; GET and the list agree', async () => {
    const made: Record<string, unknown>[] = [];
    for (const type of EXTERNAL_ACCOUNT_TYPES) {
      const { accountInfo } = EXTERNAL_ACCOUNT_EXAMPLES[type];
      const r = await create(type, accountInfo);
      expect(r.status, `${type}: ${r.text}`).toBe(201);
      expect(externalAccount(r.json), `${type}: ${JSON.stringify(r.json)}`).toEqual([]);
      const bank = paymentRailsOf(type).length > 0;
      expect(r.json).toMatchObject({
        customerId,
        status: 'ACTIVE',
        currency: EXTERNAL_ACCOUNT_EXAMPLES[type].currency,
        beneficiaryVerificationStatus: 'MATCHED',
        beneficiaryVerifiedData: { fullName: bank ? 'Ada Lovelace' : 'Maria Silva' },
        accountInfo,
      });
      if (bank) expect(r.json.accountInfo.paymentRails.length, type).toBeGreaterThan(0);
      else expect(r.json.accountInfo.paymentRails, type).toBeUndefined();
      const g = await api('GET', `/customers/external-accounts/${encodeURIComponent(r.json.id)}`);
      expect(g.status).toBe(200);
      expect(g.json).toEqual(r.json);
      made.push(r.json);
    }
    const all = await api(
      'GET',
      `/customers/external-accounts?customerId=${encodeURIComponent(customerId)}&limit=100`,
    );
    expect(all.status).toBe(200);
    expect(list(all.json)).toEqual([]);
    expect(all.json.data).toEqual(made);
    // a filter on a currency Sluice knows only for external accounts
    const kes = await api(
      'GET',
      `/customers/external-accounts?customerId=${encodeURIComponent(customerId)}&currency=KES`,
    );
    expect(
      kes.json.data.map((a: { accountInfo: { accountType: string } }) => a.accountInfo.accountType),
    ).toEqual(['KES_ACCOUNT']);
  });

  it('platform accounts and a business beneficiary; rails chosen by the request or by the fields given', async () => {
    const plat = await api('POST', '/platform/external-accounts', {
      currency: 'SGD',
      accountInfo: {
        ...EXTERNAL_ACCOUNT_EXAMPLES.SGD_ACCOUNT.accountInfo,
        paymentRails: ['FAST'],
        beneficiary: BUSINESS_BENEFICIARY,
      },
    });
    expect(plat.status, plat.text).toBe(201);
    expect(externalAccount(plat.json)).toEqual([]);
    expect(plat.json.accountInfo).toMatchObject({
      paymentRails: ['FAST'],
      beneficiary: BUSINESS_BENEFICIARY,
    });
    expect(plat.json.beneficiaryVerifiedData).toEqual({ fullName: BUSINESS_BENEFICIARY.legalName });
    const platList = await api('GET', '/platform/external-accounts?currency=SGD');
    expect(list(platList.json)).toEqual([]);
    expect(platList.json.data).toEqual([plat.json]);

    const owner = await newCustomer('ext-accounts-rails');
    const mobile = await create(
      'PKR_ACCOUNT',
      {
        accountType: 'PKR_ACCOUNT',
        phoneNumber: '+92 300 1234567',
        bankName: 'JazzCash',
        beneficiary: INDIVIDUAL_BENEFICIARY,
      },
      'PKR',
      owner,
    );
    expect(mobile.status, mobile.text).toBe(201);
    expect(mobile.json.accountInfo).toMatchObject({
      phoneNumber: '+923001234567',
      paymentRails: ['MOBILE_MONEY'],
    });
    expect(externalAccount(mobile.json)).toEqual([]);
  });

  it('the sandbox beneficiary-verification suffix of each kind of primary identifier (105: 400 naming it, nothing stored)', async () => {
    const owner = await newCustomer('ext-accounts-suffixes');
    const rows: [ExternalAccountType, string, string][] = [
      ['KES_ACCOUNT', '102', 'NOT_MATCHED'],
      ['INR_ACCOUNT', '103', 'PARTIAL_MATCH'],
      ['CAD_ACCOUNT', '104', 'PENDING'],
      ['AED_ACCOUNT', '106', 'UNSUPPORTED'],
      ['XOF_ACCOUNT', '107', 'CHECKED_BY_RECEIVING_FI'],
      ['MXN_ACCOUNT', '108', 'MATCHED'],
    ];
    for (const [type, suffix, status] of rows) {
      const { currency, accountInfo } = withSuffix(type, suffix);
      const r = await create(type, accountInfo, currency, owner);
      expect(r.status, `${type}: ${r.text}`).toBe(201);
      expect(r.json.beneficiaryVerificationStatus, type).toBe(status);
      expect(externalAccount(r.json)).toEqual([]);
      if (status === 'PARTIAL_MATCH')
        expect(r.json.beneficiaryVerifiedData).toEqual({ fullName: 'A. Lovelace' });
    }
    const before = await countOf(owner);
    for (const [type, field] of [
      ['DKK_ACCOUNT', 'accountInfo.iban'],
      ['TZS_ACCOUNT', 'accountInfo.phoneNumber'],
      ['INR_ACCOUNT', 'accountInfo.vpa'],
      ['NGN_ACCOUNT', 'accountInfo.accountNumber'],
    ] as const) {
      const { currency, accountInfo } = withSuffix(type, '105');
      const r = await create(type, accountInfo, currency, owner);
      expect(r.status, `${type}: ${r.text}`).toBe(400);
      expect(r.json.code).toBe('EXTERNAL_ACCOUNT_INVALID');
      expect(r.json.details.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    }
    expect(await countOf(owner)).toBe(before);
  });

  it('payments use the account: a quote takes the rails it was registered with; a transfer-out to a CAD account follows its sandbox suffix', async () => {
    const cfg = await api('PATCH', '/config', {
      supportedCurrencies: [{ currencyCode: 'USD' }, { currencyCode: 'EUR' }, { currencyCode: 'CAD' }],
    });
    expect(cfg.status, cfg.text).toBe(200);
    const c = await api('POST', '/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'ext-accounts-payer',
      fullName: 'Ada Lovelace',
      currencies: ['USD', 'CAD'],
    });
    expect(c.status, c.text).toBe(201);
    const payer = c.json.id as string;
    const internal = async (currency: string) =>
      (
        await api(
          'GET',
          `/customers/internal-accounts?customerId=${encodeURIComponent(payer)}&currency=${currency}`,
        )
      ).json.data[0].id as string;
    const usd = await internal('USD');

    // EUR account registered for SEPA only: the quote pays on SEPA, SEPA_INSTANT is refused
    const eur = await create(
      'EUR_ACCOUNT',
      { ...EXTERNAL_ACCOUNT_EXAMPLES.EUR_ACCOUNT.accountInfo, paymentRails: ['SEPA'] },
      'EUR',
      payer,
    );
    expect(eur.status, eur.text).toBe(201);
    const quote = (paymentRail?: string) =>
      api('POST', '/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: usd },
        destination: {
          destinationType: 'ACCOUNT',
          accountId: eur.json.id,
          ...(paymentRail ? { paymentRail } : {}),
        },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 1_000,
      });
    const q = await quote();
    expect(q.status, q.text).toBe(201);
    expect(q.json.destination.paymentRail).toBe('SEPA');
    const refused = await quote('SEPA_INSTANT');
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json.details.errors.map((e: { field: string }) => e.field)).toEqual([
      'destination.paymentRail',
    ]);

    // CAD (a new variant): the sandbox rail reads its primary identifier's suffix
    const cad = await internal('CAD');
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(cad)}/fund`, {
      amount: 10_000,
    });
    expect(fund.status, fund.text).toBe(200);
    const transferTo = async (suffix: string) => {
      const { accountInfo } = withSuffix('CAD_ACCOUNT', suffix);
      const ext = await create('CAD_ACCOUNT', accountInfo, 'CAD', payer);
      expect(ext.status, ext.text).toBe(201);
      return client('POST', '/transfer-out', {
        body: { source: { accountId: cad }, destination: { accountId: ext.json.id }, amount: 1_000 },
        headers: { 'idempotency-key': `cad-${suffix}` },
      });
    };
    const ok = await transferTo('789');
    expect(ok.status, ok.text).toBeLessThan(300);
    const failed = await transferTo('002');
    expect(failed.status, failed.text).toBeLessThan(300);
    const statusOf = (id: string) =>
      eventually(async () => {
        const t = await api('GET', `/transactions/${encodeURIComponent(id)}`);
        return ['COMPLETED', 'FAILED'].includes(t.json.status) ? t.json.status : undefined;
      }, 30_000);
    expect(await statusOf(ok.json.id)).toBe('COMPLETED');
    expect(await statusOf(failed.json.id)).toBe('FAILED');
  });

  it('bad input of every kind: 400 INVALID_INPUT naming the field, nothing stored', async () => {
    const owner = await newCustomer('ext-accounts-bad');
    const ex = exampleWith;
    const person = individualWith;
    const cases: [string, ExternalAccountType, Record<string, unknown>, string, string?][] = [
      // the shape (gateway)
      ['unknown accountType', 'USD_ACCOUNT', { accountType: 'CHF_ACCOUNT' }, 'accountInfo.accountType'],
      ['a field of another variant', 'USD_ACCOUNT', { iban: 'DE89370400440532013000' }, 'accountInfo.iban'],
      ['no beneficiary', 'GBP_ACCOUNT', { beneficiary: undefined }, 'accountInfo.beneficiary'],
      ['a required field missing', 'KES_ACCOUNT', { provider: undefined }, 'accountInfo.provider'],
      ['a region outside the zone', 'XAF_ACCOUNT', { region: 'SN' }, 'accountInfo.region'],
      ['a rail not of the variant', 'USD_ACCOUNT', { paymentRails: ['SEPA'] }, 'accountInfo.paymentRails[0]'],
      [
        'a business field on an individual',
        'USD_ACCOUNT',
        { beneficiary: person({ legalName: 'Acme' }) },
        'accountInfo.beneficiary.legalName',
      ],
      // meaning (accounts): checksums, bank codes, countries, lengths
      ['ABA checksum', 'USD_ACCOUNT', { routingNumber: '021000022' }, 'accountInfo.routingNumber'],
      ['IBAN checksum', 'EUR_ACCOUNT', { iban: 'DE89370400440532013001' }, 'accountInfo.iban'],
      ['IBAN of another country', 'AED_ACCOUNT', { iban: 'DE89370400440532013000' }, 'accountInfo.iban'],
      ['CLABE check digit', 'MXN_ACCOUNT', { clabeNumber: '032180000118359718' }, 'accountInfo.clabeNumber'],
      ['CPF check digits', 'BRL_ACCOUNT', { taxId: '12345678900' }, 'accountInfo.taxId'],
      ['institution number length', 'CAD_ACCOUNT', { bankCode: '01' }, 'accountInfo.bankCode'],
      ['NUBAN length', 'NGN_ACCOUNT', { accountNumber: '12345' }, 'accountInfo.accountNumber'],
      ['BIC of another country', 'HKD_ACCOUNT', { swiftCode: 'DBSSSGSG' }, 'accountInfo.swiftCode'],
      [
        'phone of another country',
        'UGX_ACCOUNT',
        { phoneNumber: '+254712345678' },
        'accountInfo.phoneNumber',
      ],
      ['phone outside the region', 'XOF_ACCOUNT', { region: 'CI' }, 'accountInfo.phoneNumber'],
      ['UPI address', 'INR_ACCOUNT', { vpa: 'not-a-vpa' }, 'accountInfo.vpa'],
      [
        'EIP-55 checksum',
        'ETHEREUM_WALLET',
        { address: '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6Fb' },
        'accountInfo.address',
      ],
      [
        'no usable rail',
        'GHS_ACCOUNT',
        { accountNumber: undefined, phoneNumber: undefined },
        'accountInfo.accountNumber',
      ],
      [
        'what the variant requires of the beneficiary',
        'EUR_ACCOUNT',
        { beneficiary: person({ address: undefined }) },
        'accountInfo.beneficiary.address',
      ],
      [
        'a birth date in the future',
        'JMD_ACCOUNT',
        { beneficiary: person({ birthDate: '2999-01-01' }) },
        'accountInfo.beneficiary.birthDate',
      ],
      ['the currency of another variant', 'ZAR_ACCOUNT', {}, 'currency', 'ZMW'],
    ];
    const before = await countOf(owner);
    for (const [what, type, over, field, currency] of cases) {
      const r = await create(type, ex(type, over), currency, owner);
      expect(r.status, `${what}: ${r.text}`).toBe(400);
      expect(r.json.code, what).toBe('INVALID_INPUT');
      expect(
        r.json.details.errors.map((e: { field: string }) => e.field),
        what,
      ).toContain(field);
    }
    expect(await countOf(owner)).toBe(before);
    const rows = await e2e
      .db()
      .query(`SELECT count(*)::int AS n FROM accounts.external_accounts WHERE customer_id = $1`, [owner]);
    expect(rows.rows[0].n).toBe(0);
  });

  it('POST /crypto/estimate-withdrawal-fee: the sandbox fee of a network, the destination checked by the wallet variants’ grammar; bad input 400 naming the field, moving nothing', async () => {
    const cfg = await api('PATCH', '/config', {
      supportedCurrencies: [{ currencyCode: 'USD' }, { currencyCode: 'EUR' }, { currencyCode: 'CAD' }, { currencyCode: 'USDC' }],
    });
    expect(cfg.status, cfg.text).toBe(200);
    const c = await api('POST', '/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'withdrawal-fee-user',
      fullName: 'Satoshi Example',
      currencies: ['USD', 'USDC'],
    });
    expect(c.status, c.text).toBe(201);
    const usdc = await accountRightAfterCreate(client, c.json.id, 'USDC');
    const usd = await accountRightAfterCreate(client, c.json.id, 'USD');
    // The address the SOLANA_WALLET external account takes is the one a withdrawal to SOLANA takes.
    const solana = EXTERNAL_ACCOUNT_EXAMPLES.SOLANA_WALLET.accountInfo.address as string;
    const body = { internalAccountId: usdc, currency: 'USDC', cryptoNetwork: 'SOLANA', amount: 1_000_000, destinationAddress: solana };
    const fee = await api('POST', '/crypto/estimate-withdrawal-fee', body);
    expect(fee.status, fee.text).toBe(200);
    expect(fee.json).toEqual({ networkFee: 5000, networkFeeAsset: 'SOL', applicationFee: 0, totalFee: 1000, netAmount: 999_000 });
    const eth = await api('POST', '/crypto/estimate-withdrawal-fee', {
      ...body,
      cryptoNetwork: 'ETHEREUM',
      amount: 10_000_000,
      destinationAddress: EXTERNAL_ACCOUNT_EXAMPLES.ETHEREUM_WALLET.accountInfo.address,
    });
    expect(eth.status, eth.text).toBe(200);
    expect(eth.json).toMatchObject({ networkFeeAsset: 'ETH', totalFee: 4_550_000, netAmount: 5_450_000 });

    const cases: [string, Record<string, unknown>, string][] = [
      ['a network no variant pays to', { cryptoNetwork: 'DOGECOIN' }, 'cryptoNetwork'],
      ['a currency the network does not carry', { currency: 'BTC' }, 'currency'],
      ['a Solana address on Ethereum', { cryptoNetwork: 'ETHEREUM' }, 'destinationAddress'],
      ['not base58', { destinationAddress: `0${solana.slice(1)}` }, 'destinationAddress'],
      ['a fiat account', { internalAccountId: usd }, 'internalAccountId'],
      ['a malformed account id', { internalAccountId: 'InternalAccount:nope' }, 'internalAccountId'],
      ['a zero amount', { amount: 0 }, 'amount'],
      ['a fractional amount', { amount: 1.5 }, 'amount'],
      ['a missing address', { destinationAddress: undefined }, 'destinationAddress'],
    ];
    for (const [what, over, field] of cases) {
      const r = await api('POST', '/crypto/estimate-withdrawal-fee', { ...body, ...over });
      expect(r.status, `${what}: ${r.text}`).toBe(400);
      expect(r.json.code, what).toBe('INVALID_INPUT');
      expect(r.text, what).toContain(field);
    }
    const small = await api('POST', '/crypto/estimate-withdrawal-fee', { ...body, amount: 1000 });
    expect(small.status, small.text).toBe(400);
    expect(small.json.code).toBe('AMOUNT_OUT_OF_RANGE');
    expect(small.text).toContain('amount');
    const unknown = await api('POST', '/crypto/estimate-withdrawal-fee', {
      ...body,
      internalAccountId: 'InternalAccount:00000000-0000-4000-8000-000000000000',
    });
    expect(unknown.status, unknown.text).toBe(404);
    // An estimate moves nothing: the account's balance is still 0.
    const acct = await api('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(c.json.id)}&currency=USDC`);
    expect(acct.json.data[0].balance.amount).toBe(0);
  });

  it('GET /discoveries: the receiving institutions by country and currency, whose bankName an external account takes; bad filters 400 naming them', async () => {
    const ph = await api('GET', '/discoveries?country=PH&currency=PHP');
    expect(ph.status, ph.text).toBe(200);
    expect(ph.json.data).toContainEqual({ bankName: 'BDO Unibank', displayName: 'BDO Unibank', country: 'PH', currency: 'PHP' });
    expect(ph.json).toMatchObject({ hasMore: false, totalCount: ph.json.data.length });
    // Case-insensitive filters, one filter alone, no filter at all.
    const lower = await api('GET', '/discoveries?country=ph');
    expect(lower.json.data).toEqual(ph.json.data);
    const all = await api('GET', '/discoveries');
    expect(all.json.totalCount).toBeGreaterThan(ph.json.totalCount);
    expect((await api('GET', '/discoveries?country=JP')).json).toEqual({ data: [], hasMore: false, totalCount: 0 });

    // The bankName it gives is what the PHP variant takes.
    const bank = ph.json.data[0].bankName as string;
    const owner = await newCustomer('discoveries-user');
    const created = await create('PHP_ACCOUNT', { ...EXTERNAL_ACCOUNT_EXAMPLES.PHP_ACCOUNT.accountInfo, bankName: bank }, 'PHP', owner);
    expect(created.status, created.text).toBe(201);
    expect(created.json.accountInfo.bankName).toBe(bank);

    for (const [query, field] of [
      ['country=XX', 'country'],
      ['country=PHL', 'country'],
      ['currency=PESO', 'currency'],
      ['country=', 'country'],
    ] as const) {
      const r = await api('GET', `/discoveries?${query}`);
      expect(r.status, `${query}: ${r.text}`).toBe(400);
      expect(r.json.code, query).toBe('INVALID_INPUT');
      expect(r.text, query).toContain(field);
    }
  });
});
