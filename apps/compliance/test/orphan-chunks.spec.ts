import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@sluice/core';
import { migrate, openStore } from '@sluice/store';
import { eventually } from '@sluice/testing';
import { OrphanChunkSweeper } from '../src/app/orphan-chunks.sweeper.js';
import { migrations } from '../src/store/migrations.js';
import { UnreferencedBlobRepository } from '../src/store/unreferenced-blob.repository.js';
import { FaultyDocumentStore } from './support/faulty-document.store.js';
import { newBusiness, newPlatform, rejection, startCompliance, type Harness } from './support/harness.js';
import {
  ABANDON_S,
  age,
  orphanChunkTests,
  tracked,
  uploadInProgress,
  type OrphanChunksContext,
} from './support/orphan-chunks.scenario.js';

// Compliance on the Postgres document store (the default), its store wrapped to fail when told and
// its clock driven by hand (only the uploads' own deadline reads it; the sweeper reads the database's).
let h: Harness;
let store: FaultyDocumentStore;
const clock = new ManualClock();

beforeAll(async () => {
  h = await startCompliance(
    'orphans',
    // The service's own sweeper runs once at start, then not while the tests sweep by hand.
    { DOCUMENT_ORPHAN_SWEEP_MS: '3600000' },
    { documentStore: (configured) => (store = new FaultyDocumentStore(configured)) },
    { clock },
  );
});
afterAll(async () => {
  await h?.stop();
});

async function chunksOf(blobId: string): Promise<number> {
  return (
    await h.sql.query(`SELECT count(*)::int AS n FROM compliance.document_chunks WHERE blob_id = $1`, [
      blobId,
    ])
  ).rows[0].n;
}
const context = (): OrphanChunksContext => ({ h, store, chunksOf });

/** What a crash mid-upload leaves: the blob's row (committed first), then `n` chunks, no document. */
async function crashedUpload(n: number): Promise<string> {
  const blob = randomUUID();
  await h.sql.query(`INSERT INTO compliance.unreferenced_blobs (blob_id) VALUES ($1)`, [blob]);
  for (let k = 0; k < n; k++) await store.putChunk(blob, k, Buffer.from(`sealed ${k}`));
  return blob;
}

describe('orphan chunks on the Postgres document store', () => {
  orphanChunkTests(context);

  it('an upload writes no chunk once it has streamed for half the abandon age, and keeps none', async () => {
    const platformId = await newPlatform(h);
    const slow = await uploadInProgress(context(), {
      platformId,
      documentHolder: (await newBusiness(h, platformId)).id,
    });
    clock.advance((ABANDON_S / 2) * 1000 + 1000);
    expect((await rejection(slow.finish())).code).toBe('DOCUMENT_UPLOAD_EXPIRED');
    expect(await chunksOf(slow.blobId)).toBe(0);
    expect((await tracked(h)).has(slow.blobId)).toBe(false);
  });

  it('runs by itself beside the other workers, every DOCUMENT_ORPHAN_SWEEP_MS', async () => {
    expect(h.graph.workers).toContain(h.graph.orphanChunks);
    expect(h.graph.workers).toContain(h.graph.screening);
    const running = new OrphanChunkSweeper(
      h.deps.orm,
      new UnreferencedBlobRepository(),
      store,
      h.deps.logger,
      {
        abandonAfterSeconds: ABANDON_S,
        everyMs: 100,
      },
    );
    running.start();
    try {
      // One orphan, then another once the first is gone: the second is found by a later pass.
      for (const n of [2, 3]) {
        const blob = await crashedUpload(n);
        await age(h, ABANDON_S + 60, blob);
        await eventually(async () => (await chunksOf(blob)) === 0 && !(await tracked(h)).has(blob));
      }
    } finally {
      await running.stop();
    }
  });

  it('migration 0012 enters the chunk blobs no document references (uploads cut before it), and only those', async () => {
    const schema = 'compliance_before_0012';
    const options = { databaseUrl: h.env.DATABASE_URL!, schema, entities: [] };
    const before = await openStore({ ...options, migrations: migrations.slice(0, 3) });
    try {
      expect(await migrate(before, schema)).toEqual([
        '0001_compliance_tables',
        '0010_sealed_personal_data',
        '0011_document_request_key',
      ]);
      const sql = (text: string, params: unknown[] = []) => before.em.fork().execute(text, params);
      await sql(
        `INSERT INTO documents (id, platform_id, document_holder, customer_id, document_type, country, file_name, blob_id,
           content_type, size_bytes, sha256, chunk_count, key_id, wrapped_key, created_at, updated_at)
         VALUES ('Document:kept', 'Platform:p', 'Customer:c', 'Customer:c', 'PASSPORT', 'US', 'a.pdf', 'blob-kept',
           'application/pdf', 10, 'x', 2, 'k', '\\x00', now(), now())`,
      );
      for (const [blob, idx] of [
        ['blob-kept', 0],
        ['blob-kept', 1],
        ['blob-cut', 0],
        ['blob-cut', 1],
        ['blob-cut-too', 0],
      ] as const)
        await sql(`INSERT INTO document_chunks (blob_id, idx, data) VALUES (?, ?, '\\x01')`, [blob, idx]);
    } finally {
      await before.close();
    }
    const after = await openStore({ ...options, migrations });
    try {
      expect(await migrate(after, schema)).toEqual(['0012_unreferenced_blobs']);
      const rows = await after.em
        .fork()
        .execute<{ blob_id: string }[]>(`SELECT blob_id FROM unreferenced_blobs ORDER BY blob_id`);
      expect(rows.map((r) => r.blob_id)).toEqual(['blob-cut', 'blob-cut-too']);
    } finally {
      await after.close();
    }
  });
});
