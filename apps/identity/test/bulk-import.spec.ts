import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identity } from '@sluice/contracts';
import { startService } from '@sluice/runtime';
import { createRpcClient } from '@sluice/rpc';
import { identityService } from '../src/index.js';
import { newPlatform, outbox, startIdentity, type Harness, type IdentityClient, type TestPlatform } from './support/harness.js';
import { fieldsOf, rejection } from './support/errors.js';

/**
 * Bulk customer import: identity receives the CSV file as a client stream, stores its rows as a
 * job and creates the customers in the background (its worker), exactly as CreateCustomer does.
 */
const { BulkImportJobStatus: Status, CustomerType } = identity;

let h: Harness;
let p: TestPlatform;
beforeAll(async () => {
  // Small batches, so every import here takes several transactions; a 60 s safety poll, so only the
  // notification of a stored job starts its import in time.
  h = await startIdentity('bulkimport', { BULK_IMPORT_BATCH_SIZE: '3', BULK_IMPORT_POLL_MS: '60000' });
  p = await newPlatform(h.client);
});
afterAll(async () => {
  await h?.stop();
});

/** Streams a file to ImportCustomersCsv in chunks of `chunk` bytes (the trailer unless `cut`). */
async function upload(
  content: string | Buffer,
  o: { platformId?: string; chunk?: number; cut?: boolean; client?: IdentityClient } = {},
): Promise<identity.BulkImportJob> {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const call = (o.client ?? h.client).importCustomersCsv();
  await call.write({ header: { platformId: o.platformId ?? p.id, fileName: 'customers.csv' } });
  const size = o.chunk ?? 7;
  for (let i = 0; i < bytes.length; i += size) await call.write({ chunk: bytes.subarray(i, i + size) });
  if (o.cut) {
    call.cancel();
    return call.response.then((r) => r.job!);
  }
  await call.write({ trailer: { sizeBytes: BigInt(bytes.length) } });
  return (await call.end()).job!;
}

/** The job once every row is processed. */
async function finished(jobId: string, platformId = p.id): Promise<identity.BulkImportJob> {
  for (;;) {
    const { job } = await h.client.getBulkImportJob({ platformId, jobId });
    if (job!.status === Status.COMPLETED || job!.status === Status.FAILED) return job!;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const customersOf = async (platformId: string, platformCustomerId: string) =>
  (await h.client.listCustomers(identity.ListCustomersRequest.fromPartial({ platformId, platformCustomerId })))
    .customers;

const count = async (sql: string, params: unknown[] = []) => Number((await h.sql.query(sql, params)).rows[0].n);

const HEADER =
  'umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country,platformAccountId,businessLegalName,businessTaxId';

describe('bulk customer import', () => {
  it('creates each valid row’s customer as CreateCustomer does, fails each bad row naming its CSV column, and writes BULK_UPLOAD.COMPLETED with the job', async () => {
    await h.client.createCustomer({
      platformId: p.id,
      customerType: CustomerType.INDIVIDUAL,
      currencies: [],
      umaAddress: '$taken@pay.example.com',
    });
    const csv = [
      `\uFEFF${HEADER}`,
      '$ann@pay.example.com,bi-ann,INDIVIDUAL,"Doe, Ann",1990-01-15,"1 Main St, Apt 2",San Francisco,CA,94105,US,acct-1',
      ',bi-acme,BUSINESS,,,400 Commerce Way,Austin,TX,78701,US,,"Acme ""Rockets"" Inc",12-3456789',
      '',
      ',bi-bad-date,INDIVIDUAL,Bad Date,1990-13-45,1 St,City,CA,94105,US',
      ',bi-no-name,BUSINESS,,,1 St,City,CA,94105,US',
      ',bi-type,PERSON,Someone,1990-01-01,1 St,City,CA,94105,US',
      ',bi-mixed,INDIVIDUAL,Mixed Up,1990-01-01,1 St,City,CA,94105,US,,,99-999',
      '$taken@pay.example.com,bi-taken,INDIVIDUAL,Taken Uma,1990-01-01,1 St,City,CA,94105,US',
      ',bi-ann,INDIVIDUAL,"Doe, Ann",1990-01-15,1 Main St,San Francisco,CA,94105,US',
      ',,INDIVIDUAL,No Id,1990-01-01,1 St,City,CA,94105,US',
      ',bi-extra,INDIVIDUAL,Too Many,1990-01-01,1 St,City,CA,94105,US,,,,surplus',
      // A quoted value may span lines (the CSV is read right); a line break in an address is refused.
      ',bi-multi,BUSINESS,,,"1 St\nFloor 2",City,CA,94105,US,,Multi LLC',
    ].join('\r\n');
    const accepted = await upload(csv);
    expect(accepted).toMatchObject({ status: Status.PENDING, total: 11, processed: 0, platformId: p.id });
    expect(accepted.id).toMatch(/^Job:[0-9a-f-]{36}$/);

    const job = await finished(accepted.id);
    expect(job).toMatchObject({ status: Status.COMPLETED, total: 11, processed: 11, successful: 3, failed: 8 });
    expect(job.completedAt).toEqual(h.clock.now());
    const byId = Object.fromEntries(job.errors.map((e) => [e.correlationId, e]));
    expect(job.errors.map((e) => e.row)).toEqual([3, 4, 5, 6, 7, 9, 10, 11]);
    expect(byId['bi-bad-date']).toMatchObject({ code: 'INVALID_INPUT', row: 3, line: 5 });
    expect(byId['bi-multi']).toMatchObject({ row: 11, line: 14, errors: [{ field: 'addressLine1', message: 'must not contain control characters' }] });
    expect(byId['bi-bad-date']!.errors.map((e) => e.field)).toEqual(['birthDate']);
    expect(byId['bi-no-name']!.errors.map((e) => e.field)).toEqual(['businessLegalName']);
    expect(byId['bi-type']!.errors).toEqual([{ field: 'customerType', message: 'must be INDIVIDUAL or BUSINESS' }]);
    expect(byId['bi-mixed']!.errors.map((e) => e.field)).toEqual(['businessTaxId']);
    expect(byId['bi-taken']).toMatchObject({ code: 'UMA_ADDRESS_EXISTS' });
    expect(byId.row_9!.errors.map((e) => e.field)).toEqual(['platformCustomerId']);
    expect(byId['bi-extra']!.errors.map((e) => e.field)).toEqual(['file']);

    const [ann] = await customersOf(p.id, 'bi-ann');
    expect(ann).toMatchObject({
      customerType: CustomerType.INDIVIDUAL,
      umaAddress: '$ann@pay.example.com',
      fullName: 'Doe, Ann',
      birthDate: '1990-01-15',
      address: { line1: '1 Main St, Apt 2', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' },
      currencies: ['USD', 'USDC'],
    });
    const [acme] = await customersOf(p.id, 'bi-acme');
    expect(acme).toMatchObject({
      customerType: CustomerType.BUSINESS,
      businessInfo: { legalName: 'Acme "Rockets" Inc', taxId: '12-3456789' },
      address: { line1: '400 Commerce Way', city: 'Austin' },
    });
    expect(acme!.umaAddress).toMatch(/@sandbox\.sluice\.test$/);
    expect(await customersOf(p.id, 'bi-taken')).toEqual([]);

    const events = await outbox(h.sql, p.id);
    const created = events.filter((e) => e.type === 'CUSTOMER.CREATED').map((e) => e.envelope.data.customerId);
    expect(created).toEqual(expect.arrayContaining([ann!.id, acme!.id]));
    const done = events.filter((e) => e.type.startsWith('BULK_UPLOAD.'));
    expect(done.map((e) => e.type)).toEqual(['BULK_UPLOAD.COMPLETED']);
    expect(done[0]!.envelope.data).toMatchObject({
      id: job.id,
      status: 'COMPLETED',
      progress: { total: 11, processed: 11, successful: 3, failed: 8 },
      completedAt: h.clock.now().toISOString(),
    });
    expect((done[0]!.envelope.data.errors as unknown[]).length).toBe(8);
    // The rows keep no personal data once processed.
    expect(await count(`SELECT count(*) AS n FROM bulk_import_rows WHERE job_id = $1 AND (record IS NOT NULL OR sealed_record IS NOT NULL)`, [job.id])).toBe(0);
  });

  it('is idempotent by platformCustomerId: the same file again creates nothing and counts the existing customers as successful', async () => {
    const csv = [
      'platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country,businessLegalName',
      're-1,INDIVIDUAL,Re One,1980-02-02,1 St,City,CA,94105,US,',
      're-2,BUSINESS,,,2 St,City,CA,94105,US,Re Two LLC',
    ].join('\n');
    const first = await finished((await upload(csv)).id);
    expect(first).toMatchObject({ status: Status.COMPLETED, successful: 2, failed: 0 });
    const createdBefore = (await outbox(h.sql, p.id)).filter((e) => e.type === 'CUSTOMER.CREATED').length;
    const again = await finished((await upload(csv)).id);
    expect(again).toMatchObject({ status: Status.COMPLETED, successful: 2, failed: 0, errors: [] });
    expect((await outbox(h.sql, p.id)).filter((e) => e.type === 'CUSTOMER.CREATED').length).toBe(createdBefore);
    expect(await customersOf(p.id, 're-1')).toHaveLength(1);
    // The same platformCustomerId as another type is a conflict, named with the existing customer.
    const conflict = await finished(
      (await upload('platformCustomerId,customerType,businessLegalName,addressLine1,city,state,postalCode,country\nre-1,BUSINESS,Re LLC,1 St,City,CA,94105,US')).id,
    );
    const [existing] = await customersOf(p.id, 're-1');
    expect(conflict).toMatchObject({ status: Status.FAILED, successful: 0, failed: 1 });
    expect(conflict.errors).toEqual([
      expect.objectContaining({ correlationId: 're-1', code: 'CUSTOMER_ALREADY_EXISTS', customerId: existing!.id }),
    ]);
  });

  it('a job whose every row fails is FAILED with BULK_UPLOAD.FAILED', async () => {
    const job = await finished((await upload('platformCustomerId,customerType\nf-1,INDIVIDUAL\nf-2,ROBOT')).id);
    expect(job).toMatchObject({ status: Status.FAILED, total: 2, processed: 2, successful: 0, failed: 2 });
    const failed = (await outbox(h.sql, p.id)).filter((e) => e.type === 'BULK_UPLOAD.FAILED');
    expect(failed.filter((e) => e.envelope.data.id === job.id)).toHaveLength(1);
  });

  it('refuses a file that is not the CSV format as a whole, naming the problem on `file`, and stores nothing', async () => {
    const jobs = () => count(`SELECT count(*) AS n FROM bulk_import_jobs`);
    const rows = () => count(`SELECT count(*) AS n FROM bulk_import_rows`);
    const before = [await jobs(), await rows()];
    const cases: [string, string | Buffer, RegExp][] = [
      ['unknown column', 'platformCustomerId,customerType,nickname\nx,INDIVIDUAL,y', /nickname/],
      ['repeated column', 'platformCustomerId,customerType,city,city\nx,INDIVIDUAL,a,b', /city twice/],
      ['no customerType column', 'platformCustomerId,fullName\nx,y', /no customerType column/],
      ['header only', 'platformCustomerId,customerType\n', /no data row/],
      ['empty', '', /empty/],
      ['unclosed quote', 'platformCustomerId,customerType\n"x,INDIVIDUAL\ny,BUSINESS', /not a readable CSV/],
      ['not UTF-8', Buffer.concat([Buffer.from('platformCustomerId,customerType\n'), Buffer.from([0xc3, 0x28, 0x0a])]), /UTF-8/],
      ['NUL character', 'platformCustomerId,customerType\nx\u0000,INDIVIDUAL', /NUL/],
      ['record too long', `platformCustomerId,customerType\n${'a'.repeat(20_000)},INDIVIDUAL`, /not a readable CSV/],
    ];
    for (const [what, content, message] of cases) {
      const e = await rejection(upload(content));
      expect(fieldsOf(e), what).toEqual(['file']);
      expect((e.details!.errors as { message: string }[])[0]!.message, what).toMatch(message);
    }
    // An upload cut short (the client cancels before the trailer) stores nothing either.
    await expect(upload('platformCustomerId,customerType\nx,INDIVIDUAL', { cut: true })).rejects.toThrow(/Cancelled/);
    expect([await jobs(), await rows()]).toEqual(before);
  });

  it('shows a job to its platform only', async () => {
    const job = await upload('platformCustomerId,customerType\no-1,ROBOT');
    const other = await newPlatform(h.client);
    for (const jobId of [job.id, 'Job:not-an-id', job.id.replace('Job:', 'Customer:')]) {
      const e = await rejection(h.client.getBulkImportJob({ platformId: other.id, jobId }));
      expect(e.code).toBe('BULK_UPLOAD_JOB_NOT_FOUND');
    }
    await finished(job.id);
  });

  it('two replicas import one file together and create each customer exactly once', async () => {
    const replica = await startService(
      identityService,
      h.replicaEnv({ BULK_IMPORT_BATCH_SIZE: '7', BULK_IMPORT_POLL_MS: '60000' }),
    );
    const client = createRpcClient(identity.IdentityServiceClient, `127.0.0.1:${replica.port}`);
    try {
      const n = 600;
      const lines = ['platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country'];
      for (let i = 0; i < n; i++) lines.push(`rep-${i},INDIVIDUAL,Person ${i},1985-05-05,${i} Main St,City,CA,94105,US`);
      // Uploaded to the replica; both workers take batches of the job (each under its row lock).
      const job = await finished((await upload(lines.join('\n'), { client, chunk: 4096 })).id);
      expect(job).toMatchObject({ status: Status.COMPLETED, total: n, processed: n, successful: n, failed: 0 });
      const ids = await count(
        `SELECT count(DISTINCT platform_customer_id) AS n FROM customers WHERE platform_id = $1 AND platform_customer_id LIKE 'rep-%'`,
        [p.id],
      );
      const created = await count(
        `SELECT count(*) AS n FROM outbox WHERE platform_id = $1 AND type = 'CUSTOMER.CREATED' AND envelope->'data'->>'platformCustomerId' LIKE 'rep-%'`,
        [p.id],
      );
      const outcomes = await count(`SELECT count(*) AS n FROM bulk_import_rows WHERE job_id = $1 AND outcome = 'CREATED'`, [job.id]);
      expect([ids, created, outcomes]).toEqual([n, n, n]);
    } finally {
      client.close();
      await replica.stop();
    }
  });
});
