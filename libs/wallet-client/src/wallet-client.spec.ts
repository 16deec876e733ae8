import { describe, expect, it } from 'vitest';
import { p256 } from '@noble/curves/p256';
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils';
import { createBase58check } from '@scure/base';
import { formatHpkeBuf, hpkeEncrypt, toDerSignature, verifyStampSignature } from '@turnkey/crypto';
import {
  compressPublicKey,
  decryptExport,
  decryptSessionBundle,
  formatClientPublicKey,
  generateKeyPair,
  isValidClientPublicKey,
  keyPairFromPrivateKey,
  stamp,
} from './index.js';

const base58check = createBase58check(sha256);

/** A credential bundle made with Turnkey's own HPKE implementation (independent of ours). */
function turnkeyCredentialBundle(plaintext: Uint8Array, clientPublicKey: string): string {
  return base58check.encode(
    hpkeEncrypt({ plainTextBuf: plaintext, targetKeyBuf: hexToBytes(clientPublicKey) }),
  );
}

/** An export bundle built from Turnkey's HPKE encryption, signed with `signerPrivateKey`. */
function turnkeyExportBundle(
  mnemonic: string,
  clientPublicKey: string,
  organizationId: string,
  signerPrivateKey?: string,
): string {
  const { encappedPublic, ciphertext } = JSON.parse(
    formatHpkeBuf(
      hpkeEncrypt({
        plainTextBuf: new TextEncoder().encode(mnemonic),
        targetKeyBuf: hexToBytes(clientPublicKey),
      }),
    ),
  );
  const data = new TextEncoder().encode(JSON.stringify({ encappedPublic, ciphertext, organizationId }));
  const dataSignature = signerPrivateKey
    ? toDerSignature(p256.sign(sha256(data), signerPrivateKey).toCompactHex())
    : '';
  const enclaveQuorumPublic = signerPrivateKey ? bytesToHex(p256.getPublicKey(signerPrivateKey, false)) : '';
  return JSON.stringify({ version: 'v1.0.0', data: bytesToHex(data), dataSignature, enclaveQuorumPublic });
}

describe('keys', () => {
  it('generates a P-256 key pair in clientPublicKey form', () => {
    const k = generateKeyPair();
    expect(k.privateKey).toMatch(/^[0-9a-f]{64}$/);
    expect(k.publicKey).toMatch(/^04[0-9a-f]{128}$/);
    expect(k.publicKeyCompressed).toMatch(/^0[23][0-9a-f]{64}$/);
    expect(bytesToHex(p256.getPublicKey(k.privateKey, false))).toBe(k.publicKey);
    expect(isValidClientPublicKey(k.publicKey)).toBe(true);
    expect(generateKeyPair().privateKey).not.toBe(k.privateKey);
  });

  it('formats and compresses public keys, and rejects invalid ones', () => {
    const k = keyPairFromPrivateKey('11'.repeat(32));
    expect(formatClientPublicKey(k.publicKeyCompressed)).toBe(k.publicKey);
    expect(formatClientPublicKey(k.publicKey.toUpperCase().replace(/^04/, '04'))).toBe(k.publicKey);
    expect(compressPublicKey(k.publicKey)).toBe(k.publicKeyCompressed);
    expect(isValidClientPublicKey(k.publicKeyCompressed)).toBe(false);
    expect(isValidClientPublicKey('04' + '00'.repeat(64))).toBe(false);
    expect(() => formatClientPublicKey('05' + k.publicKey.slice(2))).toThrow(
      expect.objectContaining({ code: 'INVALID_KEY' }),
    );
    expect(() => keyPairFromPrivateKey('00'.repeat(32))).toThrow(
      expect.objectContaining({ code: 'INVALID_KEY' }),
    );
  });
});

describe('decryptSessionBundle', () => {
  it('opens a credential bundle produced by Turnkey’s HPKE implementation', async () => {
    const client = generateKeyPair();
    const session = generateKeyPair();
    const bundle = turnkeyCredentialBundle(hexToBytes(session.privateKey), client.publicKey);
    expect(await decryptSessionBundle(bundle, client.privateKey)).toBe(session.privateKey);
  });

  it('refuses a wrong key, a corrupted checksum and a non-key payload', async () => {
    const client = generateKeyPair();
    const bundle = turnkeyCredentialBundle(hexToBytes(generateKeyPair().privateKey), client.publicKey);
    await expect(decryptSessionBundle(bundle, generateKeyPair().privateKey)).rejects.toMatchObject({
      code: 'DECRYPTION_FAILED',
    });
    const last = bundle.slice(-1) === '1' ? '2' : '1';
    await expect(decryptSessionBundle(bundle.slice(0, -1) + last, client.privateKey)).rejects.toMatchObject({
      code: 'INVALID_BUNDLE',
    });
    await expect(decryptSessionBundle('0OIl', client.privateKey)).rejects.toMatchObject({
      code: 'INVALID_BUNDLE',
    });
    const notAKey = turnkeyCredentialBundle(new TextEncoder().encode('hello'), client.publicKey);
    await expect(decryptSessionBundle(notAKey, client.privateKey)).rejects.toMatchObject({
      code: 'INVALID_BUNDLE',
    });
  });
});

describe('stamp', () => {
  it('produces a Turnkey API-key stamp that Turnkey verifies over the exact payload', async () => {
    const session = generateKeyPair();
    const payload = '{"a":1,"b":"x"}';
    const header = stamp(payload, session.privateKey);
    expect(header).toMatch(/^[A-Za-z0-9_-]+$/);
    const decoded = JSON.parse(
      new TextDecoder().decode(
        Uint8Array.from(atob(header.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0)),
      ),
    );
    expect(Object.keys(decoded)).toEqual(['publicKey', 'scheme', 'signature']);
    expect(decoded).toMatchObject({
      publicKey: session.publicKeyCompressed,
      scheme: 'SIGNATURE_SCHEME_TK_API_P256',
    });
    expect(await verifyStampSignature(session.publicKeyCompressed, decoded.signature, payload)).toBe(true);
    expect(await verifyStampSignature(session.publicKeyCompressed, decoded.signature, payload + ' ')).toBe(
      false,
    );
  });
});

describe('decryptExport', () => {
  const org = 'InternalAccount:019542f5-b3e7-1d02-0000-000000000002';
  const mnemonic = 'legal winner thank year wave sausage worth useful legal winner thank yellow';

  it('opens a signed bundle, checking signer and organizationId', async () => {
    const client = generateKeyPair();
    const signer = generateKeyPair();
    const bundle = turnkeyExportBundle(mnemonic, client.publicKey, org, signer.privateKey);
    expect(
      await decryptExport(bundle, client.privateKey, {
        organizationId: org,
        signerPublicKey: signer.publicKeyCompressed,
      }),
    ).toBe(mnemonic);
    await expect(
      decryptExport(bundle, client.privateKey, { signerPublicKey: generateKeyPair().publicKey }),
    ).rejects.toMatchObject({ code: 'BUNDLE_SIGNATURE_INVALID' });
    await expect(
      decryptExport(bundle, client.privateKey, { organizationId: 'InternalAccount:other' }),
    ).rejects.toMatchObject({ code: 'ORGANIZATION_MISMATCH' });
    const outer = JSON.parse(bundle);
    const badSig = JSON.stringify({
      ...outer,
      dataSignature: outer.dataSignature.slice(0, -2) + (outer.dataSignature.endsWith('00') ? '01' : '00'),
    });
    await expect(decryptExport(badSig, client.privateKey)).rejects.toMatchObject({
      code: 'BUNDLE_SIGNATURE_INVALID',
    });
  });

  it('opens an unsigned (sandbox) bundle and refuses malformed ones', async () => {
    const client = generateKeyPair();
    const bundle = turnkeyExportBundle(mnemonic, client.publicKey, org);
    expect(await decryptExport(bundle, client.privateKey)).toBe(mnemonic);
    await expect(decryptExport(bundle, generateKeyPair().privateKey)).rejects.toMatchObject({
      code: 'DECRYPTION_FAILED',
    });
    await expect(decryptExport('not json', client.privateKey)).rejects.toMatchObject({
      code: 'INVALID_BUNDLE',
    });
    await expect(
      decryptExport(JSON.stringify({ version: 'v1.0.0', data: 'zz' }), client.privateKey),
    ).rejects.toMatchObject({ code: 'INVALID_BUNDLE' });
  });
});
