import { gcmOpen, gcmSeal } from './envelope.js';

/**
 * Chunked authenticated encryption of a stream under one data key, for files too large to hold
 * in memory: the plaintext is cut into chunks of `chunkBytes` (the last may be shorter, never
 * empty unless the whole plaintext is), and each chunk is sealed on its own with AES-256-GCM and
 * the additional data `<binding>|<index>|<last>`. A chunk therefore opens only at its own position
 * of its own object, a reordered, swapped or dropped chunk is refused, and a stream cut after any
 * chunk is refused too, because only the true last chunk was sealed with `last = 1`.
 */

/** One sealed chunk: its position, whether it is the last, and `iv ‖ ciphertext ‖ tag`. */
export interface SealedChunk {
  index: number;
  last: boolean;
  sealed: Buffer;
  /** Plaintext bytes in this chunk. */
  plainBytes: number;
}

function chunkAad(binding: string, index: number, last: boolean): Buffer {
  return Buffer.from(`${binding}|${index}|${last ? 1 : 0}`, 'utf8');
}

/**
 * Seals a plaintext stream chunk by chunk, holding at most two chunks in memory (a chunk is
 * sealed once the next byte, or the end, shows whether it is the last). An empty stream yields
 * one empty last chunk.
 */
export async function* sealChunks(
  plaintext: AsyncIterable<Uint8Array>,
  dataKey: Uint8Array,
  binding: string,
  chunkBytes: number,
): AsyncGenerator<SealedChunk> {
  if (!Number.isInteger(chunkBytes) || chunkBytes < 1)
    throw new RangeError('chunkBytes must be a positive integer');
  let index = 0;
  let pending: Buffer | undefined; // a full chunk waiting to learn whether it is the last
  let parts: Buffer[] = [];
  let filled = 0;
  const seal = (plain: Buffer, last: boolean): SealedChunk => ({
    index,
    last,
    sealed: gcmSeal(dataKey, plain, chunkAad(binding, index++, last)),
    plainBytes: plain.length,
  });
  for await (const piece of plaintext) {
    let buf = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    while (buf.length > 0) {
      if (pending) {
        yield seal(pending, false);
        pending = undefined;
      }
      const take = Math.min(chunkBytes - filled, buf.length);
      parts.push(Buffer.from(buf.subarray(0, take))); // copy: the source buffer may be reused
      filled += take;
      buf = buf.subarray(take);
      if (filled === chunkBytes) {
        pending = Buffer.concat(parts, filled);
        parts = [];
        filled = 0;
      }
    }
  }
  if (pending && filled === 0) yield seal(pending, true);
  else {
    if (pending) yield seal(pending, false);
    yield seal(Buffer.concat(parts, filled), true);
  }
}

/**
 * Opens the chunk at `index` of an object sealed by `sealChunks` with the same data key and
 * binding; `last` is whether the reader expects it to be the final chunk (from the stored chunk
 * count). Throws EnvelopeError DECRYPT_FAILED on any mismatch or changed byte.
 */
export function openChunk(
  dataKey: Uint8Array,
  sealed: Uint8Array,
  binding: string,
  index: number,
  last: boolean,
): Buffer {
  return gcmOpen(dataKey, sealed, chunkAad(binding, index, last), `chunk ${index}`);
}
