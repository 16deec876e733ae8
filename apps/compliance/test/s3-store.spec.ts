import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { freePort } from '@sluice/testing';
import { S3DocumentStore } from '../src/store/s3-document.store.js';
import { documentStoreContract } from './support/document-store.contract.js';
import { FaultyDocumentStore } from './support/faulty-document.store.js';
import { orphanChunkTests } from './support/orphan-chunks.scenario.js';
import {
  FILES,
  download,
  newBusiness,
  newPlatform,
  rejection,
  startCompliance,
  upload,
  type Harness,
} from './support/harness.js';

// A local S3-compatible server (s3rver) started by the test; compliance with DOCUMENT_STORE=s3.
const BUCKET = 'sluice-documents';
const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
let server: S3rver;
let dir: string;
let endpoint: string;
let h: Harness;
let s3: S3Client;
let store: FaultyDocumentStore;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 's3rver-'));
  const port = await freePort();
  server = new S3rver({
    address: '127.0.0.1',
    port,
    directory: dir,
    silent: true,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  await server.run();
  endpoint = `http://127.0.0.1:${port}`;
  s3 = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials });
  h = await startCompliance(
    's3',
    {
      DOCUMENT_STORE: 's3',
      DOCUMENT_S3_BUCKET: BUCKET,
      DOCUMENT_S3_ENDPOINT: endpoint,
      DOCUMENT_S3_FORCE_PATH_STYLE: 'true',
      DOCUMENT_S3_ACCESS_KEY_ID: credentials.accessKeyId,
      DOCUMENT_S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      // The service's own orphan sweeper runs once at start, then not while the tests sweep by hand.
      DOCUMENT_ORPHAN_SWEEP_MS: '3600000',
    },
    // The configured S3 store, failing when a test says so.
    { documentStore: (configured) => (store = new FaultyDocumentStore(configured)) },
  );
});
afterAll(async () => {
  await h?.stop();
  s3?.destroy();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function keys(prefix = 'documents/'): Promise<string[]> {
  const r = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (r.Contents ?? []).map((o) => o.Key!).sort();
}

describe('S3-compatible document store', () => {
  it('keeps chunks as objects <prefix><blob>/<index> (the DocumentStore contract)', async () => {
    const store = new S3DocumentStore({
      bucket: BUCKET,
      prefix: 'adapter/',
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
      credentials,
    });
    try {
      await store.putChunk('seen', 0, Buffer.from('x'));
      expect(await keys('adapter/')).toEqual(['adapter/seen/0']);
      await store.deleteBlob('seen', 1);
      await documentStoreContract(store, (n) => `blob-${n}`);
      expect(await keys('adapter/')).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('stores uploads through the service as ciphertext objects and serves them back; delete removes them', async () => {
    const p = await newPlatform(h);
    const biz = await newBusiness(h, p);
    const file = Buffer.concat([FILES.pdf, Buffer.alloc(300 * 1024, 0x41)]);
    const d = await upload(h, { platformId: p, documentHolder: biz.id }, file);
    expect(d.chunkCount).toBe(2);
    expect(d.sha256).toBe(createHash('sha256').update(file).digest('hex'));
    const blob = (await h.sql.query(`SELECT blob_id FROM compliance.documents WHERE id = $1`, [d.id])).rows[0]
      .blob_id;
    expect(await keys(`documents/${blob}/`)).toEqual([`documents/${blob}/0`, `documents/${blob}/1`]);
    expect((await h.sql.query(`SELECT count(*)::int AS n FROM compliance.document_chunks`)).rows[0].n).toBe(
      0,
    );
    expect((await download(h, p, d.id)).equals(file)).toBe(true);
    // the objects hold no plaintext
    const obj = await new S3DocumentStore({
      bucket: BUCKET,
      prefix: 'documents/',
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
      credentials,
    }).getChunk(blob, 1);
    expect(obj!.includes(Buffer.alloc(64, 0x41))).toBe(false);
    // a refused file leaves no object behind
    const before = await keys();
    expect((await rejection(upload(h, { platformId: p, documentHolder: biz.id }, FILES.text))).code).toBe(
      'INVALID_INPUT',
    );
    expect(await keys()).toEqual(before);
    await h.compliance.deleteDocument({ platformId: p, documentId: d.id });
    expect(await keys(`documents/${blob}/`)).toEqual([]);
  });
});

describe('orphan chunks on the S3 store', () => {
  orphanChunkTests(() => ({
    h,
    store,
    chunksOf: async (blobId) => (await keys(`documents/${blobId}/`)).length,
  }));
});
