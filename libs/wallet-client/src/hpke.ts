import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from '@hpke/core';
import { p256 } from '@noble/curves/p256';
import { WalletClientError } from './errors.js';

const INFO = new TextEncoder().encode('turnkey_hpke');
const suite = new CipherSuite({
  kem: new DhkemP256HkdfSha256(),
  kdf: new HkdfSha256(),
  aead: new Aes256Gcm(),
});

function buf(bytes: Uint8Array): ArrayBuffer {
  return bytes.slice().buffer as ArrayBuffer;
}

/**
 * @internal RFC 9180 base-mode open (DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM,
 * info `turnkey_hpke`, AAD = encapsulated key ‖ receiver public key, both uncompressed).
 */
export async function hpkeOpen(
  encapsulatedKey: Uint8Array,
  ciphertext: Uint8Array,
  receiverPrivateKey: Uint8Array,
): Promise<Uint8Array> {
  const receiverPublic = p256.getPublicKey(receiverPrivateKey, false);
  const aad = new Uint8Array(encapsulatedKey.length + receiverPublic.length);
  aad.set(encapsulatedKey, 0);
  aad.set(receiverPublic, encapsulatedKey.length);
  try {
    const recipientKey = await suite.kem.importKey('raw', buf(receiverPrivateKey), false);
    const ctx = await suite.createRecipientContext({
      recipientKey,
      enc: buf(encapsulatedKey),
      info: buf(INFO),
    });
    return new Uint8Array(await ctx.open(buf(ciphertext), buf(aad)));
  } catch {
    throw new WalletClientError(
      'DECRYPTION_FAILED',
      'HPKE decryption failed (wrong private key or corrupted bundle)',
    );
  }
}
