import { describe, expect, it } from 'vitest';
import { p256 } from '@noble/curves/p256';
import { bytesToHex } from '@noble/hashes/utils';
import { decryptCredentialBundle } from '@turnkey/crypto';
import { decryptSessionBundle, generateKeyPair } from '@sluice/wallet-client';
import { isDomainError } from '@sluice/core';
import { createSessionBundle } from './session-bundle.js';
import { parseClientPublicKey } from './client-public-key.js';

function expectClientKeyError(fn: () => unknown, messagePart: string) {
  try {
    fn();
  } catch (e) {
    expect(isDomainError(e)).toBe(true);
    const err = e as {
      code: string;
      kind: string;
      details: { errors: { field: string; message: string }[] };
    };
    expect(err.code).toBe('INVALID_CLIENT_PUBLIC_KEY');
    expect(err.kind).toBe('INVALID_ARGUMENT');
    expect(err.details.errors[0]!.field).toBe('clientPublicKey');
    expect(err.details.errors[0]!.message).toContain(messagePart);
    return;
  }
  throw new Error('expected INVALID_CLIENT_PUBLIC_KEY');
}

describe('createSessionBundle', () => {
  it('is opened by @turnkey/crypto decryptCredentialBundle, yielding the session key', async () => {
    const client = generateKeyPair();
    const session = await createSessionBundle(client.publicKey);
    const privateKey = decryptCredentialBundle(session.bundle, client.privateKey);
    expect(privateKey).toMatch(/^[0-9a-f]{64}$/);
    expect(bytesToHex(p256.getPublicKey(privateKey, true))).toBe(session.sessionPublicKey);
    expect(bytesToHex(p256.getPublicKey(privateKey, false))).toBe(session.sessionPublicKeyUncompressed);
    expect(session.sessionPublicKey).toMatch(/^0[23][0-9a-f]{64}$/);
  });

  it('is opened by @sluice/wallet-client with the same result', async () => {
    const client = generateKeyPair();
    const session = await createSessionBundle(client.publicKey.toUpperCase().replace(/^04/, '04'));
    const viaClient = await decryptSessionBundle(session.bundle, client.privateKey);
    expect(viaClient).toBe(decryptCredentialBundle(session.bundle, client.privateKey));
    expect(bytesToHex(p256.getPublicKey(viaClient, true))).toBe(session.sessionPublicKey);
  });

  it('cannot be opened with another private key', async () => {
    const client = generateKeyPair();
    const other = generateKeyPair();
    const session = await createSessionBundle(client.publicKey);
    expect(() => decryptCredentialBundle(session.bundle, other.privateKey)).toThrow();
    await expect(decryptSessionBundle(session.bundle, other.privateKey)).rejects.toMatchObject({
      code: 'DECRYPTION_FAILED',
    });
  });

  it('issues a fresh session key each time and never returns the private key', async () => {
    const client = generateKeyPair();
    const a = await createSessionBundle(client.publicKey);
    const b = await createSessionBundle(client.publicKey);
    expect(a.sessionPublicKey).not.toBe(b.sessionPublicKey);
    expect(a.bundle).not.toBe(b.bundle);
    expect(Object.keys(a).sort()).toEqual(['bundle', 'sessionPublicKey', 'sessionPublicKeyUncompressed']);
    const leaked = decryptCredentialBundle(a.bundle, client.privateKey);
    expect(JSON.stringify(a)).not.toContain(leaked);
  });

  it('refuses malformed client public keys with INVALID_CLIENT_PUBLIC_KEY on clientPublicKey', async () => {
    const good = generateKeyPair().publicKey;
    expectClientKeyError(() => parseClientPublicKey(undefined), 'required');
    expectClientKeyError(() => parseClientPublicKey(''), 'required');
    expectClientKeyError(() => parseClientPublicKey(42), 'required');
    expectClientKeyError(() => parseClientPublicKey(good.slice(0, 128)), '130 hex characters');
    expectClientKeyError(() => parseClientPublicKey('05' + good.slice(2)), '^04');
    expectClientKeyError(() => parseClientPublicKey('04' + 'zz' + good.slice(4)), '^04');
    // valid x, y changed: off the curve
    const lastNibble = good.slice(-1) === '0' ? '1' : '0';
    expectClientKeyError(
      () => parseClientPublicKey(good.slice(0, -1) + lastNibble),
      'not a point on the P-256 curve',
    );
    // x = p (out of field range)
    expectClientKeyError(() => parseClientPublicKey('04' + 'ff'.repeat(64)), 'not a point');
    await expect(createSessionBundle('04' + '00'.repeat(64))).rejects.toMatchObject({
      code: 'INVALID_CLIENT_PUBLIC_KEY',
    });
    expect(parseClientPublicKey(good)).toHaveLength(65);
  });
});
