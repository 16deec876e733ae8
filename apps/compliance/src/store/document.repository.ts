import type { MasterKeyring } from '@sluice/crypto';
import type { EntityManager } from '@sluice/store';
import type { CursorPosition, Page } from '@sluice/core';
import type { DocumentContentType, DocumentRecord, DocumentSide, DocumentType } from '../domain/document.js';
import { openDocumentDetails, sealDocumentDetails } from './sealing.js';
import { date, keysetPage } from './sql.js';

/**
 * Document metadata and the key of its encrypted file (exact SQL; the chunks are in the
 * DocumentStore). The file name and document number are sealed in `sealed_details`
 * (store/sealing.ts); `file_name` and `document_number` hold them in plain text only in rows
 * written before sealing, until `rewrap`.
 */

const COLUMNS = `id, platform_id, document_holder, customer_id, document_type, country, sealed_details, file_name, side,
  document_number, blob_id, content_type, size_bytes, sha256, chunk_count, key_id, wrapped_key, request_key, created_at, updated_at`;

interface Row {
  id: string;
  platform_id: string;
  document_holder: string;
  customer_id: string;
  document_type: DocumentType;
  country: string;
  sealed_details: string | null;
  file_name: string | null;
  side: DocumentSide | null;
  document_number: string | null;
  blob_id: string;
  content_type: DocumentContentType;
  size_bytes: string | number;
  sha256: string;
  chunk_count: number;
  key_id: string;
  wrapped_key: Buffer;
  request_key: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

function toDocument(r: Row, keyring: MasterKeyring): DocumentRecord {
  const details = r.sealed_details
    ? openDocumentDetails(keyring, r.id, r.sealed_details)
    : { fileName: r.file_name ?? '', ...(r.document_number !== null ? { documentNumber: r.document_number } : {}) };
  return {
    id: r.id,
    platformId: r.platform_id,
    documentHolder: r.document_holder,
    customerId: r.customer_id,
    documentType: r.document_type,
    country: r.country,
    fileName: details.fileName,
    ...(r.side ? { side: r.side } : {}),
    ...(details.documentNumber !== undefined ? { documentNumber: details.documentNumber } : {}),
    file: {
      blobId: r.blob_id,
      contentType: r.content_type,
      sizeBytes: Number(r.size_bytes),
      sha256: r.sha256,
      chunkCount: r.chunk_count,
      keyId: r.key_id,
      wrappedKey: Buffer.from(r.wrapped_key),
    },
    ...(r.request_key !== null ? { requestKey: r.request_key } : {}),
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
}

/** The values after the holder columns; the file name and document number sealed (their own columns null). */
function values(d: DocumentRecord, keyring: MasterKeyring): unknown[] {
  return [
    d.documentType,
    d.country,
    sealDocumentDetails(keyring, d.id, d),
    d.side ?? null,
    d.file.blobId,
    d.file.contentType,
    d.file.sizeBytes,
    d.file.sha256,
    d.file.chunkCount,
    d.file.keyId,
    d.file.wrappedKey,
    d.updatedAt,
  ];
}

export class DocumentRepository {
  constructor(private readonly keyring: MasterKeyring) {}

  private readonly toDocument = (r: Row): DocumentRecord => toDocument(r, this.keyring);

  /**
   * Inserts a new document; false (nothing written) when the platform already has a document of
   * its request key (a concurrent upload with the key waits for the other's commit, then finds it).
   */
  async insert(em: EntityManager, d: DocumentRecord): Promise<boolean> {
    const rows = await em.execute<{ id: string }[]>(
      `INSERT INTO documents (id, platform_id, document_holder, customer_id, created_at, request_key, document_type, country,
         sealed_details, side, blob_id, content_type, size_bytes, sha256, chunk_count, key_id, wrapped_key, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (platform_id, request_key) WHERE request_key IS NOT NULL DO NOTHING
       RETURNING id`,
      [d.id, d.platformId, d.documentHolder, d.customerId, d.createdAt, d.requestKey ?? null, ...values(d, this.keyring)],
    );
    return rows.length > 0;
  }

  /** The platform's document created by the upload of this request key. */
  async findByRequestKey(em: EntityManager, platformId: string, requestKey: string): Promise<DocumentRecord | undefined> {
    const rows = await em.execute<Row[]>(`SELECT ${COLUMNS} FROM documents WHERE platform_id = ? AND request_key = ?`, [
      platformId,
      requestKey,
    ]);
    return rows[0] ? this.toDocument(rows[0]) : undefined;
  }

  /** Replaces the metadata and file of a document (the holder stays). */
  async replace(em: EntityManager, d: DocumentRecord): Promise<void> {
    await em.execute(
      `UPDATE documents SET document_type = ?, country = ?, sealed_details = ?, file_name = NULL, document_number = NULL,
         side = ?, blob_id = ?, content_type = ?, size_bytes = ?, sha256 = ?, chunk_count = ?, key_id = ?, wrapped_key = ?,
         updated_at = ?
       WHERE id = ?`,
      [...values(d, this.keyring), d.id],
    );
  }

  async delete(em: EntityManager, id: string): Promise<void> {
    await em.execute(`DELETE FROM documents WHERE id = ?`, [id]);
  }

  async find(
    em: EntityManager,
    platformId: string,
    id: string,
    lock?: 'update',
  ): Promise<DocumentRecord | undefined> {
    const rows = await em.execute<Row[]>(
      `SELECT ${COLUMNS} FROM documents WHERE platform_id = ? AND id = ?${lock ? ' FOR UPDATE' : ''}`,
      [platformId, id],
    );
    return rows[0] ? this.toDocument(rows[0]) : undefined;
  }

  /** Holder and type of every document of a customer and of its beneficial owners. */
  async kindsOfCustomer(
    em: EntityManager,
    platformId: string,
    customerId: string,
  ): Promise<{ documentHolder: string; documentType: DocumentType }[]> {
    const rows = await em.execute<{ document_holder: string; document_type: DocumentType }[]>(
      `SELECT document_holder, document_type FROM documents WHERE platform_id = ? AND customer_id = ?`,
      [platformId, customerId],
    );
    return rows.map((r) => ({ documentHolder: r.document_holder, documentType: r.document_type }));
  }

  list(
    em: EntityManager,
    platformId: string,
    holder: string | undefined,
    size: number,
    after: CursorPosition | undefined,
  ): Promise<Page<DocumentRecord>> {
    return keysetPage<Row, DocumentRecord>(em, {
      table: 'documents',
      columns: COLUMNS,
      where: holder ? ['platform_id = ?', 'document_holder = ?'] : ['platform_id = ?'],
      params: holder ? [platformId, holder] : [platformId],
      order: 'DESC',
      size,
      after,
      map: this.toDocument,
    });
  }
}
