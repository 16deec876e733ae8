import type { DocumentStore } from '../../src/app/ports.js';

/**
 * A DocumentStore that passes everything to a real one until a test makes it fail: its chunk
 * writes after `putsAfter` more (the store going away mid-upload) and its deletions (so an upload
 * cannot clean up after itself, as when its process dies, and the sweeper cannot either).
 */
export class FaultyDocumentStore implements DocumentStore {
  private putsLeft = Infinity;
  private deletesFail = false;

  constructor(readonly inner: DocumentStore & { close?(): void }) {}

  get kind(): string {
    return this.inner.kind;
  }

  /** Fails from now on as told, until `heal`. */
  fail(o: { putsAfter?: number; deletes?: boolean }): void {
    this.putsLeft = o.putsAfter ?? Infinity;
    this.deletesFail = o.deletes ?? false;
  }

  heal(): void {
    this.fail({});
  }

  async putChunk(blobId: string, index: number, data: Buffer): Promise<void> {
    if (this.putsLeft <= 0) throw new Error('the document store is unreachable (test fault)');
    this.putsLeft--;
    await this.inner.putChunk(blobId, index, data);
  }

  getChunk(blobId: string, index: number): Promise<Buffer | undefined> {
    return this.inner.getChunk(blobId, index);
  }

  async deleteBlob(blobId: string, chunkCount: number): Promise<void> {
    if (this.deletesFail) throw new Error('the document store is unreachable (test fault)');
    await this.inner.deleteBlob(blobId, chunkCount);
  }

  async deleteAllChunks(blobId: string): Promise<number> {
    if (this.deletesFail) throw new Error('the document store is unreachable (test fault)');
    return this.inner.deleteAllChunks(blobId);
  }

  close(): void {
    this.inner.close?.();
  }
}
