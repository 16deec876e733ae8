import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Envelope encryption, the one scheme of the system for secrets at rest (wallet mnemonics in
 * wallet-auth, identity documents in compliance): every secret is encrypted with its own random
 * 256-bit data key (AES-256-GCM), and the data key is stored wrapped (AES-256-GCM) under a
 * master key that lives only in configuration. Each master key has an id, written beside the
 * wrapped data key, so a keyring of the current key and retired ones opens envelopes sealed
 * before a rotation, and a data key can be rewrapped under the current key without touching
 * the secret's ciphertext. Additional authenticated data binds every ciphertext to what it
 * belongs to (an account, a document and chunk), so a ciphertext moved elsewhere does not open.
 */

export interface MasterKey {
  /** Key id written beside each wrapped data key (`mk_` + 16 hex of a labelled SHA-256 fingerprint). */
  id: string;
  /** 32-byte AES-256 key. */
  key: Uint8Array;
}

/** The current master key (wraps) plus retired keys still accepted for unwrapping during rotation. */
export interface MasterKeyring {
  current: MasterKey;
  retired: MasterKey[];
}

/** Why an envelope could not be made or opened (an operational fault, never a client's). */
export type EnvelopeErrorCode = 'MASTER_KEY_UNKNOWN' | 'DECRYPT_FAILED' | 'MALFORMED' | 'CONFIG_INVALID';

/** A failure of envelope encryption; callers map it to their own error (it is not a DomainError). */
export class EnvelopeError extends Error {
  constructor(
    readonly code: EnvelopeErrorCode,
    message: string,
    /** The configuration variable at fault (CONFIG_INVALID). */
    readonly variable?: string,
  ) {
    super(message);
    this.name = 'EnvelopeError';
  }
}

export const IV_BYTES = 12;
export const TAG_BYTES = 16;
export const DATA_KEY_BYTES = 32;
/** Length of a data key wrapped by `wrapDataKey` (iv ‖ ciphertext ‖ tag). */
export const WRAPPED_DATA_KEY_BYTES = IV_BYTES + DATA_KEY_BYTES + TAG_BYTES;
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Key id of a master key: `mk_` + first 16 hex chars of SHA-256(label ‖ key). */
export function masterKeyId(key: Uint8Array, label: string): string {
  return 'mk_' + createHash('sha256').update(label).update(key).digest('hex').slice(0, 16);
}

/** How a service names its master-key variables and fingerprints its keys. */
export interface KeyringNames {
  /** Variable of the current key (named in errors), e.g. WALLET_MASTER_KEY. */
  current: string;
  /** Variable of the retired keys (named in errors), e.g. WALLET_MASTER_KEYS_RETIRED. */
  retired: string;
  /** Label of the key-id fingerprint (changing it changes every key id: fixed per service). */
  idLabel: string;
}

function decodeMasterKey(value: string, variable: string, idLabel: string): MasterKey {
  const trimmed = value.trim();
  const key = /^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)
    ? new Uint8Array(Buffer.from(trimmed, 'base64'))
    : new Uint8Array();
  if (key.length !== 32)
    throw new EnvelopeError(
      'CONFIG_INVALID',
      `${variable} must be 32 bytes encoded in base64 (e.g. \`openssl rand -base64 32\`)`,
      variable.replace(/\[\d+\]$/, ''),
    );
  return { id: masterKeyId(key, idLabel), key };
}

/**
 * Builds a keyring from configuration: `current` (base64, 32 bytes) wraps new data keys;
 * `retired` (optional, comma-separated base64 keys) only unwraps data keys wrapped before a
 * rotation. Throws EnvelopeError CONFIG_INVALID naming the variable.
 */
export function loadMasterKeyring(
  current: string,
  retired: string | undefined,
  names: KeyringNames,
): MasterKeyring {
  const currentKey = decodeMasterKey(current, names.current, names.idLabel);
  const retiredKeys = (retired ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((s, i) => decodeMasterKey(s, `${names.retired}[${i}]`, names.idLabel))
    .filter((k) => k.id !== currentKey.id);
  return { current: currentKey, retired: retiredKeys };
}

/** A fresh random data key (the caller zeroes it when done: `key.fill(0)`). */
export function newDataKey(): Buffer {
  return randomBytes(DATA_KEY_BYTES);
}

/** AES-256-GCM: `iv ‖ ciphertext ‖ tag`, a fresh random IV, `aad` authenticated. */
export function gcmSeal(key: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, ct, cipher.getAuthTag()]);
}

/**
 * Opens what `gcmSeal` made under the same key and `aad`. Throws EnvelopeError
 * DECRYPT_FAILED (wrong key, other aad, any changed byte) or MALFORMED (too short).
 */
export function gcmOpen(key: Uint8Array, sealed: Uint8Array, aad: Uint8Array, what: string): Buffer {
  if (sealed.length < IV_BYTES + TAG_BYTES)
    throw new EnvelopeError('MALFORMED', `the sealed ${what} is too short`);
  const blob = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  const iv = blob.subarray(0, IV_BYTES);
  const tag = blob.subarray(blob.length - TAG_BYTES);
  const ct = blob.subarray(IV_BYTES, blob.length - TAG_BYTES);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ct), decipher.final()]);
  } catch {
    throw new EnvelopeError(
      'DECRYPT_FAILED',
      `cannot decrypt the ${what}: wrong master key, wrong binding or tampered ciphertext`,
    );
  }
}

/** The master key with this id in the keyring (current or retired); MASTER_KEY_UNKNOWN otherwise. */
export function findMasterKey(keyring: MasterKeyring, id: string): MasterKey {
  if (keyring.current.id === id) return keyring.current;
  const key = keyring.retired.find((k) => k.id === id);
  if (!key)
    throw new EnvelopeError(
      'MASTER_KEY_UNKNOWN',
      `the envelope was sealed under master key ${id}, which is not configured`,
    );
  return key;
}

/** A data key wrapped under a master key: store both beside the ciphertext. */
export interface WrappedDataKey {
  keyId: string;
  /** iv ‖ encrypted data key ‖ tag (WRAPPED_DATA_KEY_BYTES). */
  wrapped: Buffer;
}

/**
 * Wraps a data key under the keyring's current master key; `aad` (what the key belongs to) is
 * bound together with the key id, so the wrapped key opens only for the same owner and key id.
 */
export function wrapDataKey(
  keyring: MasterKeyring,
  dataKey: Uint8Array,
  aad: (keyId: string) => Uint8Array,
): WrappedDataKey {
  const { id, key } = keyring.current;
  return { keyId: id, wrapped: gcmSeal(key, dataKey, aad(id)) };
}

/** Unwraps a data key made by `wrapDataKey` with the same binding; EnvelopeError otherwise. */
export function unwrapDataKey(
  keyring: MasterKeyring,
  w: WrappedDataKey,
  aad: (keyId: string) => Uint8Array,
): Buffer {
  if (!KEY_ID_PATTERN.test(w.keyId) || w.wrapped.length !== WRAPPED_DATA_KEY_BYTES)
    throw new EnvelopeError('MALFORMED', 'the wrapped data key has an invalid key id or length');
  return gcmOpen(findMasterKey(keyring, w.keyId).key, w.wrapped, aad(w.keyId), 'data key');
}

/** Rewraps a data key under the current master key (rotation); the secret's ciphertext is kept. */
export function rewrapDataKey(
  keyring: MasterKeyring,
  w: WrappedDataKey,
  aad: (keyId: string) => Uint8Array,
): WrappedDataKey {
  const dataKey = unwrapDataKey(keyring, w, aad);
  try {
    return wrapDataKey(keyring, dataKey, aad);
  } finally {
    dataKey.fill(0);
  }
}
