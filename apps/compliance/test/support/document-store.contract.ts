import { expect } from 'vitest';
import type { DocumentStore } from '../../src/app/ports.js';

/**
 * What every DocumentStore must do (Postgres and S3-compatible alike): keep chunks by blob and
 * index, overwrite a chunk written again, answer undefined for a missing one, delete a blob's
 * chunks (and only that blob's), also without knowing how many there are (counted).
 */
export async function documentStoreContract(
  store: DocumentStore,
  blob: (n: number) => string,
): Promise<void> {
  const [a, b] = [blob(1), blob(2)];
  await store.putChunk(a, 0, Buffer.from('zero'));
  await store.putChunk(a, 1, Buffer.from('one'));
  await store.putChunk(a, 1, Buffer.from('one again'));
  await store.putChunk(b, 0, Buffer.from('other blob'));
  expect((await store.getChunk(a, 0))!.toString()).toBe('zero');
  expect((await store.getChunk(a, 1))!.toString()).toBe('one again');
  expect(await store.getChunk(a, 2)).toBeUndefined();
  await store.deleteBlob(a, 2);
  expect(await store.getChunk(a, 0)).toBeUndefined();
  expect(await store.getChunk(a, 1)).toBeUndefined();
  expect((await store.getChunk(b, 0))!.toString()).toBe('other blob');
  await store.deleteBlob(b, 1);

  // Every chunk of a blob whose count nobody knows, counted; not those of a blob whose id starts the same.
  const [c, longer] = [blob(3), `${blob(3)}0`];
  for (const i of [0, 1, 2]) await store.putChunk(c, i, Buffer.from(`chunk ${i}`));
  await store.putChunk(longer, 0, Buffer.from('a longer id'));
  expect(await store.deleteAllChunks(c)).toBe(3);
  for (const i of [0, 1, 2]) expect(await store.getChunk(c, i)).toBeUndefined();
  expect((await store.getChunk(longer, 0))!.toString()).toBe('a longer id');
  expect(await store.deleteAllChunks(c)).toBe(0);
  expect(await store.deleteAllChunks(longer)).toBe(1);
}
