import { createHash } from 'node:crypto';
import {
  newDataKey,
  openChunk,
  rewrapDataKey,
  sealChunks,
  unwrapDataKey,
  wrapDataKey,
  type MasterKeyring,
  type SealedChunk,
  type WrappedDataKey,
} from '@sluice/crypto';
import {
  DOCUMENT_CHUNK_BYTES,
  MAX_DOCUMENT_BYTES,
  SNIFF_BYTES,
  fileTooLarge,
  invalidFile,
  sniffContentType,
  unsupportedFile,
  type DocumentContentType,
} from './document.js';

/**
 * Documents at rest: the envelope scheme of `@sluice/crypto`. Each upload gets a blob id, a fresh
 * data key wrapped under the compliance master key (AAD `sluice:compliance-document:v1:dek|<keyId>|<blobId>`),
 * and its file sealed in chunks of DOCUMENT_CHUNK_BYTES (AAD `sluice:compliance-document:v1:<blobId>|<index>|<last>`).
 */
export const KEYRING_NAMES = {
  current: 'DOCUMENT_MASTER_KEY',
  retired: 'DOCUMENT_MASTER_KEYS_RETIRED',
  idLabel: 'sluice-document-master-key-id:v1',
};

const dekAad = (blobId: string) => (keyId: string) =>
  Buffer.from(`sluice:compliance-document:v1:dek|${keyId}|${blobId}`, 'utf8');
const chunkBinding = (blobId: string) => `sluice:compliance-document:v1:${blobId}`;

/** What the checks of an incoming file learned once it was read whole. */
export interface CheckedFile {
  contentType: DocumentContentType;
  sizeBytes: number;
  sha256: string;
}

/**
 * Passes a file's bytes through while checking them: the type is decided by the first
 * SNIFF_BYTES (PDF, JPEG, PNG, else INVALID_INPUT on `file`), the size is counted (over
 * MAX_DOCUMENT_BYTES: PAYLOAD_TOO_LARGE at the first byte too many, nothing more is read) and a
 * SHA-256 of the plaintext is computed. `result()` is known once the stream was read to its end.
 */
export function checkFile(source: AsyncIterable<Uint8Array>): {
  bytes: AsyncIterable<Uint8Array>;
  result(): CheckedFile;
} {
  const hash = createHash('sha256');
  let size = 0;
  let head = Buffer.alloc(0);
  let contentType: DocumentContentType | undefined;
  let done = false;
  async function* bytes(): AsyncGenerator<Uint8Array> {
    for await (const piece of source) {
      if (piece.length === 0) continue;
      size += piece.length;
      if (size > MAX_DOCUMENT_BYTES) throw fileTooLarge();
      if (!contentType) {
        head = Buffer.concat([head, Buffer.from(piece.subarray(0, SNIFF_BYTES))]).subarray(0, SNIFF_BYTES);
        contentType = sniffContentType(head);
        if (!contentType && head.length >= SNIFF_BYTES) throw unsupportedFile();
      }
      hash.update(piece);
      yield piece;
    }
    if (size === 0) throw invalidFile('must not be empty');
    if (!contentType) throw unsupportedFile();
    done = true;
  }
  return {
    bytes: bytes(),
    result() {
      if (!done || !contentType) throw new Error('the file has not been read to its end');
      return { contentType, sizeBytes: size, sha256: hash.digest('hex') };
    },
  };
}

/** A new blob's data key, wrapped for storage; the caller zeroes `dataKey` when done. */
export function newBlobKey(
  keyring: MasterKeyring,
  blobId: string,
): { dataKey: Buffer; wrapped: WrappedDataKey } {
  const dataKey = newDataKey();
  return { dataKey, wrapped: wrapDataKey(keyring, dataKey, dekAad(blobId)) };
}

/** A blob's data key rewrapped under the current master key (rotation); its chunks are kept as they are. */
export function rewrapBlobKey(keyring: MasterKeyring, blobId: string, wrapped: WrappedDataKey): WrappedDataKey {
  return rewrapDataKey(keyring, wrapped, dekAad(blobId));
}

/** Seals a blob's plaintext chunk by chunk. */
export function sealBlob(
  plaintext: AsyncIterable<Uint8Array>,
  dataKey: Buffer,
  blobId: string,
): AsyncGenerator<SealedChunk> {
  return sealChunks(plaintext, dataKey, chunkBinding(blobId), DOCUMENT_CHUNK_BYTES);
}

/** Opens chunk `index` of a blob of `chunkCount` chunks; EnvelopeError on a wrong key or any change. */
export function openBlobChunk(
  keyring: MasterKeyring,
  blob: { blobId: string; keyId: string; wrappedKey: Buffer; chunkCount: number },
  index: number,
  sealed: Buffer,
): Buffer {
  const dataKey = unwrapDataKey(
    keyring,
    { keyId: blob.keyId, wrapped: blob.wrappedKey },
    dekAad(blob.blobId),
  );
  try {
    return openChunk(dataKey, sealed, chunkBinding(blob.blobId), index, index === blob.chunkCount - 1);
  } finally {
    dataKey.fill(0);
  }
}
