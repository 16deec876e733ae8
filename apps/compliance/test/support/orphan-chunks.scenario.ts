import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { compliance } from '@sluice/contracts';
import { sumOf } from '@sluice/metrics';
import { eventually } from '@sluice/testing';
import { OrphanChunkSweeper } from '../../src/app/orphan-chunks.sweeper.js';
import { UnreferencedBlobRepository } from '../../src/store/unreferenced-blob.repository.js';
import type { FaultyDocumentStore } from './faulty-document.store.js';
import { FILES, download, newBusiness, newPlatform, rejection, upload, type Harness } from './harness.js';

/** What the orphan-chunk tests need of a compliance service on one kind of document store. */
export interface OrphanChunksContext {
  h: Harness;
  /** The service's document store: DOCUMENT_STORE's, wrapped to fail when told. */
  store: FaultyDocumentStore;
  /** How many chunks of a blob the store holds, read from the store itself (its table, its bucket). */
  chunksOf(blobId: string): Promise<number>;
}

/** DOCUMENT_UPLOAD_ABANDON_AFTER_SECONDS of the services under test (the default). */
export const ABANDON_S = 3600;
/** A PDF of three chunks: 256 KiB, 256 KiB and 100 KiB and a few bytes. */
export const THREE_CHUNKS = Buffer.concat([FILES.pdf, Buffer.alloc(2 * 256 * 1024 + 100 * 1024, 0x41)]);
/** The first 600 KiB of THREE_CHUNKS: two chunks sealed and stored, the third waiting for more. */
export const FIRST_PART = THREE_CHUNKS.subarray(0, 600 * 1024);

/** The blob ids in compliance.unreferenced_blobs. */
export async function tracked(h: Harness): Promise<Set<string>> {
  const r = await h.sql.query<{ blob_id: string }>(`SELECT blob_id FROM compliance.unreferenced_blobs`);
  return new Set(r.rows.map((x) => x.blob_id));
}

/** Makes blobs' rows `seconds` old (by the database's clock, as the sweeper reads them). */
export async function age(h: Harness, seconds: number, ...blobIds: string[]): Promise<void> {
  await h.sql.query(
    `UPDATE compliance.unreferenced_blobs SET since = now() - $2::integer * interval '1 second' WHERE blob_id = ANY($1)`,
    [blobIds, seconds],
  );
}

/** The blob of a document's file. */
export async function blobOf(h: Harness, documentId: string): Promise<string> {
  return (await h.sql.query(`SELECT blob_id FROM compliance.documents WHERE id = $1`, [documentId])).rows[0]
    .blob_id;
}

/** `document_orphan_chunks_deleted_total` of the service. */
export async function deletedChunks(h: Harness): Promise<number> {
  return sumOf(await h.deps.metrics.samples(), 'document_orphan_chunks_deleted_total');
}

/** An upload streaming: the header and FIRST_PART sent, and the blob its chunks go to, once two are stored. */
export async function uploadInProgress(
  c: OrphanChunksContext,
  header: { platformId: string; documentHolder: string },
) {
  const before = await tracked(c.h);
  const call = c.h.compliance.uploadDocument();
  await call.write({
    header: {
      ...header,
      documentType: compliance.DocumentType.PASSPORT,
      country: 'US',
      side: compliance.DocumentSide.UNSPECIFIED,
      fileName: 'slow.pdf',
    },
  });
  await call.write({ chunk: FIRST_PART });
  const blobId = await eventually(async () => {
    const fresh = [...(await tracked(c.h))].filter((b) => !before.has(b));
    return fresh.length === 1 && (await c.chunksOf(fresh[0]!)) === 2 ? fresh[0] : undefined;
  });
  return {
    blobId,
    /** Sends the rest and the trailer; the call's answer. */
    async finish() {
      await call.write({ chunk: THREE_CHUNKS.subarray(FIRST_PART.length) });
      await call.write({ trailer: { sizeBytes: BigInt(THREE_CHUNKS.length) } });
      return call.end();
    },
  };
}

/**
 * The orphan sweeper on one document store: what it deletes (the chunks of uploads cut short, once
 * their row is older than DOCUMENT_UPLOAD_ABANDON_AFTER_SECONDS; an old file whose deletion failed)
 * and what it never deletes (a committed document's chunks; an upload still streaming), alone and
 * two at once. A cut upload is a real one through a store that fails at its last chunk and cannot
 * delete (what a crash leaves: chunks and the row, no document); many orphans at once are written
 * as a crash leaves them (the row, then chunks).
 */
export function orphanChunkTests(ctx: () => OrphanChunksContext): void {
  const sweep = () => ctx().h.graph.orphanChunks.sweep();
  const nothing = { blobs: 0, chunks: 0 };

  async function holder(): Promise<{ platformId: string; documentHolder: string }> {
    const { h } = ctx();
    const platformId = await newPlatform(h);
    return { platformId, documentHolder: (await newBusiness(h, platformId)).id };
  }

  /** An upload cut after two of its three chunks, its cleanup failing: its blob. */
  async function cutUpload(header: { platformId: string; documentHolder: string }): Promise<string> {
    const c = ctx();
    const before = await tracked(c.h);
    c.store.fail({ putsAfter: 2, deletes: true });
    try {
      await expect(upload(c.h, header, THREE_CHUNKS)).rejects.toThrow();
    } finally {
      c.store.heal();
    }
    const fresh = [...(await tracked(c.h))].filter((b) => !before.has(b));
    expect(fresh).toHaveLength(1);
    expect(await c.chunksOf(fresh[0]!)).toBe(2);
    return fresh[0]!;
  }

  it('deletes the chunks of an upload cut short once its row is older than the abandon age, not before', async () => {
    const c = ctx();
    const header = await holder();
    const blob = await cutUpload(header);
    const counted = await deletedChunks(c.h);
    expect(await sweep(), 'just cut').toEqual(nothing);
    await age(c.h, ABANDON_S - 60, blob);
    expect(await sweep(), 'a minute younger than the age').toEqual(nothing);
    expect(await c.chunksOf(blob)).toBe(2);
    await age(c.h, ABANDON_S + 60, blob);
    expect(await sweep()).toEqual({ blobs: 1, chunks: 2 });
    expect(await c.chunksOf(blob)).toBe(0);
    expect((await tracked(c.h)).has(blob)).toBe(false);
    expect(await deletedChunks(c.h)).toBe(counted + 2);
    expect(await sweep()).toEqual(nothing);
    expect((await c.h.compliance.listDocuments(header)).documents).toEqual([]);
  });

  it("never deletes a committed document's chunks, even under a row that names its blob", async () => {
    const c = ctx();
    const header = await holder();
    const d = (await upload(c.h, header, THREE_CHUNKS)) as compliance.Document;
    const blob = await blobOf(c.h, d.id);
    expect((await tracked(c.h)).has(blob), 'its row left as the document committed').toBe(false);
    // As migration 0012 enters an upload of the release before whose document commits after it.
    await c.h.sql.query(
      `INSERT INTO compliance.unreferenced_blobs (blob_id, since) VALUES ($1, now() - interval '2 days')`,
      [blob],
    );
    expect(await sweep()).toEqual(nothing);
    expect((await tracked(c.h)).has(blob), 'the row goes, the chunks stay').toBe(false);
    expect(await c.chunksOf(blob)).toBe(3);
    expect((await download(c.h, header.platformId, d.id)).equals(THREE_CHUNKS)).toBe(true);
  });

  it('deletes later the old file of a replaced or deleted document that could not be deleted at once', async () => {
    const c = ctx();
    const header = await holder();
    const replaced = await upload(c.h, header, THREE_CHUNKS);
    const oldBlob = await blobOf(c.h, replaced.id);
    const deleted = await upload(c.h, header, FILES.jpeg);
    const deletedBlob = await blobOf(c.h, deleted.id);
    c.store.fail({ deletes: true });
    try {
      await upload(c.h, { platformId: header.platformId, documentId: replaced.id }, FILES.png);
      await c.h.compliance.deleteDocument({ platformId: header.platformId, documentId: deleted.id });
    } finally {
      c.store.heal();
    }
    const newBlob = await blobOf(c.h, replaced.id);
    expect([await c.chunksOf(oldBlob), await c.chunksOf(deletedBlob)]).toEqual([3, 1]);
    const rows = await tracked(c.h);
    expect([rows.has(oldBlob), rows.has(deletedBlob), rows.has(newBlob)]).toEqual([true, true, false]);
    expect(await sweep(), 'young').toEqual(nothing);
    await age(c.h, ABANDON_S + 1, oldBlob, deletedBlob);
    expect(await sweep()).toEqual({ blobs: 2, chunks: 4 });
    expect([await c.chunksOf(oldBlob), await c.chunksOf(deletedBlob), await c.chunksOf(newBlob)]).toEqual([
      0, 0, 1,
    ]);
    expect((await download(c.h, header.platformId, replaced.id)).equals(FILES.png)).toBe(true);
  });

  it('leaves an upload in progress alone; its document commits whole', async () => {
    const c = ctx();
    const header = await holder();
    const slow = await uploadInProgress(c, header);
    expect(await sweep()).toEqual(nothing);
    expect(await c.chunksOf(slow.blobId)).toBe(2);
    const d = (await slow.finish()).document!;
    expect(await blobOf(c.h, d.id)).toBe(slow.blobId);
    expect((await tracked(c.h)).has(slow.blobId)).toBe(false);
    expect(await c.chunksOf(slow.blobId)).toBe(3);
    expect((await download(c.h, header.platformId, d.id)).equals(THREE_CHUNKS)).toBe(true);
  });

  it('refuses to commit an upload whose blob the sweeper took, and deletes what it wrote after', async () => {
    const c = ctx();
    const header = await holder();
    const slow = await uploadInProgress(c, header);
    await age(c.h, ABANDON_S + 60, slow.blobId);
    expect(await sweep()).toEqual({ blobs: 1, chunks: 2 });
    expect((await rejection(slow.finish())).code).toBe('DOCUMENT_UPLOAD_EXPIRED');
    expect(await c.chunksOf(slow.blobId), 'its third chunk, written after the sweep, deleted').toBe(0);
    expect((await tracked(c.h)).has(slow.blobId)).toBe(false);
    expect((await c.h.compliance.listDocuments(header)).documents).toEqual([]);
  });

  it('keeps a blob whose chunks it cannot delete, and takes it again after another abandon age', async () => {
    const c = ctx();
    const blob = await cutUpload(await holder());
    await age(c.h, ABANDON_S + 60, blob);
    c.store.fail({ deletes: true });
    try {
      expect(await sweep()).toEqual(nothing);
    } finally {
      c.store.heal();
    }
    expect(await c.chunksOf(blob)).toBe(2);
    expect(
      (
        await c.h.sql.query(
          `SELECT 1 FROM compliance.unreferenced_blobs WHERE blob_id = $1 AND since > now() - interval '1 minute'`,
          [blob],
        )
      ).rowCount,
      'postponed',
    ).toBe(1);
    expect(await sweep()).toEqual(nothing);
    await age(c.h, ABANDON_S + 60, blob);
    expect(await sweep()).toEqual({ blobs: 1, chunks: 2 });
    expect(await c.chunksOf(blob)).toBe(0);
  });

  it('two sweepers at once delete each orphan once', async () => {
    const c = ctx();
    const blobs = Array.from({ length: 12 }, () => randomUUID());
    const counts = blobs.map((_, i) => (i % 3) + 1);
    // What a crash mid-upload leaves: the row (committed first), then chunks, no document.
    for (const [i, blob] of blobs.entries()) {
      await c.h.sql.query(`INSERT INTO compliance.unreferenced_blobs (blob_id) VALUES ($1)`, [blob]);
      for (let k = 0; k < counts[i]!; k++) await c.store.putChunk(blob, k, Buffer.from(`sealed ${k}`));
    }
    await age(c.h, ABANDON_S + 60, ...blobs);
    const counted = await deletedChunks(c.h);
    const repo = new UnreferencedBlobRepository();
    const sweeper = () =>
      new OrphanChunkSweeper(c.h.deps.orm, repo, c.store, c.h.deps.logger, {
        abandonAfterSeconds: ABANDON_S,
        everyMs: 3_600_000,
        batch: 2,
        metrics: c.h.deps.metrics,
      });
    const [a, b] = await Promise.all([sweeper().sweep(), sweeper().sweep()]);
    const total = counts.reduce((x, y) => x + y, 0);
    expect(a.blobs + b.blobs, `${a.blobs} + ${b.blobs}`).toBe(blobs.length);
    expect(a.chunks + b.chunks).toBe(total);
    for (const blob of blobs) expect(await c.chunksOf(blob)).toBe(0);
    const rows = await tracked(c.h);
    expect(blobs.filter((x) => rows.has(x))).toEqual([]);
    expect(await deletedChunks(c.h)).toBe(counted + total);
  });
}
