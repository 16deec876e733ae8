import { randomBytes } from 'node:crypto';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isDomainError, newId } from '@sluice/core';
import { loadMasterKeyring } from '@sluice/crypto';
import { MAX_DOCUMENT_BYTES, sniffContentType, validateDocumentHeader } from './document.js';
import { KEYRING_NAMES, checkFile, newBlobKey, openBlobChunk, sealBlob } from './document-crypto.js';

const PDF = Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\n', 'latin1');
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]);
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

async function* pieces(buf: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

async function drain(it: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of it) void _;
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; field?: string }> {
  try {
    await p;
  } catch (e) {
    if (!isDomainError(e)) throw e;
    const errors = (e.details as { errors?: { field: string }[] } | undefined)?.errors;
    return { code: e.code, ...(errors ? { field: errors[0]!.field } : {}) };
  }
  throw new Error('expected a refusal');
}

describe('content sniffing', () => {
  it('decides PDF, JPEG and PNG by their magic bytes, and nothing else', () => {
    expect(sniffContentType(PDF)).toBe('application/pdf');
    expect(sniffContentType(JPEG)).toBe('image/jpeg');
    expect(sniffContentType(PNG)).toBe('image/png');
    expect(sniffContentType(Buffer.from('hello, I am a text file named passport.pdf'))).toBeUndefined();
    expect(sniffContentType(Buffer.from('GIF89a....'))).toBeUndefined();
    expect(sniffContentType(PNG.subarray(0, 7))).toBeUndefined(); // too short to be a PNG
    expect(sniffContentType(Buffer.alloc(0))).toBeUndefined();
  });

  it('checks a stream as it passes: type from the first bytes even split, size, SHA-256', async () => {
    const file = Buffer.concat([PNG, randomBytes(5000)]);
    const c = checkFile(pieces(file, 3)); // the signature arrives over three pieces
    await drain(c.bytes);
    expect(c.result()).toEqual({
      contentType: 'image/png',
      sizeBytes: file.length,
      sha256: createHash('sha256').update(file).digest('hex'),
    });
  });

  it('refuses other content, an empty file and a file over 10 MiB at the first byte too many', async () => {
    expect(await refusal(drain(checkFile(pieces(Buffer.from('plain text, renamed .pdf'), 4)).bytes))).toEqual(
      {
        code: 'INVALID_INPUT',
        field: 'file',
      },
    );
    expect(await refusal(drain(checkFile(pieces(Buffer.alloc(0), 1)).bytes))).toEqual({
      code: 'INVALID_INPUT',
      field: 'file',
    });
    expect(await refusal(drain(checkFile(pieces(Buffer.from('%PD'), 1)).bytes))).toMatchObject({
      field: 'file',
    });
    let read = 0;
    async function* big(): AsyncGenerator<Uint8Array> {
      yield PDF;
      for (;;) {
        read++;
        yield Buffer.alloc(1024 * 1024);
      }
    }
    expect((await refusal(drain(checkFile(big()).bytes))).code).toBe('PAYLOAD_TOO_LARGE');
    expect(read).toBe(10); // stopped at the MiB that crossed the limit: never read the rest
  });

  it('accepts exactly MAX_DOCUMENT_BYTES', async () => {
    const exact = Buffer.alloc(MAX_DOCUMENT_BYTES);
    PDF.copy(exact);
    const c = checkFile(pieces(exact, 65536));
    await drain(c.bytes);
    expect(c.result().sizeBytes).toBe(10_485_760);
  });
});

describe('documents at rest', () => {
  it('round-trips a file through chunked envelope encryption; a tampered chunk or other key is refused', async () => {
    const keyring = loadMasterKeyring(randomBytes(32).toString('base64'), undefined, KEYRING_NAMES);
    const file = Buffer.concat([PDF, randomBytes(600 * 1024)]);
    const { dataKey, wrapped } = newBlobKey(keyring, 'blob-1');
    const sealed: Buffer[] = [];
    for await (const c of sealBlob(pieces(file, 10_000), dataKey, 'blob-1')) sealed.push(c.sealed);
    expect(sealed).toHaveLength(3); // 256 KiB chunks
    const blob = {
      blobId: 'blob-1',
      keyId: wrapped.keyId,
      wrappedKey: wrapped.wrapped,
      chunkCount: sealed.length,
    };
    const opened = sealed.map((s, i) => openBlobChunk(keyring, blob, i, s));
    expect(Buffer.concat(opened).equals(file)).toBe(true);
    expect(sealed[0]!.includes(PDF.subarray(0, 8))).toBe(false); // ciphertext at rest

    const tampered = Buffer.from(sealed[1]!);
    tampered[100] = tampered[100]! ^ 0xff;
    expect(() => openBlobChunk(keyring, blob, 1, tampered)).toThrow(/cannot decrypt/);
    expect(() => openBlobChunk(keyring, { ...blob, blobId: 'blob-2' }, 0, sealed[0]!)).toThrow();
    expect(() => openBlobChunk(keyring, { ...blob, chunkCount: 2 }, 1, sealed[1]!)).toThrow(); // truncated
    const other = loadMasterKeyring(randomBytes(32).toString('base64'), undefined, KEYRING_NAMES);
    expect(() => openBlobChunk(other, blob, 0, sealed[0]!)).toThrow(/not configured/);
  });
});

describe('document header', () => {
  const ok = {
    documentHolder: newId('Customer'),
    documentType: 'PASSPORT',
    country: 'US',
    fileName: 'passport.pdf',
  };

  it('names every bad declared field', () => {
    expect(validateDocumentHeader({ ...ok, side: 'FRONT', documentNumber: 'A1' }, false)).toEqual({
      ...ok,
      side: 'FRONT',
      documentNumber: 'A1',
    });
    try {
      validateDocumentHeader(
        { documentHolder: 'Platform:1', documentType: 'DIPLOMA', country: 'ZZ', side: 'TOP', fileName: 'x' },
        false,
      );
      throw new Error('accepted');
    } catch (e) {
      const errors = (e as { details: { errors: { field: string }[] } }).details.errors.map((x) => x.field);
      expect(errors.sort()).toEqual(['country', 'documentHolder', 'documentType', 'side']);
    }
    // a replacement keeps its holder: none is asked for
    expect(validateDocumentHeader({ ...ok, documentHolder: undefined }, true)).not.toHaveProperty(
      'documentHolder',
    );
  });
});
