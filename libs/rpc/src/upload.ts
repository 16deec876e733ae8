import { invalidInput } from '@sluice/core';

/** A message of a client-streaming upload: its header first, then chunks, then the trailer. */
export interface UploadMessage<H> {
  header?: H | undefined;
  chunk?: Uint8Array | undefined;
  trailer?: { sizeBytes: bigint } | undefined;
}

/**
 * Splits an upload stream into its header (the first message) and the file's bytes (the chunks
 * after it, read lazily: nothing past the header is read until the use case asks for it). The
 * bytes end at the trailer, whose size must match; a stream that ends without one (a cancelled
 * or broken upload) is refused, so nothing of it is stored.
 */
export async function splitUpload<H>(
  requests: AsyncIterable<UploadMessage<H>>,
): Promise<{ header: H; bytes: AsyncIterable<Uint8Array> }> {
  const it = requests[Symbol.asyncIterator]();
  const first = await it.next();
  const header = first.done ? undefined : first.value.header;
  if (!header)
    throw invalidInput([{ field: 'header', message: 'the first message of an upload must be its header' }]);
  async function* bytes(): AsyncGenerator<Uint8Array> {
    let size = 0n;
    for (;;) {
      const next = await it.next();
      if (next.done) throw invalidInput([{ field: 'trailer', message: 'the upload ended without its trailer' }]);
      const m = next.value;
      if (m.header) throw invalidInput([{ field: 'header', message: 'an upload has one header, first' }]);
      if (m.trailer) {
        if (m.trailer.sizeBytes !== size)
          throw invalidInput([
            { field: 'trailer', message: `the upload sent ${size} bytes, not ${m.trailer.sizeBytes}` },
          ]);
        return;
      }
      if (m.chunk) {
        size += BigInt(m.chunk.length);
        yield m.chunk;
      }
    }
  }
  return { header, bytes: bytes() };
}
