/**
 * End to end: secrets and personal data at rest through the real processes (issue 17). A customer,
 * an external account and a transfer to it, a beneficial owner and its document, a bulk import, a
 * receiver lookup, a quote made from it (with the sender's payer data) and its transaction, a webhook
 * endpoint, a claimed invitation, and an incoming payment the platform approves with its receiver's
 * data made over the public API work as before (GET answers every field, deliveries verify with the
 * secret GET /config shows, the transfer settles by its account number), while their rows — read raw,
 * as a stolen dump would hold them — contain none of the personal data, UMA addresses of invitations,
 * account numbers or signing secrets.
 * `main.ts rewrap` runs as its own process and prints its counts.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { SMALL_PDF, eventually, multipartForm, sendStreaming } from '@sluice/testing';
import { LOCAL_DEV_MASTER_KEYS } from '../../tools/stack.js';
import {
  apiClient,
  basic,
  newCredential,
  startE2eStack,
  startWebhookReceiver,
  type Api,
  type E2eStack,
} from './support.js';

const run = promisify(execFile);

describe('secrets and personal data at rest through the real processes', () => {
  let e2e: E2eStack;
  let api: Api;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const sandbox = newCredential();

  const PERSON = {
    fullName: 'Katherine Johnson',
    email: 'katherine.johnson@example.com',
    birthDate: '1968-08-26',
    nationality: 'US',
    address: { line1: '300 E Street SW', city: 'Washington', postalCode: '20546', country: 'US' },
  };
  const ACCOUNT_NUMBER = '31415926535';
  /** What the platform answers about its receiver when it approves an incoming payment. */
  const RECEIVER_INFO = { FULL_NAME: 'Christine Darden', BIRTH_DATE: '1942-09-10' };
  const ROUTING_NUMBER = '021000021';
  /** Katherine and her external account (the first test), which the transfer test pays. */
  let katherine: { customerId: string; externalAccountId: string };

  /** Every row of `table` matching `where` as text. */
  const dump = async (table: string, where: string, params: unknown[]) =>
    (await e2e.db().query(`SELECT t::text AS row FROM ${table} t WHERE ${where}`, params)).rows
      .map((r) => r.row as string)
      .join('\n');

  beforeAll(async () => {
    // The platform decides incoming payments with POST /transactions/{id}/approve (202 to their webhook).
    receiver = await startWebhookReceiver((w) => ({ status: w.type === 'INCOMING_PAYMENT.PENDING' ? 202 : 200 }));
    e2e = await startE2eStack('e2esecrets', { sandbox }, { migrate: false });
    api = apiClient(e2e.stack, sandbox);
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
    await receiver?.close();
  });

  it('a customer and an external account answer every field; their rows hold none of them', async () => {
    const c = await api('POST', '/customers', {
      body: {
        customerType: 'INDIVIDUAL',
        platformCustomerId: 'katherine-1',
        region: 'US',
        currencies: ['USD'],
        ...PERSON,
      },
    });
    expect(c.status, c.text).toBe(201);
    const got = await api('GET', `/customers/${encodeURIComponent(c.json.id)}`);
    expect(got.json).toMatchObject({ ...PERSON, address: expect.objectContaining(PERSON.address) });

    const a = await api('POST', '/customers/external-accounts', {
      body: {
        customerId: c.json.id,
        currency: 'USD',
        accountInfo: {
          accountType: 'USD_ACCOUNT',
          accountNumber: ACCOUNT_NUMBER,
          routingNumber: ROUTING_NUMBER,
          beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: PERSON.fullName, address: PERSON.address },
        },
      },
    });
    expect(a.status, a.text).toBe(201);
    katherine = { customerId: c.json.id, externalAccountId: a.json.id };
    const account = await api('GET', `/customers/external-accounts/${encodeURIComponent(a.json.id)}`);
    expect(account.status, account.text).toBe(200);
    expect(account.json.accountInfo).toMatchObject({
      accountNumber: ACCOUNT_NUMBER,
      routingNumber: ROUTING_NUMBER,
    });
    // The same account again is still refused (found by its blind index).
    const again = await api('POST', '/customers/external-accounts', {
      body: { customerId: c.json.id, currency: 'USD', accountInfo: a.json.accountInfo },
    });
    expect(again.status, again.text).toBe(409);

    const customerRow = await dump('identity.customers', 'id = $1', [c.json.id]);
    for (const v of [PERSON.fullName, PERSON.email, PERSON.birthDate, PERSON.address.line1, c.json.umaAddress])
      expect(customerRow).not.toContain(v);
    const accountRow = await dump('accounts.external_accounts', 'id = $1', [a.json.id]);
    for (const v of [ACCOUNT_NUMBER, ROUTING_NUMBER, PERSON.fullName, PERSON.address.line1])
      expect(accountRow).not.toContain(v);
  });

  it("an invitation from a customer, claimed, answers both UMA addresses; its row holds neither", async () => {
    const c = await api('POST', '/customers', {
      body: { customerType: 'INDIVIDUAL', platformCustomerId: 'inviter-1', umaAddress: '$ada.inviter@pay.example.com' },
    });
    expect(c.status, c.text).toBe(201);
    const inviterUma = c.json.umaAddress as string;
    const made = await api('POST', '/invitations', { body: { inviterUma } });
    expect(made.status, made.text).toBe(201);
    const code = made.json.code as string;
    const claimed = await api('POST', `/invitations/${code}/claim`, { body: { inviteeUma: '$grace.invitee@other.example' } });
    expect(claimed.status, claimed.text).toBe(200);
    const got = await api('GET', `/invitations/${code}`);
    expect(got.json).toMatchObject({ code, inviterUma, inviteeUma: '$grace.invitee@other.example', status: 'CLAIMED' });
    const row = await dump('identity.invitations', 'code = $1', [code]);
    expect(row).toMatch(/sii1\./);
    expect(row).toMatch(/sie1\./);
    for (const v of ['ada.inviter', 'grace.invitee']) expect(row).not.toContain(v);
  });

  it("a transfer to the external account settles; its transaction's row holds the account number sealed", async () => {
    const accounts = await api(
      'GET',
      `/customers/internal-accounts?customerId=${encodeURIComponent(katherine.customerId)}&currency=USD`,
    );
    const source = accounts.json.data[0].id as string;
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(source)}/fund`, { body: { amount: 5_000 } });
    expect(fund.status, fund.text).toBe(200);
    const t = await api('POST', '/transfer-out', {
      body: { source: { accountId: source }, destination: { accountId: katherine.externalAccountId }, amount: 1_000 },
    });
    expect(t.status, t.text).toBe(201);
    // The sandbox rail settles it by the account number's last digits (535: COMPLETED), read from the sealed column.
    const done = await eventually(async () => {
      const got = await api('GET', `/transactions/${encodeURIComponent(t.json.id)}`);
      return got.json.status === 'COMPLETED' ? got.json : undefined;
    }, 30_000);
    expect(done.destination).toMatchObject({ accountId: katherine.externalAccountId });
    const row = await dump('payments.transactions', 'id = $1', [t.json.id]);
    expect(row).toMatch(/spi1\./);
    expect(row).not.toContain(ACCOUNT_NUMBER);
  });

  it('a beneficial owner and its document answer every field; their rows hold none of them', async () => {
    const biz = await api('POST', '/customers', {
      body: {
        customerType: 'BUSINESS',
        businessInfo: { legalName: 'Langley Aeronautics', country: 'US', registrationNumber: 'REG-417', entityType: 'LLC' },
        address: { line1: '1 Market St', postalCode: '94105', country: 'US' },
      },
    });
    expect(biz.status, biz.text).toBe(201);
    const personalInfo = {
      firstName: 'Mary',
      lastName: 'Winston Jackson',
      birthDate: '1921-04-09',
      nationality: 'US',
      email: 'mary.jackson@example.com',
      phoneNumber: '+17575550123',
      address: { line1: '77 Hampton Roads Ave', postalCode: '23661', country: 'US' },
      idType: 'SSN',
      identifier: '219-09-9999',
    };
    const o = await api('POST', '/beneficial-owners', {
      body: { customerId: biz.json.id, roles: ['UBO'], ownershipPercentage: 40, personalInfo },
    });
    expect(o.status, o.text).toBe(201);
    const got = await api('GET', `/beneficial-owners/${o.json.id}`);
    expect(got.json.personalInfo).toMatchObject({ ...personalInfo, address: expect.objectContaining(personalInfo.address) });
    const ownerRow = await dump('compliance.beneficial_owners', 'id = $1', [o.json.id]);
    for (const v of ['Winston Jackson', personalInfo.email, personalInfo.phoneNumber, personalInfo.birthDate, personalInfo.identifier, '77 Hampton'])
      expect(ownerRow).not.toContain(v);

    const form = multipartForm(
      { documentType: 'PASSPORT', country: 'US', documentHolder: o.json.id, documentNumber: 'P0419217' },
      { name: 'mary-jackson-passport.pdf', pieces: [SMALL_PDF] },
    );
    const d = await sendStreaming(`${e2e.stack.baseUrl}/documents`, 'POST', form.body, {
      authorization: basic(sandbox),
      ...form.headers,
    });
    expect(d.status, d.body.toString()).toBe(201);
    const doc = JSON.parse(d.body.toString('utf8'));
    expect((await api('GET', `/documents/${doc.id}`)).json).toMatchObject({
      fileName: 'mary-jackson-passport.pdf',
      documentNumber: 'P0419217',
    });
    const docRow = await dump('compliance.documents', 'id = $1', [doc.id]);
    for (const v of ['mary-jackson', 'P0419217']) expect(docRow).not.toContain(v);
  });

  it("a bulk import's rows wait sealed and are erased once imported; the customers answer every field", async () => {
    const platformId = (
      await e2e.db().query(`SELECT platform_id FROM identity.api_tokens WHERE id = $1`, [sandbox.tokenId])
    ).rows[0].platform_id as string;
    // The import worker share-locks the platform's config: holding it keeps the rows waiting.
    const blocker = new pg.Client({ connectionString: e2e.stack.databaseUrl });
    await blocker.connect();
    const form = new FormData();
    form.append(
      'file',
      new Blob(
        [
          'platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country\n' +
            'bulk-dorothy,INDIVIDUAL,Dorothy Vaughan,1910-09-20,42 Langley Boulevard,Hampton,VA,23665,US\n',
        ],
        { type: 'text/csv' },
      ),
      'people.csv',
    );
    let jobId: string;
    try {
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM identity.platform_configs WHERE platform_id = $1 FOR UPDATE`, [platformId]);
      const job = await api('POST', '/customers/bulk/csv', { form });
      expect(job.status, job.text).toBe(202);
      jobId = job.json.jobId;
      expect(jobId).toMatch(/^Job:/);
      const rows = await dump('identity.bulk_import_rows', 'job_id = $1', [jobId]);
      expect(rows).toMatch(/sib1\./);
      for (const v of ['Dorothy Vaughan', '1910-09-20', '42 Langley']) expect(rows).not.toContain(v);
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      await blocker.end();
    }
    await eventually(async () => {
      const r = await api('GET', `/customers/bulk/jobs/${jobId}`);
      expect(r.json.status).toBe('COMPLETED');
      return r.json;
    }, 60_000);
    const listed = await api('GET', '/customers?platformCustomerId=bulk-dorothy');
    expect(listed.json.data[0]).toMatchObject({ fullName: 'Dorothy Vaughan', birthDate: '1910-09-20' });
    expect(
      (await e2e.db().query(`SELECT record, sealed_record FROM identity.bulk_import_rows WHERE job_id = $1`, [jobId]))
        .rows,
    ).toEqual([{ record: null, sealed_record: null }]);
  });

  it("a receiver lookup's row holds the receiver's name sealed", async () => {
    const l = await api('GET', `/receiver/uma/${encodeURIComponent('$success.usd@sandbox.sluice.local')}`);
    expect(l.status, l.text).toBe(200);
    const row = await dump('payments.receiver_lookups', 'id = $1', [l.json.lookupId]);
    expect(row).toMatch(/spn1\./);
    expect(row).not.toContain('Sluice Sandbox UMA'); // the name the sandbox counterparty answers
    expect(row).toMatch(/spu1\./);
    expect(row).not.toContain('$success.usd@sandbox.sluice.local'); // the receiver's UMA address
  });

  it("a quote made from the lookup and its transaction answer the receiver's name; their rows hold it sealed", async () => {
    const NAME = 'Sluice Sandbox UMA';
    const address = '$success.eur@sandbox.sluice.local';
    const c = await api('POST', '/customers', {
      body: { customerType: 'INDIVIDUAL', platformCustomerId: 'payer-1', region: 'US', currencies: ['USD'] },
    });
    expect(c.status, c.text).toBe(201);
    const accounts = await api('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(c.json.id)}&currency=USD`);
    const source = accounts.json.data[0].id as string;
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(source)}/fund`, { body: { amount: 10_000 } });
    expect(fund.status, fund.text).toBe(200);
    const l = await api('GET', `/receiver/uma/${encodeURIComponent(address)}`);
    expect(l.status, l.text).toBe(200);
    const q = await api('POST', '/quotes', {
      body: {
        lookupId: l.json.lookupId,
        source: { sourceType: 'ACCOUNT', accountId: source },
        destination: { destinationType: 'UMA_ADDRESS', umaAddress: address },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 2_000,
        senderCustomerInfo: { FULL_NAME: 'Mary Golda Ross', BIRTH_DATE: '1908-08-09' },
      },
    });
    expect(q.status, q.text).toBe(201);
    expect(q.json.counterpartyInformation).toEqual({ FULL_NAME: NAME });
    const executed = await api('POST', `/quotes/${encodeURIComponent(q.json.id)}/execute`);
    expect(executed.status, executed.text).toBe(200);
    const transactionId = executed.json.transactionId as string;
    const t = await api('GET', `/transactions/${encodeURIComponent(transactionId)}`);
    expect(t.status, t.text).toBe(200);
    expect(t.json.counterpartyInformation).toEqual({ FULL_NAME: NAME });
    expect((await api('GET', `/quotes/${encodeURIComponent(q.json.id)}`)).json.counterpartyInformation).toEqual({
      FULL_NAME: NAME,
    });
    for (const [table, id] of [
      ['payments.quotes', q.json.id],
      ['payments.transactions', transactionId],
    ]) {
      const row = await dump(table!, 'id = $1', [id]);
      expect(row).toMatch(/spc1\./);
      expect(row).not.toContain(NAME);
      // The receiver's UMA address too (the transaction's with its blind index).
      expect(row).toMatch(/spu1\./);
      expect(row).not.toContain(address);
    }
    const found = await api('GET', `/transactions?receiverAccountIdentifier=${encodeURIComponent(address)}`);
    expect(found.status, found.text).toBe(200);
    expect(found.json.data.map((x: { id: string }) => x.id)).toContain(transactionId);
    // The sender's payer data, which the quote keeps and no answer shows, is sealed too.
    const quoteRow = await dump('payments.quotes', 'id = $1', [q.json.id]);
    expect(quoteRow).toMatch(/sps1\./);
    for (const v of ['Mary Golda Ross', '1908-08-09']) expect(quoteRow).not.toContain(v);
  });

  it('the webhook endpoint signs every delivery with the secret GET /config shows; the stored secrets are sealed', async () => {
    const cfg = await api('PATCH', '/config', {
      body: { webhookEndpoint: receiver.url, supportedCurrencies: [{ currencyCode: 'USD' }] },
    });
    expect(cfg.status, cfg.text).toBe(200);
    const secret = (await api('GET', '/config')).json.webhookSigningSecret as string;
    const test = await api('POST', '/sandbox/webhooks/test');
    expect(test.status, test.text).toBe(200);
    const w = await eventually(async () => receiver.received.find((x) => x.type === 'TEST'), 30_000);
    expect(new Webhook(secret).verify(w.body, w.headers)).toBeTruthy();

    const rotated = await api('POST', '/config/webhook-secret/rotate');
    expect(rotated.status, rotated.text).toBe(200);
    const secrets = await dump('identity.webhook_signing_secrets', 'true', []);
    for (const s of [secret, rotated.json.webhookSigningSecret as string]) {
      expect(secrets).not.toContain(s);
      expect(secrets).not.toContain(s.slice('whsec_'.length));
    }
  });

  it("an incoming payment the platform approves with its receiver's data: the approval's row holds the data sealed", async () => {
    // The endpoint set by the test above answers INCOMING_PAYMENT.PENDING with 202: the platform approves by the API.
    const cfg = await api('PATCH', '/config', {
      body: { supportedCurrencies: [{ currencyCode: 'USD', incomingPaymentApprovalThreshold: 1_000 }] },
    });
    expect(cfg.status, cfg.text).toBe(200);
    const c = await api('POST', '/customers', {
      body: { customerType: 'INDIVIDUAL', platformCustomerId: 'payee-1', region: 'US', currencies: ['USD'] },
    });
    expect(c.status, c.text).toBe(201);
    const r = await api('POST', '/sandbox/uma/receive', {
      body: {
        senderUmaAddress: '$success.usd@sandbox.sluice.local',
        receiverUmaAddress: c.json.umaAddress,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 1_000,
      },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe('PENDING');
    const id = r.json.id as string;
    const approved = await api('POST', `/transactions/${encodeURIComponent(id)}/approve`, {
      body: { receiverCustomerInfo: RECEIVER_INFO },
    });
    expect(approved.status, approved.text).toBe(200);
    expect(approved.json.status).toBe('COMPLETED');
    const row = await dump('payments.incoming_approvals', 'transaction_id = $1', [id]);
    expect(row).toMatch(/spr1\./);
    for (const v of Object.values(RECEIVER_INFO)) expect(row).not.toContain(v);
    // The transaction holds its sender's UMA address sealed, and is found by it.
    const tx = await dump('payments.transactions', 'id = $1', [id]);
    expect(tx).toMatch(/spu1\./);
    expect(tx).not.toContain('$success.usd@sandbox.sluice.local');
    const found = await api('GET', `/transactions?senderAccountIdentifier=${encodeURIComponent('$success.usd@sandbox.sluice.local')}`);
    expect(found.status, found.text).toBe(200);
    expect(found.json.data.map((x: { id: string }) => x.id)).toEqual([id]);
  });

  it('`main.ts rewrap` runs as its own process: nothing to move under the same key, counts printed', async () => {
    // The four commands at once: each starts a process (tsx), which is most of the time.
    const commands = [
      [
        'identity',
        LOCAL_DEV_MASTER_KEYS.identity,
        [
          'customers',
          'customerUmaAddresses',
          'webhookSigningSecrets',
          'bulkImportRows',
          'invitationsInviterUma',
          'invitationsInviteeUma',
        ],
      ],
      ['accounts', LOCAL_DEV_MASTER_KEYS.accounts, ['externalAccounts']],
      ['compliance', LOCAL_DEV_MASTER_KEYS.compliance, ['documents', 'beneficialOwners', 'verifications']],
      [
        'payments',
        LOCAL_DEV_MASTER_KEYS.payments,
        [
          'receiverLookups',
          'quotes',
          'transactions',
          'quotesSenderCustomerInfo',
          'incomingApprovals',
          'transactionsCounterpartyIdentifier',
          'transactionsSourceUmaAddress',
          'transactionsDestinationUmaAddress',
          'quotesDestinationUmaAddress',
          'receiverLookupsReceiverUmaAddress',
          'receiverLookupsSenderUmaAddress',
        ],
      ],
    ] as const;
    const outputs = await Promise.all(
      commands.map(([app, keys]) =>
        run(process.execPath, ['--import', 'tsx', `apps/${app}/src/main.ts`, 'rewrap'], {
          env: {
            PATH: process.env.PATH,
            DATABASE_URL: e2e.stack.databaseUrl,
            LOG_LEVEL: 'warn',
            MIGRATE_ON_START: 'false',
            ...keys,
          },
        }),
      ),
    );
    commands.forEach(([app, , jobs], i) => {
      const counts = JSON.parse(outputs[i]!.stdout.trim().split('\n').at(-1)!);
      expect(counts).toEqual({
        service: app,
        command: 'rewrap',
        ...Object.fromEntries(jobs.map((j) => [`${j}.failed`, 0])),
      });
    });
  });
});
