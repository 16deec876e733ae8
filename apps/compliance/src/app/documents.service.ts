import { randomUUID } from 'node:crypto';
import {
  decodeCursor,
  invalidInput,
  isId,
  newId,
  pageSize,
  validIds,
  type Clock,
  type Page,
} from '@sluice/core';
import type { MasterKeyring } from '@sluice/crypto';
import type { Logger } from '@sluice/logging';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import {
  validateDocumentHeader,
  type DocumentHeaderInput,
  type DocumentRecord,
  type StoredFile,
} from '../domain/document.js';
import { checkFile, newBlobKey, openBlobChunk, sealBlob } from '../domain/document-crypto.js';
import { documentNotFound, fail, uploadExpired } from '../domain/errors.js';
import type { BeneficialOwnerRepository } from '../store/beneficial-owner.repository.js';
import type { DocumentRepository } from '../store/document.repository.js';
import type { UnreferencedBlobRepository } from '../store/unreferenced-blob.repository.js';
import type { VerificationRepository } from '../store/verification.repository.js';
import type { CustomerDirectory, DocumentStore } from './ports.js';

/**
 * Verification documents. An upload is checked (holder of the platform, declared fields, type by
 * content, size) and encrypted chunk by chunk into the DocumentStore as it streams in, under a
 * fresh data key; only then is the document row written (or, for a replacement, switched to the
 * new file, and the old file's chunks deleted). A failed upload deletes the chunks it wrote. A new
 * document's request key (the upload's Idempotency-Key) makes a retry answer the document its
 * first attempt stored, the retry's own file deleted.
 *
 * Chunks no document references always have a row in `unreferenced_blobs` (the upload's blob is
 * entered before its first chunk, and leaves in the transaction that commits its document; an old
 * file is entered in the transaction that drops it): whatever dies mid-way, the orphan sweeper
 * (orphan-chunks.sweeper.ts) finds them once older than `abandonAfterMs`. So that it never takes
 * an upload still streaming, an upload writes no chunk once it has run half of that
 * (DOCUMENT_UPLOAD_EXPIRED), and its document commits only if its row is still there.
 */
export class DocumentsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly repos: {
      documents: DocumentRepository;
      owners: BeneficialOwnerRepository;
      verifications: VerificationRepository;
      blobs: UnreferencedBlobRepository;
    },
    private readonly customers: CustomerDirectory,
    private readonly files: DocumentStore,
    private readonly keyring: MasterKeyring,
    private readonly logger: Logger,
    /** DOCUMENT_UPLOAD_ABANDON_AFTER_SECONDS in ms: an upload may stream for half of it. */
    private readonly abandonAfterMs: number,
  ) {}

  /**
   * Uploads a new document (`documentId` absent) or replaces one. `bytes` is the file, read once,
   * in order; nothing of it is read before the header and the holder are checked. A new
   * document's `requestKey` already stored for the platform answers that document (a retry of an
   * upload stored but never answered: its gateway died before recording the Idempotency-Key);
   * the file just read is deleted again.
   */
  async upload(
    platformId: string,
    documentId: string | undefined,
    header: DocumentHeaderInput,
    bytes: AsyncIterable<Uint8Array>,
    requestKey?: string,
  ): Promise<DocumentRecord> {
    validIds(['platformId', platformId, 'Platform']);
    if (documentId !== undefined) validIds(['documentId', documentId, 'Document']);
    const valid = validateDocumentHeader(header, documentId !== undefined);
    const existing = documentId ? await this.find(platformId, documentId) : undefined;
    const holder = existing
      ? { documentHolder: existing.documentHolder, customerId: existing.customerId }
      : await this.holder(platformId, valid.documentHolder!);
    const file = await this.store(bytes);
    try {
      const now = this.clock.now();
      const doc = await transactional(this.orm, async (em) => {
        if (existing) {
          const current = await this.repos.documents.find(em, platformId, existing.id, 'update');
          if (!current) throw documentNotFound();
          const next: DocumentRecord = { ...current, ...valid, ...holder, file, updatedAt: now };
          if (valid.side === undefined) delete next.side;
          if (valid.documentNumber === undefined) delete next.documentNumber;
          await this.repos.documents.replace(em, next);
          await this.adopt(em, file);
          // The old file is unreferenced from this commit on: entered, so its chunks are deleted even if this process dies.
          await this.repos.blobs.track(em, current.file.blobId);
          return { next, replaced: current.file };
        }
        const key = requestKey || undefined;
        const first = key ? await this.repos.documents.findByRequestKey(em, platformId, key) : undefined;
        if (first) return { next: first, replaced: file };
        const created: DocumentRecord = {
          id: newId('Document'),
          platformId,
          ...valid,
          ...holder,
          file,
          ...(key ? { requestKey: key } : {}),
          createdAt: now,
          updatedAt: now,
        };
        if (await this.repos.documents.insert(em, created)) {
          await this.adopt(em, file);
          return { next: created, replaced: undefined };
        }
        // A concurrent upload with the same key committed first.
        return { next: (await this.repos.documents.findByRequestKey(em, platformId, key!))!, replaced: file };
      });
      // The file the document no longer has (replaced), or this upload's own (its key's document was stored already).
      if (doc.replaced) await this.discard(doc.replaced);
      return doc.next;
    } catch (err) {
      await this.discard(file);
      throw err;
    }
  }

  async get(platformId: string, id: string): Promise<DocumentRecord> {
    validIds(['platformId', platformId, 'Platform'], ['documentId', id, 'Document']);
    return this.find(platformId, id);
  }

  async list(
    platformId: string,
    holder: string | undefined,
    limit: number | undefined,
    cursor: string | undefined,
  ): Promise<Page<DocumentRecord>> {
    validIds(['platformId', platformId, 'Platform']);
    if (holder !== undefined && !isId(holder, 'Customer') && !isId(holder, 'BeneficialOwner'))
      validIds(['documentHolder', holder, 'Customer']);
    return this.repos.documents.list(
      this.orm.em.fork(),
      platformId,
      holder,
      pageSize(limit),
      decodeCursor(cursor),
    );
  }

  /** Deletes a document and its file; refused (409) while its customer's verification is under way. */
  async delete(platformId: string, id: string): Promise<void> {
    validIds(['platformId', platformId, 'Platform'], ['documentId', id, 'Document']);
    const file = await transactional(this.orm, async (em) => {
      const doc = await this.repos.documents.find(em, platformId, id, 'update');
      if (!doc) throw documentNotFound();
      if (await this.repos.verifications.underWay(em, platformId, doc.customerId))
        throw fail(
          'DOCUMENT_IN_VERIFICATION',
          'The document was submitted for a verification that is under way; it cannot be deleted now',
          { documentId: id },
        );
      await this.repos.blobs.track(em, doc.file.blobId);
      await this.repos.documents.delete(em, id);
      return doc.file;
    });
    await this.discard(file);
  }

  /** Chunk `index` of a document's file, decrypted and authenticated. */
  async readChunk(
    platformId: string,
    id: string,
    index: number,
  ): Promise<{ document: DocumentRecord; data: Buffer }> {
    const document = await this.get(platformId, id);
    if (!Number.isInteger(index) || index < 0 || index >= document.file.chunkCount)
      throw invalidInput([
        { field: 'chunkIndex', message: `must be an integer from 0 to ${document.file.chunkCount - 1}` },
      ]);
    const sealed = await this.files.getChunk(document.file.blobId, index);
    if (!sealed)
      throw new Error(
        `chunk ${index} of blob ${document.file.blobId} is missing from the ${this.files.kind} store`,
      );
    return { document, data: openBlobChunk(this.keyring, document.file, index, sealed) };
  }

  private async find(platformId: string, id: string): Promise<DocumentRecord> {
    const doc = await this.repos.documents.find(this.orm.em.fork(), platformId, id);
    if (!doc) throw documentNotFound();
    return doc;
  }

  /** The holder of a new document: a live customer or a beneficial owner of the platform. */
  private async holder(
    platformId: string,
    id: string,
  ): Promise<Pick<DocumentRecord, 'documentHolder' | 'customerId'>> {
    const notFound = () =>
      fail(
        'DOCUMENT_HOLDER_NOT_FOUND',
        'The documentHolder is no customer or beneficial owner of this platform',
        {
          documentHolder: id,
        },
      );
    if (isId(id, 'BeneficialOwner')) {
      const owner = await this.repos.owners.find(this.orm.em.fork(), platformId, id);
      if (!owner) throw notFound();
      return { documentHolder: id, customerId: owner.customerId };
    }
    const customer = await this.customers.getCustomer(platformId, id);
    if (!customer || customer.deleted) throw notFound();
    return { documentHolder: id, customerId: id };
  }

  /**
   * Checks, encrypts and stores a file as it streams in; on any failure the chunks written are
   * deleted. Its blob is entered in `unreferenced_blobs` (committed) before its first chunk.
   */
  private async store(bytes: AsyncIterable<Uint8Array>): Promise<StoredFile> {
    const blobId = randomUUID();
    await this.repos.blobs.track(this.orm.em.fork(), blobId);
    const deadline = this.clock.now().getTime() + this.abandonAfterMs / 2;
    const { dataKey, wrapped } = newBlobKey(this.keyring, blobId);
    const checked = checkFile(bytes);
    let written = 0;
    try {
      for await (const chunk of sealBlob(checked.bytes, dataKey, blobId)) {
        if (this.clock.now().getTime() > deadline) throw uploadExpired();
        await this.files.putChunk(blobId, chunk.index, chunk.sealed);
        written = chunk.index + 1;
      }
      const { contentType, sizeBytes, sha256 } = checked.result();
      return {
        blobId,
        contentType,
        sizeBytes,
        sha256,
        chunkCount: written,
        keyId: wrapped.keyId,
        wrappedKey: wrapped.wrapped,
      };
    } catch (err) {
      await this.discard({ blobId, chunkCount: written + 1 });
      throw err;
    } finally {
      dataKey.fill(0);
    }
  }

  /**
   * The upload's blob is the document's now: its `unreferenced_blobs` row leaves in the
   * transaction that commits the document. Gone means the orphan sweeper took it (and its chunks):
   * the upload fails.
   */
  private async adopt(em: EntityManager, file: StoredFile): Promise<void> {
    if (!(await this.repos.blobs.untrack(em, file.blobId))) throw uploadExpired();
  }

  /**
   * Deletes a file's chunks, then its `unreferenced_blobs` row; a failure is logged and the row
   * stays, so the orphan sweeper deletes the chunks later.
   */
  private async discard(file: Pick<StoredFile, 'blobId' | 'chunkCount'>): Promise<void> {
    try {
      await this.files.deleteBlob(file.blobId, file.chunkCount);
      await this.repos.blobs.untrack(this.orm.em.fork(), file.blobId);
    } catch (err) {
      this.logger.warn(
        { err, blobId: file.blobId },
        'could not delete the chunks of a discarded document file; the orphan sweeper will',
      );
    }
  }
}
