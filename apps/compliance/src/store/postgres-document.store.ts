import type { MikroORM } from '@sluice/store';
import type { DocumentStore } from '../domain/document.js';

/**
 * The default DocumentStore: encrypted chunks in `compliance.document_chunks`. Works for every
 * replica with nothing more to run; each chunk is one row (at most DOCUMENT_CHUNK_BYTES plus 28
 * bytes of IV and tag), written outside any transaction as the upload streams in.
 */
export class PostgresDocumentStore implements DocumentStore {
  readonly kind = 'postgres';

  constructor(private readonly orm: MikroORM) {}

  async putChunk(blobId: string, index: number, data: Buffer): Promise<void> {
    await this.orm.em.fork().execute(
      `INSERT INTO document_chunks (blob_id, idx, data) VALUES (?, ?, ?)
         ON CONFLICT (blob_id, idx) DO UPDATE SET data = EXCLUDED.data`,
      [blobId, index, data],
    );
  }

  async getChunk(blobId: string, index: number): Promise<Buffer | undefined> {
    const rows = await this.orm.em
      .fork()
      .execute<{ data: Buffer }[]>(`SELECT data FROM document_chunks WHERE blob_id = ? AND idx = ?`, [
        blobId,
        index,
      ]);
    return rows[0] ? Buffer.from(rows[0].data) : undefined;
  }

  async deleteBlob(blobId: string): Promise<void> {
    await this.deleteAllChunks(blobId);
  }

  async deleteAllChunks(blobId: string): Promise<number> {
    const res = await this.orm.em
      .fork()
      .execute(`DELETE FROM document_chunks WHERE blob_id = ?`, [blobId], 'run');
    return (res as { affectedRows?: number }).affectedRows ?? 0;
  }
}
