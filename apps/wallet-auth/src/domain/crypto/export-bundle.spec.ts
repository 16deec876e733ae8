import { describe, expect, it } from 'vitest';
import { hexToBytes } from '@noble/hashes/utils';
import { p256 } from '@noble/curves/p256';
import { decryptExportBundle, hpkeDecrypt } from '@turnkey/crypto';
import { decryptExport, generateKeyPair } from '@sluice/wallet-client';
import { createExportBundle, parseExportSigningKey } from './export-bundle.js';
import { generateMnemonic } from './key-custody.js';

const accountId = 'InternalAccount:019542f5-b3e7-1d02-0000-000000000002';
const signingKey = parseExportSigningKey('c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721');

function inner(bundle: string): { encappedPublic: string; ciphertext: string; organizationId: string } {
  return JSON.parse(Buffer.from(JSON.parse(bundle).data, 'hex').toString('utf8'));
}

describe('createExportBundle', () => {
  it('production: @turnkey/crypto decryptExportBundle opens it when pinned to our signing key', async () => {
    const client = generateKeyPair();
    const mnemonic = generateMnemonic();
    const bundle = await createExportBundle({
      mnemonic,
      clientPublicKey: client.publicKey,
      organizationId: accountId,
      environment: 'PRODUCTION',
      signingKey,
    });
    const outer = JSON.parse(bundle);
    expect(Object.keys(outer)).toEqual(['version', 'data', 'dataSignature', 'enclaveQuorumPublic']);
    expect(outer.version).toBe('v1.0.0');
    expect(outer.enclaveQuorumPublic).toBe(signingKey.publicKey);
    expect(inner(bundle).encappedPublic).toMatch(/^04[0-9a-f]{128}$/);
    expect(inner(bundle).organizationId).toBe(accountId);
    const opened = await decryptExportBundle({
      exportBundle: bundle,
      embeddedKey: client.privateKey,
      organizationId: accountId,
      dangerouslyOverrideSignerPublicKey: signingKey.publicKey,
      returnMnemonic: true,
    });
    expect(opened).toBe(mnemonic);
    // the same bundle, pinned to Turnkey's own production key, is refused: the enclave key is pinned
    await expect(
      decryptExportBundle({
        exportBundle: bundle,
        embeddedKey: client.privateKey,
        organizationId: accountId,
        returnMnemonic: true,
      }),
    ).rejects.toThrow(/expected signer key/);
  });

  it('production: @sluice/wallet-client verifies the signature and decrypts', async () => {
    const client = generateKeyPair();
    const mnemonic = generateMnemonic();
    const bundle = await createExportBundle({
      mnemonic,
      clientPublicKey: client.publicKey,
      organizationId: accountId,
      environment: 'PRODUCTION',
      signingKey,
    });
    expect(
      await decryptExport(bundle, client.privateKey, {
        organizationId: accountId,
        signerPublicKey: signingKey.publicKey,
      }),
    ).toBe(mnemonic);
    await expect(
      decryptExport(bundle, client.privateKey, { organizationId: 'InternalAccount:other' }),
    ).rejects.toMatchObject({ code: 'ORGANIZATION_MISMATCH' });
    await expect(decryptExport(bundle, generateKeyPair().privateKey)).rejects.toMatchObject({
      code: 'DECRYPTION_FAILED',
    });
    // tampered signed data (organizationId swapped) fails the signature
    const outer = JSON.parse(bundle);
    const forged = { ...inner(bundle), organizationId: 'InternalAccount:other' };
    const tampered = JSON.stringify({ ...outer, data: Buffer.from(JSON.stringify(forged)).toString('hex') });
    await expect(decryptExport(tampered, client.privateKey)).rejects.toMatchObject({
      code: 'BUNDLE_SIGNATURE_INVALID',
    });
    const otherSigner = parseExportSigningKey('0f'.repeat(32));
    await expect(
      decryptExport(bundle, client.privateKey, { signerPublicKey: otherSigner.publicKey }),
    ).rejects.toMatchObject({ code: 'BUNDLE_SIGNATURE_INVALID' });
  });

  it('sandbox: unsigned; the HPKE layer opens with @turnkey/crypto hpkeDecrypt and with wallet-client', async () => {
    const client = generateKeyPair();
    const mnemonic = generateMnemonic();
    const bundle = await createExportBundle({
      mnemonic,
      clientPublicKey: client.publicKey,
      organizationId: accountId,
      environment: 'SANDBOX',
      signingKey,
    });
    const outer = JSON.parse(bundle);
    expect(outer.dataSignature).toBe('');
    expect(outer.enclaveQuorumPublic).toBe('');
    const { encappedPublic, ciphertext } = inner(bundle);
    const plain = hpkeDecrypt({
      ciphertextBuf: hexToBytes(ciphertext),
      encappedKeyBuf: hexToBytes(encappedPublic),
      receiverPriv: client.privateKey,
    });
    expect(new TextDecoder().decode(plain)).toBe(mnemonic);
    expect(await decryptExport(bundle, client.privateKey, { organizationId: accountId })).toBe(mnemonic);
    // a client pinning the production key refuses an unsigned bundle
    await expect(
      decryptExport(bundle, client.privateKey, { signerPublicKey: signingKey.publicKey }),
    ).rejects.toMatchObject({ code: 'BUNDLE_SIGNATURE_INVALID' });
  });

  it('signs with ECDSA-P256 over SHA-256 of the data bytes', async () => {
    const client = generateKeyPair();
    const bundle = JSON.parse(
      await createExportBundle({
        mnemonic: 'abandon',
        clientPublicKey: client.publicKey,
        organizationId: accountId,
        environment: 'PRODUCTION',
        signingKey,
      }),
    );
    const { sha256 } = await import('@noble/hashes/sha2');
    expect(
      p256.verify(
        p256.Signature.fromDER(bundle.dataSignature).toCompactRawBytes(),
        sha256(hexToBytes(bundle.data)),
        hexToBytes(signingKey.publicKey),
      ),
    ).toBe(true);
  });

  it('refuses a bad clientPublicKey, and production without a signing key', async () => {
    await expect(
      createExportBundle({
        mnemonic: 'x',
        clientPublicKey: '04abc',
        organizationId: accountId,
        environment: 'SANDBOX',
      }),
    ).rejects.toMatchObject({
      code: 'INVALID_CLIENT_PUBLIC_KEY',
      details: { errors: [{ field: 'clientPublicKey' }] },
    });
    await expect(
      createExportBundle({
        mnemonic: 'x',
        clientPublicKey: generateKeyPair().publicKey,
        organizationId: accountId,
        environment: 'PRODUCTION',
      }),
    ).rejects.toThrow(/signing key/);
    expect(() => parseExportSigningKey('00'.repeat(32))).toThrow(/not a valid P-256 private key/);
    expect(() => parseExportSigningKey('abc')).toThrow(/WALLET_EXPORT_SIGNING_KEY/);
  });
});
