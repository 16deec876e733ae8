import { DOCUMENT_SIDES, DOCUMENT_TYPES, FieldErrors, country, invalidInput, isId, text } from '@sluice/core';
export { DOCUMENT_SIDES, DOCUMENT_TYPES };
import { fail } from './errors.js';

export type DocumentType = (typeof DOCUMENT_TYPES)[number];

export type DocumentSide = (typeof DOCUMENT_SIDES)[number];

/** Largest accepted file: 10 MiB (10,485,760 bytes); exactly this many bytes is accepted. */
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;

/** Plaintext bytes per encrypted chunk at rest (and per ReadDocumentContent answer). */
export const DOCUMENT_CHUNK_BYTES = 256 * 1024;

export type DocumentContentType = 'application/pdf' | 'image/jpeg' | 'image/png';

/** Bytes `sniffContentType` needs to decide (the PNG signature is the longest). */
export const SNIFF_BYTES = 8;

const SIGNATURES: { type: DocumentContentType; magic: number[] }[] = [
  { type: 'application/pdf', magic: [0x25, 0x50, 0x44, 0x46, 0x2d] }, // %PDF-
  { type: 'image/jpeg', magic: [0xff, 0xd8, 0xff] },
  { type: 'image/png', magic: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
];

/**
 * The type of a file decided by its first bytes (PDF, JPEG or PNG magic numbers), never by its
 * name or declared content type; undefined for anything else.
 */
export function sniffContentType(head: Uint8Array): DocumentContentType | undefined {
  return SIGNATURES.find((s) => s.magic.length <= head.length && s.magic.every((b, i) => head[i] === b))
    ?.type;
}

/** The file extension of a content type (download file names). */
export const EXTENSIONS: Record<DocumentContentType, string> = {
  'application/pdf': 'pdf',
  'image/jpeg': 'jpg',
  'image/png': 'png',
};

export interface DocumentRecord {
  id: string;
  platformId: string;
  /** Customer or BeneficialOwner id. */
  documentHolder: string;
  /** The customer the holder belongs to (the holder itself for a customer). */
  customerId: string;
  documentType: DocumentType;
  country: string;
  fileName: string;
  side?: DocumentSide;
  documentNumber?: string;
  file: StoredFile;
  /** The key of the upload that created it (its Idempotency-Key), unique per platform. */
  requestKey?: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Where and how a document's file is stored: encrypted chunks of a blob, under a wrapped data key. */
export interface StoredFile {
  /** Names the chunks in the DocumentStore (a new blob for every upload). */
  blobId: string;
  contentType: DocumentContentType;
  sizeBytes: number;
  /** Hex SHA-256 of the plaintext. */
  sha256: string;
  chunkCount: number;
  /** Master key that wrapped the data key. */
  keyId: string;
  wrappedKey: Buffer;
}

/** What an upload declares about its document (the multipart fields besides `file`). */
export interface DocumentHeaderInput {
  /** Absent on a replacement (the document keeps its holder). */
  documentHolder?: string;
  documentType: string;
  country: string;
  side?: string;
  documentNumber?: string;
  fileName: string;
}

export type ValidDocumentHeader = Pick<
  DocumentRecord,
  'documentType' | 'country' | 'fileName' | 'side' | 'documentNumber'
> & {
  documentHolder?: string;
};

/** Validates the declared fields of an upload; INVALID_INPUT naming every bad one. */
export function validateDocumentHeader(input: DocumentHeaderInput, replacing: boolean): ValidDocumentHeader {
  const p = new FieldErrors();
  if (!replacing) {
    if (input.documentHolder === undefined || input.documentHolder === '')
      p.add('documentHolder', 'is required');
    else if (!isId(input.documentHolder, 'Customer') && !isId(input.documentHolder, 'BeneficialOwner'))
      p.add('documentHolder', 'must be a Customer or BeneficialOwner id');
  }
  if (!(DOCUMENT_TYPES as readonly string[]).includes(input.documentType))
    p.add('documentType', `must be one of ${DOCUMENT_TYPES.join(', ')}`);
  if (input.country === '') p.add('country', 'is required');
  else country(p, 'country', input.country);
  if (input.side !== undefined && !(DOCUMENT_SIDES as readonly string[]).includes(input.side))
    p.add('side', `must be one of ${DOCUMENT_SIDES.join(', ')}`);
  const documentNumber = text(p, 'documentNumber', input.documentNumber, 100);
  const fileName = input.fileName === '' ? 'document' : text(p, 'file', input.fileName, 255);
  p.throwIfAny();
  const out: ValidDocumentHeader = {
    documentType: input.documentType as DocumentType,
    country: input.country,
    fileName: fileName!,
  };
  if (!replacing) out.documentHolder = input.documentHolder;
  if (input.side !== undefined) out.side = input.side as DocumentSide;
  if (documentNumber !== undefined) out.documentNumber = documentNumber;
  return out;
}

/** 400 INVALID_INPUT on `file`. */
export function invalidFile(message: string): Error {
  return invalidInput([{ field: 'file', message }]);
}

/** The refusal of a file whose content is no PDF, JPEG or PNG. */
export function unsupportedFile(): Error {
  return invalidFile(
    'must be a PDF, JPEG or PNG file (decided by its content, not its name or declared type)',
  );
}

/** The refusal of a file over MAX_DOCUMENT_BYTES. */
export function fileTooLarge(): Error {
  return fail('PAYLOAD_TOO_LARGE', `The file is larger than ${MAX_DOCUMENT_BYTES} bytes (10 MiB)`, {
    maxBytes: MAX_DOCUMENT_BYTES,
  });
}

/**
 * Where encrypted document chunks live (selected by DOCUMENT_STORE): Postgres by default, or an
 * S3-compatible bucket. It only ever sees ciphertext.
 */
export interface DocumentStore {
  readonly kind: string;
  /** Stores chunk `index` of a blob (the same chunk again overwrites it). */
  putChunk(blobId: string, index: number, data: Buffer): Promise<void>;
  getChunk(blobId: string, index: number): Promise<Buffer | undefined>;
  /** Deletes the chunks of a blob (`chunkCount`: how many there may be). */
  deleteBlob(blobId: string, chunkCount: number): Promise<void>;
  /**
   * Deletes every chunk of a blob whose chunk count nobody knows (an upload cut short: the orphan
   * sweeper); answers how many there were.
   */
  deleteAllChunks(blobId: string): Promise<number>;
}
