/* eslint-disable @nx/enforce-module-boundaries -- the compliance team owns these gateway route modules; this is their HTTP contract test in the real gateway core against the real identity and compliance */
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '@sluice/config';
import { createLogger } from '@sluice/logging';
import { eventually, multipartForm, pdfOfSize, sendStreaming, type StreamedAnswer } from '@sluice/testing';
import { composeGateway } from '../../gateway/src/compose.js';
import { gatewayConfigSchema } from '../../gateway/src/config.js';
import beneficialOwnersRoutes from '../../gateway/src/routes/beneficial-owners.routes.js';
import documentsRoutes from '../../gateway/src/routes/documents.routes.js';
import verificationsRoutes from '../../gateway/src/routes/verifications.routes.js';
import customersRoutes from '../../gateway/src/routes/customers.routes.js';
import { MemoryIdempotencyStore, type IdempotencyStore } from '../../gateway/src/store/idempotency.repository.js';
import {
  FILES,
  newBusiness,
  newPlatformWithCredential,
  startCompliance,
  type Harness,
} from './support/harness.js';

/**
 * The compliance REST routes in the real gateway core over real HTTP (multipart streamed through
 * to compliance), against identity and compliance started in-process.
 */
const API = '/2025-10-13';
let h: Harness;
let app: FastifyInstance;
let base: string;
let close: () => Promise<void>;
let p: { platformId: string; authorization: string };
/**
 * Idempotency-Keys whose answer the store loses, as when the gateway dies after the service
 * answered and before the key's record was written (the claim's lease then runs out, and a retry
 * runs the request again): `complete` releases the claim instead.
 */
const lostRecords = new Set<string>();

beforeAll(async () => {
  h = await startCompliance('routes');
  const config = loadConfig(gatewayConfigSchema, {
    LOG_LEVEL: 'silent',
    AUTH_CACHE_TTL_MS: '0',
    IDENTITY_GRPC_URL: h.identityAddress,
    COMPLIANCE_GRPC_URL: h.complianceAddress,
  });
  const keys = new MemoryIdempotencyStore({ ttlMs: 3_600_000, leaseMs: 60_000 });
  const idempotencyStore: IdempotencyStore = {
    claim: (...a) => keys.claim(...a),
    complete: (platformId, key, owner, response) =>
      lostRecords.has(key) ? keys.release(platformId, key, owner) : keys.complete(platformId, key, owner, response),
    release: (...a) => keys.release(...a),
    purgeExpired: () => keys.purgeExpired(),
  };
  const gw = await composeGateway(
    { config, logger: createLogger('gateway', 'silent') },
    {
      routes: {
        customers: customersRoutes,
        'beneficial-owners': beneficialOwnersRoutes,
        documents: documentsRoutes,
        verifications: verificationsRoutes,
      },
      readiness: {},
      idempotencyStore,
    },
  );
  app = gw.app;
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}${API}`;
  close = () => gw.close(0);
  p = await newPlatformWithCredential(h);
});

afterAll(async () => {
  await close?.();
  await h?.stop();
});

type Answer = StreamedAnswer;

function send(
  method: string,
  path: string,
  body: Iterable<Buffer> | undefined,
  headers: Record<string, string> = {},
) {
  return sendStreaming(`${base}${path}`, method, body, { authorization: p.authorization, ...headers });
}

const json = (a: Answer) => JSON.parse(a.body.toString('utf8'));

const form = multipartForm;
const pdfOf = pdfOfSize;

async function upload(
  fields: Record<string, string>,
  file: Buffer | Generator<Buffer>,
  name = 'doc.pdf',
  type?: string,
) {
  const pieces = Buffer.isBuffer(file) ? [file] : file;
  const f = form(fields, { name, ...(type ? { type } : {}), pieces });
  return send('POST', '/documents', f.body, f.headers);
}

async function count(table: string): Promise<number> {
  return (await h.sql.query(`SELECT count(*)::int AS n FROM compliance.${table}`)).rows[0].n;
}

describe('documents over HTTP', () => {
  it('uploads a PDF, a JPEG and a PNG as multipart and serves each file back', async () => {
    const biz = await newBusiness(h, p.platformId);
    for (const [file, type, name] of [
      [FILES.pdf, 'application/pdf', 'scan.pdf'],
      [FILES.jpeg, 'image/jpeg', 'photo.jpg'],
      [FILES.png, 'image/png', 'péle-mêle.png'],
    ] as const) {
      const res = await upload(
        {
          documentType: 'PASSPORT',
          country: 'US',
          documentHolder: biz.id,
          side: 'FRONT',
          documentNumber: 'A123',
        },
        file,
        name,
        'application/octet-stream',
      );
      expect(res.status, res.body.toString()).toBe(201);
      const d = json(res);
      expect(d).toEqual({
        id: expect.stringMatching(/^Document:/),
        documentHolder: biz.id,
        documentType: 'PASSPORT',
        side: 'FRONT',
        country: 'US',
        documentNumber: 'A123',
        fileName: name,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const got = await send('GET', `/documents/${d.id}/file`, undefined);
      expect(got.status).toBe(200);
      expect(got.headers['content-type']).toBe(type);
      expect(got.headers['content-disposition']).toContain(`filename*=UTF-8''${encodeURIComponent(name)}`);
      expect(got.body.equals(file)).toBe(true);
    }
  });

  it('accepts exactly 10 MiB; refuses 10 MiB + 1 byte with 413 before reading the rest, storing nothing', async () => {
    const biz = await newBusiness(h, p.platformId);
    const fields = { documentType: 'BANK_STATEMENT', country: 'US', documentHolder: biz.id };
    const ok = await upload(fields, pdfOf(10_485_760));
    expect(ok.status, ok.body.toString()).toBe(201);
    const d = json(ok);
    const got = await send('GET', `/documents/${d.id}/file`, undefined);
    expect(got.headers['content-length']).toBe('10485760');
    expect(got.body.length).toBe(10_485_760);
    const [docs, chunks] = [await count('documents'), await count('document_chunks')];
    const over = await upload(fields, pdfOf(10_485_761));
    expect(over.status).toBe(413);
    expect(json(over)).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    // 200 MiB more, never read: the answer came long before the client could send it all
    const huge = await upload(fields, pdfOf(200 * 1024 * 1024));
    expect(huge.status).toBe(413);
    expect(huge.sentAll).toBe(false);
    expect(huge.sentBytes).toBeLessThan(100 * 1024 * 1024);
    expect(await count('documents')).toBe(docs);
    await eventually(async () => (await count('document_chunks')) === chunks);
  });

  it('streams: compliance stores the first chunks while the client is still sending the file', async () => {
    const biz = await newBusiness(h, p.platformId);
    const before = await count('document_chunks');
    let stored = false;
    const f = form(
      { documentType: 'PASSPORT', country: 'US', documentHolder: biz.id },
      { name: 'slow.pdf', pieces: [] },
    );
    const parts = [...f.body]; // fields, file part header, CRLF, closing boundary
    async function* body(): AsyncGenerator<Buffer> {
      for (const b of parts.slice(0, -2)) yield b;
      yield* pdfOf(2 * 1024 * 1024);
      // the client waits here, mid-file, until compliance has stored chunks of what it got
      await eventually(async () => (await count('document_chunks')) >= before + 4);
      stored = true;
      yield Buffer.alloc(1000, 0x20);
      for (const b of parts.slice(-2)) yield b;
    }
    const res = await sendStreaming(`${base}/documents`, 'POST', body(), {
      authorization: p.authorization,
      ...f.headers,
    });
    expect(res.status, res.body.toString()).toBe(201);
    expect(stored).toBe(true);
    expect(json(res).fileName).toBe('slow.pdf');
  });

  it('refuses a renamed text file, bad fields, a field after the file, no file and a foreign holder', async () => {
    const biz = await newBusiness(h, p.platformId);
    const q = await newPlatformWithCredential(h);
    const foreign = await newBusiness(h, q.platformId);
    const fields = { documentType: 'PASSPORT', country: 'US', documentHolder: biz.id };
    const [docs, chunks] = [await count('documents'), await count('document_chunks')];
    const invalid = async (a: Answer) => {
      expect(a.status, a.body.toString()).toBe(400);
      return json(a).details.errors.map((e: { field: string }) => e.field);
    };
    expect(await invalid(await upload(fields, FILES.text, 'passport.pdf', 'application/pdf'))).toEqual([
      'file',
    ]);
    expect(await invalid(await upload({ ...fields, documentType: 'DIPLOMA' }, FILES.pdf))).toEqual([
      'documentType',
    ]);
    expect(
      await invalid(await upload({ documentType: 'PASSPORT', documentHolder: biz.id }, FILES.pdf)),
    ).toEqual(['country']);
    expect(await invalid(await upload({ ...fields, color: 'red' }, FILES.pdf))).toEqual(['color']);
    const late = form(
      { documentType: 'PASSPORT', documentHolder: biz.id },
      { name: 'a.pdf', pieces: [FILES.pdf] },
      { country: 'US' },
    );
    expect(await invalid(await send('POST', '/documents', late.body, late.headers))).toEqual(['country']);
    // A complete form and its file, then a field: refused after the file was streamed, yet nothing stored.
    const after = form(fields, { name: 'a.pdf', pieces: [FILES.pdf] }, { side: 'FRONT' });
    expect(await invalid(await send('POST', '/documents', after.body, after.headers))).toEqual(['side']);
    const none = form(fields, undefined);
    expect(await invalid(await send('POST', '/documents', none.body, none.headers))).toEqual(['file']);
    const holder = await upload({ ...fields, documentHolder: foreign.id }, FILES.pdf);
    expect(holder.status).toBe(404);
    expect(json(holder).code).toBe('DOCUMENT_HOLDER_NOT_FOUND');
    const asJson = await send('POST', '/documents', [Buffer.from('{}')], {
      'content-type': 'application/json',
    });
    expect(asJson.status).toBe(415);
    expect([await count('documents'), await count('document_chunks')]).toEqual([docs, chunks]);
  });

  it('replaces, lists by holder, deletes; another platform’s document is 404', async () => {
    const biz = await newBusiness(h, p.platformId);
    const d = json(
      await upload({ documentType: 'PASSPORT', country: 'US', documentHolder: biz.id }, FILES.pdf),
    );
    const f = form({ documentType: 'NATIONAL_ID', country: 'MX' }, { name: 'id.png', pieces: [FILES.png] });
    const put = await send('PUT', `/documents/${d.id}`, f.body, f.headers);
    expect(put.status, put.body.toString()).toBe(200);
    expect(json(put)).toMatchObject({
      id: d.id,
      documentType: 'NATIONAL_ID',
      country: 'MX',
      fileName: 'id.png',
      documentHolder: biz.id,
    });
    expect((await send('GET', `/documents/${d.id}/file`, undefined)).body.equals(FILES.png)).toBe(true);
    const list = json(await send('GET', `/documents?documentHolder=${biz.id}`, undefined));
    expect(list).toMatchObject({ hasMore: false, totalCount: 1, data: [{ id: d.id }] });
    const q = await newPlatformWithCredential(h);
    const other = await new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(
        `${base}/documents/${d.id}`,
        { headers: { authorization: q.authorization } },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              headers: res.headers,
              body: Buffer.concat(parts),
              sentAll: true,
              sentBytes: 0,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(other.status).toBe(404);
    expect((await send('DELETE', `/documents/${d.id}`, undefined)).status).toBe(204);
    expect((await send('GET', `/documents/${d.id}`, undefined)).status).toBe(404);
  });
});

describe('an upload retried after a gateway crash', () => {
  it('answers the document its first attempt stored, not a second one (the Idempotency-Key reaches compliance)', async () => {
    const biz = await newBusiness(h, p.platformId);
    const fields = { documentType: 'PASSPORT', country: 'US', documentHolder: biz.id };
    const key = `upload-${biz.id}`;
    lostRecords.add(key);
    const [documents, chunks] = [await count('documents'), await count('document_chunks')];
    const send1 = form(fields, { name: 'a.pdf', pieces: [FILES.pdf] });
    const first = await send('POST', '/documents', send1.body, { ...send1.headers, 'idempotency-key': key });
    expect(first.status, first.body.toString()).toBe(201);
    // The answer was lost with its gateway; the client retries with the same key.
    const send2 = form(fields, { name: 'a.pdf', pieces: [FILES.pdf] });
    const retry = await send('POST', '/documents', send2.body, { ...send2.headers, 'idempotency-key': key });
    expect(retry.status, retry.body.toString()).toBe(201);
    expect(json(retry).id).toBe(json(first).id);
    expect(await count('documents')).toBe(documents + 1);
    // The retry's own file is deleted again: only the first one's chunk stays.
    await eventually(async () => ((await count('document_chunks')) === chunks + 1 ? true : undefined));
    const list = json(await send('GET', `/documents?documentHolder=${biz.id}`, undefined));
    expect(list.data.map((d: { id: string }) => d.id)).toEqual([json(first).id]);
    // Without a key every upload is a document of its own.
    expect(json(await upload(fields, FILES.pdf)).id).not.toBe(json(first).id);
  });
});

describe('the OpenAPI document', () => {
  it('documents the multipart bodies and the file download', async () => {
    const doc = json(await send('GET', '/openapi.json', undefined));
    const post = doc.paths['/documents'].post;
    expect(Object.keys(post.requestBody.content)).toEqual(['multipart/form-data']);
    expect(post.requestBody.content['multipart/form-data'].schema).toEqual({
      $ref: '#/components/schemas/DocumentUploadRequest',
    });
    expect(doc.components.schemas.DocumentUploadRequest.properties.file).toMatchObject({
      type: 'string',
      format: 'binary',
    });
    expect(Object.keys(doc.paths['/documents/{documentId}'].put.requestBody.content)).toEqual([
      'multipart/form-data',
    ]);
    expect(Object.keys(post.responses)).toContain('413');
    expect(Object.keys(doc.paths['/documents/{documentId}/file'].get.responses['200'].content)).toEqual([
      'application/pdf',
      'image/jpeg',
      'image/png',
    ]);
    for (const path of ['/beneficial-owners', '/verifications', '/customers/{customerId}/kyc-link'])
      expect(doc.paths[path].post, path).toBeDefined();
  });
});

describe('beneficial owners, verifications and KYC links over HTTP', () => {
  const personalInfo = {
    firstName: 'Jane',
    lastName: 'Smith',
    birthDate: '1978-06-15',
    nationality: 'US',
    address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
    idType: 'SSN',
    identifier: '123-45-6789',
  };
  const post = (path: string, body: unknown) =>
    send('POST', path, [Buffer.from(JSON.stringify(body))], { 'content-type': 'application/json' });

  it('creates, reads, lists and patches beneficial owners in the reference shape', async () => {
    const biz = await newBusiness(h, p.platformId);
    const created = await post('/beneficial-owners', {
      customerId: biz.id,
      roles: ['UBO', 'DIRECTOR'],
      ownershipPercentage: 51,
      personalInfo: { ...personalInfo, email: 'jane@acme.com', phoneNumber: '+14155550192' },
    });
    expect(created.status, created.body.toString()).toBe(201);
    const o = json(created);
    expect(o).toEqual({
      id: expect.stringMatching(/^BeneficialOwner:/),
      customerId: biz.id,
      roles: ['UBO', 'DIRECTOR'],
      ownershipPercentage: 51,
      personalInfo: { ...personalInfo, email: 'jane@acme.com', phoneNumber: '+14155550192' },
      kycStatus: 'PENDING',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const approved = await eventually(async () => {
      const r = json(await send('GET', `/beneficial-owners/${o.id}`, undefined));
      return r.kycStatus === 'APPROVED' ? r : undefined;
    });
    expect(approved.id).toBe(o.id);
    const bad = await post('/beneficial-owners', {
      customerId: biz.id,
      roles: ['UBO'],
      ownershipPercentage: 50,
      personalInfo,
    });
    expect(bad.status).toBe(400);
    expect(json(bad).details.errors.map((e: { field: string }) => e.field)).toEqual(['ownershipPercentage']);
    const shape = await post('/beneficial-owners', {
      customerId: biz.id,
      roles: ['OWNER'],
      ownershipPercentage: 5,
      personalInfo,
    });
    expect(shape.status).toBe(400);
    const patched = await send(
      'PATCH',
      `/beneficial-owners/${o.id}`,
      [Buffer.from(JSON.stringify({ personalInfo: { lastName: 'Smith002' } }))],
      {
        'content-type': 'application/json',
      },
    );
    expect(json(patched)).toMatchObject({
      kycStatus: 'PENDING',
      personalInfo: { lastName: 'Smith002', firstName: 'Jane' },
    });
    const list = json(await send('GET', `/beneficial-owners?customerId=${biz.id}`, undefined));
    expect(list).toMatchObject({ totalCount: 1, hasMore: false, data: [{ id: o.id }] });
  });

  it('verifies a business and shows the outcome on GET /customers/{id}', async () => {
    const biz = await newBusiness(h, p.platformId, 'REG-909');
    const o = json(
      await post('/beneficial-owners', {
        customerId: biz.id,
        roles: ['UBO'],
        ownershipPercentage: 100,
        personalInfo,
      }),
    );
    const first = await post('/verifications', { customerId: biz.id });
    expect(first.status).toBe(200);
    const v = json(first);
    expect(v).toMatchObject({ customerId: biz.id, verificationStatus: 'RESOLVE_ERRORS' });
    expect(v.errors.map((e: { type: string }) => e.type)).toEqual([
      'MISSING_LEGAL_PRESENCE_DOCUMENT',
      'MISSING_PROOF_OF_ADDRESS_DOCUMENT',
      'MISSING_IDENTITY_DOCUMENT',
    ]);
    expect(v.errors[0].acceptedDocumentTypes).toContain('CERTIFICATE_OF_INCORPORATION');
    for (const [holder, documentType] of [
      [biz.id, 'CERTIFICATE_OF_INCORPORATION'],
      [biz.id, 'UTILITY_BILL'],
      [o.id, 'PASSPORT'],
    ])
      expect((await upload({ documentType, country: 'US', documentHolder: holder }, FILES.pdf)).status).toBe(
        201,
      );
    const again = json(await post('/verifications', { customerId: biz.id }));
    expect(again).toMatchObject({ id: v.id, verificationStatus: 'IN_PROGRESS', errors: [] });
    const done = await eventually(async () => {
      const r = json(await send('GET', `/verifications/${v.id}`, undefined));
      return r.verificationStatus === 'APPROVED' ? r : undefined;
    });
    expect(done.id).toBe(v.id);
    // read your writes: once the verification shows APPROVED, so does the customer
    expect(json(await send('GET', `/customers/${biz.id}`, undefined)).kybStatus).toBe('APPROVED');
    const listed = json(
      await send('GET', `/verifications?customerId=${biz.id}&verificationStatus=APPROVED`, undefined),
    );
    expect(listed.data.map((x: { id: string }) => x.id)).toEqual([v.id]);
  });

  it('answers a kyc-link for a customer of the platform only', async () => {
    const biz = await newBusiness(h, p.platformId);
    const res = await post(`/customers/${biz.id}/kyc-link`, { redirectUri: 'https://app.example.com/done' });
    expect(res.status, res.body.toString()).toBe(201);
    expect(json(res)).toEqual({
      kycUrl: expect.stringMatching(/^https:\/\/kyc\.sandbox\.sluice\.local\/onboard\//),
      expiresAt: expect.any(String),
      provider: 'SUMSUB',
      token: expect.any(String),
    });
    const noBody = await send('POST', `/customers/${biz.id}/kyc-link`, undefined);
    expect(noBody.status).toBe(201);
    const q = await newPlatformWithCredential(h);
    const foreign = await newBusiness(h, q.platformId);
    expect((await post(`/customers/${foreign.id}/kyc-link`, {})).status).toBe(404);
  });
});
