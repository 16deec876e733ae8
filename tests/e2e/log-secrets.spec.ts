/**
 * End to end, issue 17 (secrets): every process of the stack logs at `debug` while the flows that
 * carry secrets run through it — API token secrets (created, used, used wrongly), webhook signing
 * secrets (read, rotated, signing deliveries), bank account numbers, a document's content, an
 * agent's device code and bearer token, a bulk import of personal data — and then every line any
 * process wrote is scanned: none may contain a secret, a token, a full account number or the
 * document's content.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMALL_PDF, eventually, multipartForm, sendStreaming } from '@sluice/testing';
import {
  apiClient,
  basic,
  newCredential,
  startE2eStack,
  startWebhookReceiver,
  usdAccountInfo,
  type Api,
  type E2eStack,
} from './support.js';

/** Collects every line written to it. */
class Lines extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
}

describe('logs at debug level carry no secret', () => {
  let e2e: E2eStack;
  let api: Api;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const out = new Lines();
  const cred = newCredential();
  /** Every secret a flow handled, by what it is. */
  const secrets: Record<string, string> = {};
  /** Request ids of the flows, which the logs do carry (the scan reads the lines of these flows). */
  const seen: string[] = [];

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    e2e = await startE2eStack('logsecrets', { sandbox: cred }, { logLevel: 'debug', silent: false, stdout: out, stderr: out });
    api = apiClient(e2e.stack, cred);
    secrets['the platform token secret'] = cred.secret;
    secrets['the platform Basic authorization'] = basic(cred).replace(/^Basic /, '');
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
    await receiver?.close();
    // What was scanned, for whoever reads a failure.
    mkdirSync('tmp', { recursive: true });
    writeFileSync('tmp/log-secrets.log', out.lines.join('\n'));
  });

  it('runs the flows that carry secrets', async () => {
    const cfg = await api('PATCH', '/config', { body: { webhookEndpoint: receiver.url } });
    expect(cfg.status, cfg.text).toBe(200);
    secrets['the webhook signing secret'] = (await api('GET', '/config')).json.webhookSigningSecret;
    const rotated = await api('POST', '/config/webhook-secret/rotate');
    expect(rotated.status, rotated.text).toBeLessThan(300);
    secrets['the rotated webhook signing secret'] = (await api('GET', '/config')).json.webhookSigningSecret;

    const token = await api('POST', '/tokens', { body: { name: 'scanned', permissions: ['VIEW', 'TRANSACT'] } });
    expect(token.status, token.text).toBe(201);
    secrets['a created token secret'] = token.json.clientSecret;
    const tokenCred = { tokenId: token.json.id, secret: token.json.clientSecret };
    expect((await api('GET', '/customers', { auth: basic(tokenCred) })).status).toBe(200);
    const wrong = 'wrong-secret-' + 'x'.repeat(30);
    secrets['a wrong secret tried'] = wrong;
    expect((await api('GET', '/customers', { auth: basic({ ...tokenCred, secret: wrong }) })).status).toBe(401);

    const customer = await api('POST', '/customers', {
      body: { customerType: 'INDIVIDUAL', fullName: 'Ada Lovelace', currencies: ['USD'] },
    });
    expect(customer.status, customer.text).toBe(201);
    const accountNumber = '987654321012';
    secrets['a full bank account number'] = accountNumber;
    const external = await api('POST', '/customers/external-accounts', {
      body: { customerId: customer.json.id, currency: 'USD', accountInfo: usdAccountInfo(accountNumber) },
    });
    expect(external.status, external.text).toBe(201);
    expect((await api('GET', `/customers/external-accounts/${encodeURIComponent(external.json.id)}`)).status).toBe(200);
    seen.push(external.headers.get('x-request-id')!);

    const marker = 'CONFIDENTIAL-PASSPORT-CONTENT-4242';
    secrets['the content of a document'] = marker;
    const pdf = Buffer.concat([SMALL_PDF, Buffer.from(`\n% ${marker}\n`)]);
    const form = multipartForm(
      { documentType: 'PASSPORT', country: 'US', documentHolder: customer.json.id },
      { name: 'passport.pdf', type: 'application/pdf', pieces: [pdf] },
    );
    const doc = await sendStreaming(`${e2e.stack.baseUrl}/documents`, 'POST', form.body, { authorization: basic(cred), ...form.headers });
    expect(doc.status, doc.body.toString()).toBe(201);
    seen.push(String(doc.headers['x-request-id']));

    const agent = await api('POST', '/agents', {
      body: {
        name: 'Scanned bot',
        customerId: customer.json.id,
        policy: {
          permissions: ['VIEW_TRANSACTIONS'],
          defaultExecutionMode: 'AUTO',
          spendingLimits: { currency: 'USD', perTransactionLimit: 100, dailyLimit: 100, dailyTransactionLimit: 1, monthlyLimit: 100 },
        },
      },
    });
    expect(agent.status, agent.text).toBe(201);
    const code = agent.json.deviceCode.code as string;
    secrets['an agent device code'] = code;
    const redeemed = await api('POST', `/agents/device-codes/${encodeURIComponent(code)}/redeem`, { auth: null });
    expect(redeemed.status, redeemed.text).toBe(200);
    secrets['an agent bearer token'] = redeemed.json.accessToken;
    expect((await api('GET', '/agents/me/internal-accounts', { auth: `Bearer ${redeemed.json.accessToken}` })).status).toBe(200);

    const csv = new FormData();
    csv.append(
      'file',
      new Blob(['platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country\nscan-1,INDIVIDUAL,Grace Hopper,1906-12-09,1 Navy Way,Arlington,VA,22201,US\n']),
      'customers.csv',
    );
    const job = await api('POST', '/customers/bulk/csv', { form: csv });
    expect(job.status, job.text).toBe(202);
    seen.push(job.headers.get('x-request-id')!);

    // Deliveries were signed with the secrets (the scan covers the dispatcher's signing too).
    await eventually(async () => receiver.received.some((w) => w.type === 'BULK_UPLOAD.COMPLETED'), 30_000);
  });

  it('no process wrote any of them', async () => {
    // The processes log at debug level: the scan reads many lines, not a quiet log.
    expect(out.lines.length).toBeGreaterThan(100);
    for (const id of seen) expect(out.lines.some((l) => l.includes(id)), id).toBe(true);
    // Every flow of the first test ran (a secret it did not reach would pass unscanned).
    expect(Object.keys(secrets)).toHaveLength(10);
    const leaks: string[] = [];
    for (const [what, secret] of Object.entries(secrets)) {
      expect(secret, what).toBeTruthy();
      const line = out.lines.find((l) => l.includes(secret));
      if (line) leaks.push(`${what}: ${line.slice(0, 300)}`);
    }
    expect(leaks).toEqual([]);
  });
});
