import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  EnvelopeError,
  blindIndex,
  blindIndexes,
  isSealedValue,
  loadMasterKeyring,
  openValue,
  rewrapValue,
  sealValue,
  sealedKeyId,
  masterKeyId,
  newDataKey,
  openChunk,
  rewrapDataKey,
  sealChunks,
  unwrapDataKey,
  wrapDataKey,
  type SealedChunk,
} from './index.js';

const names = { current: 'TEST_MASTER_KEY', retired: 'TEST_MASTER_KEYS_RETIRED', idLabel: 'test-label:v1' };
const b64 = () => randomBytes(32).toString('base64');
const aad = (owner: string) => (keyId: string) => Buffer.from(`test|${keyId}|${owner}`);

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(EnvelopeError);
    return (e as EnvelopeError).code;
  }
  throw new Error('expected an EnvelopeError');
}

async function* pieces(buf: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

async function collect(it: AsyncIterable<SealedChunk>): Promise<SealedChunk[]> {
  const out: SealedChunk[] = [];
  for await (const c of it) out.push(c);
  return out;
}

describe('keyring', () => {
  it('names the bad variable and fingerprints keys with the label', () => {
    expect(code(() => loadMasterKeyring('', undefined, names))).toBe('CONFIG_INVALID');
    expect(() => loadMasterKeyring(randomBytes(16).toString('base64'), undefined, names)).toThrow(
      /TEST_MASTER_KEY /,
    );
    expect(() => loadMasterKeyring(b64(), 'x!', names)).toThrow(/TEST_MASTER_KEYS_RETIRED\[0\]/);
    const key = randomBytes(32);
    const ring = loadMasterKeyring(key.toString('base64'), undefined, names);
    expect(ring.current.id).toBe(masterKeyId(key, 'test-label:v1'));
    expect(ring.current.id).not.toBe(masterKeyId(key, 'other-label'));
  });
});

describe('data keys', () => {
  it('wrap, unwrap only with the same binding and a configured key, and rewrap on rotation', () => {
    const old = b64();
    const ring = loadMasterKeyring(old, undefined, names);
    const dk = newDataKey();
    const w = wrapDataKey(ring, dk, aad('doc-1'));
    expect(unwrapDataKey(ring, w, aad('doc-1')).equals(dk)).toBe(true);
    expect(code(() => unwrapDataKey(ring, w, aad('doc-2')))).toBe('DECRYPT_FAILED');
    expect(code(() => unwrapDataKey(loadMasterKeyring(b64(), undefined, names), w, aad('doc-1')))).toBe(
      'MASTER_KEY_UNKNOWN',
    );
    const tampered = Buffer.from(w.wrapped);
    tampered[20] = tampered[20]! ^ 1;
    expect(code(() => unwrapDataKey(ring, { ...w, wrapped: tampered }, aad('doc-1')))).toBe('DECRYPT_FAILED');
    expect(code(() => unwrapDataKey(ring, { ...w, wrapped: w.wrapped.subarray(1) }, aad('doc-1')))).toBe(
      'MALFORMED',
    );
    const rotated = loadMasterKeyring(b64(), old, names);
    const re = rewrapDataKey(rotated, w, aad('doc-1'));
    expect(re.keyId).toBe(rotated.current.id);
    expect(unwrapDataKey({ current: rotated.current, retired: [] }, re, aad('doc-1')).equals(dk)).toBe(true);
  });
});

describe('chunked sealing', () => {
  const dk = newDataKey();

  it('round-trips streams of every shape, cutting at the chunk size whatever the pieces', async () => {
    for (const [length, piece] of [
      [0, 7],
      [1, 7],
      [16, 16],
      [32, 5],
      [33, 100],
      [1000, 3],
    ] as const) {
      const plain = randomBytes(length);
      const chunks = await collect(sealChunks(pieces(plain, piece), dk, 'doc', 16));
      expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
      expect(chunks.filter((c) => c.last)).toEqual([chunks[chunks.length - 1]]);
      expect(chunks.length).toBe(Math.max(1, Math.ceil(length / 16)));
      const opened = chunks.map((c) => openChunk(dk, c.sealed, 'doc', c.index, c.last));
      expect(Buffer.concat(opened).equals(plain)).toBe(true);
      expect(chunks.reduce((n, c) => n + c.plainBytes, 0)).toBe(length);
    }
  });

  it('refuses a tampered, moved, swapped or truncated chunk', async () => {
    const chunks = await collect(sealChunks(pieces(randomBytes(40), 40), dk, 'doc', 16));
    const [a, b, c] = chunks as [SealedChunk, SealedChunk, SealedChunk];
    const flipped = Buffer.from(a.sealed);
    flipped[15] = flipped[15]! ^ 1;
    expect(code(() => openChunk(dk, flipped, 'doc', 0, false))).toBe('DECRYPT_FAILED');
    expect(code(() => openChunk(dk, a.sealed, 'other-doc', 0, false))).toBe('DECRYPT_FAILED');
    expect(code(() => openChunk(dk, b.sealed, 'doc', 0, false))).toBe('DECRYPT_FAILED'); // swapped
    expect(code(() => openChunk(dk, b.sealed, 'doc', 1, true))).toBe('DECRYPT_FAILED'); // cut after b
    expect(code(() => openChunk(newDataKey(), c.sealed, 'doc', 2, true))).toBe('DECRYPT_FAILED');
    expect(openChunk(dk, c.sealed, 'doc', 2, true).length).toBe(8);
  });
});

describe('sealed values', () => {
  const scheme = { prefix: 'tsv1', context: 'sluice:test:v1', field: 'secret' };

  it('seal one column without the plaintext in it, open only for the same owner, and rewrap on rotation', () => {
    const old = b64();
    const ring = loadMasterKeyring(old, undefined, names);
    const sealed = sealValue(ring, scheme, 'row-1', 'DE89370400440532013000');
    expect(sealed).not.toContain('DE89370400440532013000');
    expect(isSealedValue(scheme, sealed)).toBe(true);
    expect(sealedKeyId(scheme, sealed)).toBe(ring.current.id);
    expect(openValue(ring, scheme, 'row-1', sealed)).toBe('DE89370400440532013000');
    expect(code(() => openValue(ring, scheme, 'row-2', sealed))).toBe('DECRYPT_FAILED');
    expect(code(() => openValue(ring, { ...scheme, field: 'other' }, 'row-1', sealed))).toBe('DECRYPT_FAILED');
    expect(code(() => openValue(ring, scheme, 'row-1', 'tsv1.x'))).toBe('MALFORMED');

    const rotated = loadMasterKeyring(b64(), old, names);
    expect(openValue(rotated, scheme, 'row-1', sealed)).toBe('DE89370400440532013000');
    const re = rewrapValue(rotated, scheme, 'row-1', sealed);
    expect(sealedKeyId(scheme, re)).toBe(rotated.current.id);
    expect(re.split('.')[3]).toBe(sealed.split('.')[3]); // the value's ciphertext is kept
    const withoutOld = { current: rotated.current, retired: [] };
    expect(openValue(withoutOld, scheme, 'row-1', re)).toBe('DE89370400440532013000');
    expect(code(() => openValue(withoutOld, scheme, 'row-1', sealed))).toBe('MASTER_KEY_UNKNOWN');
    expect(code(() => rewrapValue(rotated, scheme, 'row-2', sealed))).toBe('DECRYPT_FAILED');
  });

  it('blind indexes: equal per key and label, distinct across values, labels and keys', () => {
    const old = b64();
    const ring = loadMasterKeyring(old, undefined, names);
    const [a] = blindIndexes(ring, 'iban', 'DE89370400440532013000');
    expect(blindIndexes(ring, 'iban', 'DE89370400440532013000')).toEqual([a]);
    expect(a).not.toContain('DE89370400440532013000');
    expect(blindIndexes(ring, 'iban', 'DE89370400440532013001')[0]).not.toBe(a);
    expect(blindIndexes(ring, 'other', 'DE89370400440532013000')[0]).not.toBe(a);
    const rotated = loadMasterKeyring(b64(), old, names);
    const both = blindIndexes(rotated, 'iban', 'DE89370400440532013000');
    expect(both).toHaveLength(2);
    expect(both[0]).not.toBe(a);
    expect(both[1]).toBe(a);
    // What is stored: the current key's alone.
    expect(blindIndex(rotated, 'iban', 'DE89370400440532013000')).toBe(both[0]);
  });

  it('a bad key names its variable', () => {
    try {
      loadMasterKeyring(b64(), 'AAAA', names);
      throw new Error('expected a failure');
    } catch (e) {
      expect((e as EnvelopeError).variable).toBe('TEST_MASTER_KEYS_RETIRED');
    }
  });
});
