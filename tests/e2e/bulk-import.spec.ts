/**
 * End to end: the bulk customer import through the real processes (gateway -> identity (stream,
 * job, worker) -> outbox -> accounts and webhook-dispatcher). A CSV file uploaded as multipart is
 * accepted as a job (202), its customers are created in the background as POST /customers creates
 * them (with their internal accounts), the job shows its progress and failed rows, and the signed
 * BULK_UPLOAD.COMPLETED / FAILED webhook carries the job. Uploading the file again creates nothing.
 * Every kind of bad upload is refused with its code and field and stores nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { eventually, multipartForm, sendStreaming } from '@sluice/testing';
import { parseExposition, sumOf } from '@sluice/metrics';
import { ensurePlatformCredential } from '../../tools/lib/bootstrap.js';
import {
  apiClient,
  basic,
  newCredential,
  startE2eStack,
  startWebhookReceiver,
  type Api,
  type E2eStack,
} from './support.js';

const HEADER = 'platformCustomerId,customerType,fullName,birthDate,email,addressLine1,city,state,postalCode,country,businessLegalName,umaAddress';

function csvForm(content: string | Blob, name = 'customers.csv'): FormData {
  const form = new FormData();
  form.append('file', typeof content === 'string' ? new Blob([content], { type: 'text/csv' }) : content, name);
  return form;
}

describe('bulk customer import through the real processes', () => {
  let e2e: E2eStack;
  let api: Api;
  let other: Api;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let secret: string;
  const credA = newCredential();
  const credB = newCredential();

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    e2e = await startE2eStack('bulkimport', { sandbox: credA });
    await ensurePlatformCredential(
      e2e.stack.grpc.identity!,
      { tokenId: credB.tokenId, clientSecret: credB.secret, environment: 'SANDBOX' },
      { platformName: 'Platform B' },
    );
    api = apiClient(e2e.stack, credA);
    other = apiClient(e2e.stack, credB);
    const cfg = await api('PATCH', '/config', { body: { webhookEndpoint: receiver.url } });
    expect(cfg.status, cfg.text).toBe(200);
    secret = (await api('GET', '/config')).json.webhookSigningSecret;
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
    await receiver?.close();
  });

  const upload = (content: string | Blob, client = api) =>
    client('POST', '/customers/bulk/csv', { form: csvForm(content) });

  /** The job once it is COMPLETED or FAILED. */
  const finished = (jobId: string) =>
    eventually(async () => {
      const r = await api('GET', `/customers/bulk/jobs/${jobId}`);
      expect(r.status, r.text).toBe(200);
      expect(['COMPLETED', 'FAILED']).toContain(r.json.status);
      return r.json;
    }, 60_000);

  /** The verified BULK_UPLOAD webhook of a job. */
  const webhookOf = (jobId: string) =>
    eventually(async () => {
      const w = receiver.received.find((x) => x.type.startsWith('BULK_UPLOAD.') && (x.data as { id: string }).id === jobId);
      expect(w, `BULK_UPLOAD webhook of ${jobId}`).toBeDefined();
      new Webhook(secret).verify(w!.body, w!.headers);
      return w!;
    }, 30_000);

  const count = async (sql: string) => (await e2e.db().query<{ n: number }>(sql)).rows[0]!.n;

  it('imports the file in the background: customers with their accounts, the job’s progress and failed rows, the signed BULK_UPLOAD.COMPLETED', async () => {
    const csv = [
      HEADER,
      'bulk-ada,INDIVIDUAL,Ada Lovelace,1936-12-10,ada@example.com,12 St James Sq,London,LDN,SW1Y 4JH,GB,,$ada.bulk@pay.example.com',
      'bulk-acme,BUSINESS,,,,400 Commerce Way,Austin,TX,78701,US,Acme Corp,',
      'bulk-late,INDIVIDUAL,Late Bloomer,2999-01-01,,1 St,City,CA,94105,US,,',
      'bulk-biz,BUSINESS,,,,1 St,City,CA,94105,US,,',
    ].join('\n');
    const accepted = await upload(csv);
    expect(accepted.status, accepted.text).toBe(202);
    expect(accepted.json).toEqual({ jobId: expect.stringMatching(/^Job:/), status: 'PENDING' });

    const job = await finished(accepted.json.jobId);
    expect(job).toMatchObject({
      id: accepted.json.jobId,
      status: 'COMPLETED',
      progress: { total: 4, processed: 4, successful: 2, failed: 2 },
      completedAt: expect.any(String),
    });
    expect(job.errors).toEqual([
      {
        correlationId: 'bulk-late',
        code: 'INVALID_INPUT',
        message: expect.stringMatching(/^birthDate: /),
        details: { row: 3, line: 4, errors: [{ field: 'birthDate', message: expect.any(String) }] },
      },
      {
        correlationId: 'bulk-biz',
        code: 'INVALID_INPUT',
        message: 'businessLegalName: is required for BUSINESS customers',
        details: { row: 4, line: 5, errors: [{ field: 'businessLegalName', message: expect.any(String) }] },
      },
    ]);

    const ada = await api('GET', '/customers?platformCustomerId=bulk-ada');
    expect(ada.json.data).toEqual([
      expect.objectContaining({
        customerType: 'INDIVIDUAL',
        fullName: 'Ada Lovelace',
        birthDate: '1936-12-10',
        email: 'ada@example.com',
        umaAddress: '$ada.bulk@pay.example.com',
        address: expect.objectContaining({ line1: '12 St James Sq', postalCode: 'SW1Y 4JH', country: 'GB' }),
      }),
    ]);
    const acme = (await api('GET', '/customers?platformCustomerId=bulk-acme')).json.data[0];
    expect(acme).toMatchObject({ customerType: 'BUSINESS', businessInfo: { legalName: 'Acme Corp' } });
    // CUSTOMER.CREATED went its usual way: accounts opened the customer's internal accounts.
    await eventually(async () => {
      const accounts = await api('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(acme.id)}`);
      expect(accounts.json.data?.length, accounts.text).toBeGreaterThan(0);
      return true;
    }, 30_000);

    const webhook = await webhookOf(job.id);
    expect(webhook.type).toBe('BULK_UPLOAD.COMPLETED');
    expect(webhook.data).toEqual(job);

    // Identity's metrics count the rows by outcome and the job by status (the first job of this stack).
    const samples = parseExposition(await (await fetch(e2e.stack.metrics.identity!)).text());
    expect(sumOf(samples, 'bulk_import_rows_total', { outcome: 'created' })).toBe(2);
    expect(sumOf(samples, 'bulk_import_rows_total', { outcome: 'failed' })).toBe(2);
    expect(sumOf(samples, 'bulk_import_jobs_finished_total', { status: 'COMPLETED' })).toBe(1);
  });

  it('is idempotent by platformCustomerId: the same file again creates no customer and counts them as successful', async () => {
    const csv = [
      HEADER,
      'again-1,INDIVIDUAL,Grace Hopper,1906-12-09,,1 St,Arlington,VA,22201,US,,',
      'again-2,BUSINESS,,,,2 St,Austin,TX,78701,US,Again LLC,',
    ].join('\n');
    const first = await finished((await upload(csv)).json.jobId);
    expect(first.progress).toEqual({ total: 2, processed: 2, successful: 2, failed: 0 });
    const customers = () => count(`SELECT count(*)::int AS n FROM identity.customers WHERE platform_customer_id LIKE 'again-%'`);
    expect(await customers()).toBe(2);
    const second = await finished((await upload(csv)).json.jobId);
    expect(second).toMatchObject({ status: 'COMPLETED', progress: { total: 2, processed: 2, successful: 2, failed: 0 }, errors: [] });
    expect(await customers()).toBe(2);
  });

  it('a file whose every row fails is FAILED, with the signed BULK_UPLOAD.FAILED', async () => {
    const accepted = await upload('platformCustomerId,customerType\nnope-1,ROBOT\nnope-2,INDIVIDUAL');
    expect(accepted.status, accepted.text).toBe(202);
    const job = await finished(accepted.json.jobId);
    expect(job).toMatchObject({ status: 'FAILED', progress: { total: 2, processed: 2, successful: 0, failed: 2 } });
    expect(job.errors.map((e: { correlationId: string }) => e.correlationId)).toEqual(['nope-1', 'nope-2']);
    const webhook = await webhookOf(job.id);
    expect(webhook.type).toBe('BULK_UPLOAD.FAILED');
    expect(webhook.data).toEqual(job);
  });

  it('refuses every kind of bad upload with its code and field, and stores nothing', async () => {
    const jobs = () => count(`SELECT count(*)::int AS n FROM identity.bulk_import_jobs`);
    const before = await jobs();
    const expectInvalid = (r: { status: number; json: { code?: string; details?: { errors?: { field: string; message: string }[] } } }, field: string, message: RegExp) => {
      expect(r.status, JSON.stringify(r.json)).toBe(400);
      expect(r.json.code).toBe('INVALID_INPUT');
      expect(r.json.details?.errors?.[0]).toEqual({ field, message: expect.stringMatching(message) });
    };
    // Not multipart.
    const json = await api('POST', '/customers/bulk/csv', { body: { file: 'platformCustomerId' } });
    expect(json.status).toBe(415);
    expect(json.json.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    // No file part, a field instead of it, the file as text, two files.
    const noFile = new FormData();
    noFile.append('note', 'hello');
    expectInvalid(await api('POST', '/customers/bulk/csv', { form: noFile }), 'note', /not a part/);
    const textFile = new FormData();
    textFile.append('file', 'platformCustomerId,customerType\nx,INDIVIDUAL');
    expectInvalid(await api('POST', '/customers/bulk/csv', { form: textFile }), 'file', /file part/);
    const twoFiles = csvForm('platformCustomerId,customerType\nx,ROBOT');
    twoFiles.append('file', new Blob(['platformCustomerId,customerType\ny,ROBOT']), 'more.csv');
    expectInvalid(await api('POST', '/customers/bulk/csv', { form: twoFiles }), 'file', /only part/);
    const empty = new FormData();
    expect((await api('POST', '/customers/bulk/csv', { form: empty })).status).toBe(400);
    // Files that are not the CSV format.
    expectInvalid(await upload('platformCustomerId,customerType,shoeSize\nx,INDIVIDUAL,9'), 'file', /shoeSize/);
    expectInvalid(await upload('platformCustomerId,fullName\nx,Ada'), 'file', /no customerType column/);
    expectInvalid(await upload('platformCustomerId,customerType\n'), 'file', /no data row/);
    expectInvalid(await upload('platformCustomerId,customerType\n"x,INDIVIDUAL'), 'file', /not a readable CSV/);
    expectInvalid(
      await upload(new Blob([Buffer.from('platformCustomerId,customerType\n'), Buffer.from([0xff, 0xfe, 0x0a])])),
      'file',
      /UTF-8/,
    );
    // Over 64 MiB: 413 at the first byte too many (empty lines, so only the size can refuse it).
    const header = Buffer.from('platformCustomerId,customerType\n');
    const lines = Buffer.alloc(1 << 20, 0x0a);
    const form = multipartForm({}, { name: 'big.csv', type: 'text/csv', pieces: [header, ...Array<Buffer>(65).fill(lines)] });
    const big = await sendStreaming(`${e2e.stack.baseUrl}/customers/bulk/csv`, 'POST', form.body, {
      authorization: basic(credA),
      ...form.headers,
    });
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body.toString('utf8'))).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { maxBytes: 67_108_864 } });
    expect(await jobs()).toBe(before);
  });

  it('shows a job to its platform only; an unknown job is 404 and a malformed id 400', async () => {
    const accepted = await upload('platformCustomerId,customerType\nmine-1,ROBOT');
    const jobId = accepted.json.jobId as string;
    const foreign = await other('GET', `/customers/bulk/jobs/${jobId}`);
    expect(foreign.status).toBe(404);
    expect(foreign.json.code).toBe('BULK_UPLOAD_JOB_NOT_FOUND');
    const unknown = await api('GET', '/customers/bulk/jobs/Job:019542f5-b3e7-7d02-8000-000000000006');
    expect(unknown.status).toBe(404);
    expect(unknown.json.code).toBe('BULK_UPLOAD_JOB_NOT_FOUND');
    const malformed = await api('GET', '/customers/bulk/jobs/not-a-job');
    expect(malformed.status).toBe(400);
    expect(malformed.json.details.errors.map((e: { field: string }) => e.field)).toEqual(['jobId']);
    await finished(jobId);
  });
});
