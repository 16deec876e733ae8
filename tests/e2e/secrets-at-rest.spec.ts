/**
 * End to end: secrets and personal data at rest through the real processes (issue 17). A customer,
 * an external account and a webhook endpoint made over the public API work as before (GET answers
 * every field, deliveries verify with the secret GET /config shows), while their rows — read raw,
 * as a stolen dump would hold them — contain none of the personal data, account numbers or signing
 * secrets. `main.ts rewrap` runs as its own process and prints its counts.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { eventually } from '@sluice/testing';
import { LOCAL_DEV_MASTER_KEYS } from '../../tools/stack.js';
import {
  apiClient,
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
  const ROUTING_NUMBER = '021000021';

  /** Every row of `table` matching `where` as text. */
  const dump = async (table: string, where: string, params: unknown[]) =>
    (await e2e.db().query(`SELECT t::text AS row FROM ${table} t WHERE ${where}`, params)).rows
      .map((r) => r.row as string)
      .join('\n');

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
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
    for (const v of [PERSON.fullName, PERSON.email, PERSON.birthDate, PERSON.address.line1])
      expect(customerRow).not.toContain(v);
    const accountRow = await dump('accounts.external_accounts', 'id = $1', [a.json.id]);
    for (const v of [ACCOUNT_NUMBER, ROUTING_NUMBER, PERSON.fullName, PERSON.address.line1])
      expect(accountRow).not.toContain(v);
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

  it('`main.ts rewrap` runs as its own process: nothing to move under the same key, counts printed', async () => {
    for (const [app, keys, jobs] of [
      ['identity', LOCAL_DEV_MASTER_KEYS.identity, ['customers', 'webhookSigningSecrets']],
      ['accounts', LOCAL_DEV_MASTER_KEYS.accounts, ['externalAccounts']],
    ] as const) {
      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', `apps/${app}/src/main.ts`, 'rewrap'],
        {
          env: {
            PATH: process.env.PATH,
            DATABASE_URL: e2e.stack.databaseUrl,
            LOG_LEVEL: 'warn',
            MIGRATE_ON_START: 'false',
            ...keys,
          },
        },
      );
      const counts = JSON.parse(stdout.trim().split('\n').at(-1)!);
      expect(counts).toEqual({
        service: app,
        command: 'rewrap',
        ...Object.fromEntries(jobs.map((j) => [`${j}.failed`, 0])),
      });
    }
  });
});
