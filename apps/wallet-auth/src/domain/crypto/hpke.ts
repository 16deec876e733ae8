import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from '@hpke/core';
import { p256 } from '@noble/curves/p256';

/** HPKE `info` used by every Turnkey-compatible bundle (credential and export bundles). */
export const HPKE_INFO = new TextEncoder().encode('turnkey_hpke');

const suite = new CipherSuite({
  kem: new DhkemP256HkdfSha256(),
  kdf: new HkdfSha256(),
  aead: new Aes256Gcm(),
});

function buf(bytes: Uint8Array): ArrayBuffer {
  return bytes.slice().buffer;
}

export interface HpkeSealed {
  /** Uncompressed (65-byte) encapsulated ephemeral public key. */
  encapsulatedKey: Uint8Array;
  /** AES-256-GCM ciphertext with its 16-byte tag appended. */
  ciphertext: Uint8Array;
}

/**
 * RFC 9180 base-mode seal, DHKEM(P-256, HKDF-SHA256) / HKDF-SHA256 / AES-256-GCM,
 * info `turnkey_hpke`, AAD = encapsulated key (uncompressed) ‖ receiver public key
 * (uncompressed): the construction Turnkey clients open.
 *
 * `ephemeralPrivateKey` exists only to produce deterministic test vectors.
 */
export async function hpkeSeal(
  plaintext: Uint8Array,
  receiverPublicKey: Uint8Array,
  ephemeralPrivateKey?: Uint8Array,
): Promise<HpkeSealed> {
  const recipientPublicKey = await suite.kem.importKey('raw', buf(receiverPublicKey), true);
  const ekm = ephemeralPrivateKey
    ? {
        privateKey: await suite.kem.importKey('raw', buf(ephemeralPrivateKey), false),
        publicKey: await suite.kem.importKey('raw', buf(p256.getPublicKey(ephemeralPrivateKey, false)), true),
      }
    : undefined;
  const ctx = await suite.createSenderContext({
    recipientPublicKey,
    info: buf(HPKE_INFO),
    ...(ekm ? { ekm } : {}),
  });
  const encapsulatedKey = new Uint8Array(ctx.enc);
  const aad = concat(encapsulatedKey, receiverPublicKey);
  const ciphertext = new Uint8Array(await ctx.seal(buf(plaintext), buf(aad)));
  return { encapsulatedKey, ciphertext };
}

/** Concatenate byte arrays. */
export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}
