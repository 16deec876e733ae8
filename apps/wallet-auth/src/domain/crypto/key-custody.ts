import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { generateMnemonic as bip39Generate, validateMnemonic as bip39Validate } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { CustodyError } from './errors.js';

/** Wallet mnemonics are 24 English BIP-39 words (256 bits of entropy). */
export const MNEMONIC_STRENGTH_BITS = 256;

/** Generate a fresh 24-word BIP-39 mnemonic (English wordlist). */
export function generateMnemonic(): string {
  return bip39Generate(wordlist, MNEMONIC_STRENGTH_BITS);
}

/** True when `mnemonic` is a valid English BIP-39 phrase (checksum included). */
export function isValidMnemonic(mnemonic: string): boolean {
  return bip39Validate(mnemonic, wordlist);
}

export interface MasterKey {
  /** Key id written into each envelope (`mk_` + 16 hex of a SHA-256 fingerprint by default). */
  id: string;
  /** 32-byte AES-256 key. */
  key: Uint8Array;
}

/** The current master key (seals) plus retired keys still accepted for opening during rotation. */
export interface MasterKeyring {
  current: MasterKey;
  retired: MasterKey[];
}

const ENVELOPE_PREFIX = 'swc1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const DEK_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Key id of a master key: `mk_` + first 16 hex chars of SHA-256("sluice-wallet-master-key-id:v1" ‖ key). */
export function masterKeyId(key: Uint8Array): string {
  return (
    'mk_' +
    createHash('sha256').update('sluice-wallet-master-key-id:v1').update(key).digest('hex').slice(0, 16)
  );
}

function decodeMasterKey(value: string, variable: string): MasterKey {
  const trimmed = value.trim();
  const key = /^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)
    ? new Uint8Array(Buffer.from(trimmed, 'base64'))
    : new Uint8Array();
  if (key.length !== 32)
    throw new CustodyError(
      'CUSTODY_CONFIG_INVALID',
      `${variable} must be 32 bytes encoded in base64 (e.g. \`openssl rand -base64 32\`)`,
    );
  return { id: masterKeyId(key), key };
}

/**
 * Build the keyring from configuration: `WALLET_MASTER_KEY` (base64, 32 bytes) seals new
 * envelopes; `WALLET_MASTER_KEYS_RETIRED` (optional, comma-separated base64 keys) only opens
 * envelopes sealed before a rotation. Throws CustodyError CUSTODY_CONFIG_INVALID naming the variable.
 */
export function loadMasterKeyring(current: string, retired?: string): MasterKeyring {
  const currentKey = decodeMasterKey(current, 'WALLET_MASTER_KEY');
  const retiredKeys = (retired ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((s, i) => decodeMasterKey(s, `WALLET_MASTER_KEYS_RETIRED[${i}]`))
    .filter((k) => k.id !== currentKey.id);
  return { current: currentKey, retired: retiredKeys };
}

function aadForDek(keyId: string, accountId: string): Buffer {
  return Buffer.from(`sluice:wallet-custody:v1:dek|${keyId}|${accountId}`, 'utf8');
}

function aadForSecret(accountId: string): Buffer {
  return Buffer.from(`sluice:wallet-custody:v1:mnemonic|${accountId}`, 'utf8');
}

function gcmSeal(key: Uint8Array, plaintext: Uint8Array, aad: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, ct, cipher.getAuthTag()]);
}

function gcmOpen(key: Uint8Array, blob: Buffer, aad: Buffer, what: string): Buffer {
  const iv = blob.subarray(0, IV_BYTES);
  const tag = blob.subarray(blob.length - TAG_BYTES);
  const ct = blob.subarray(IV_BYTES, blob.length - TAG_BYTES);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ct), decipher.final()]);
  } catch {
    throw new CustodyError(
      'CUSTODY_DECRYPT_FAILED',
      `cannot decrypt the wallet ${what}: wrong master key, wrong account id or tampered envelope`,
    );
  }
}

function findKey(keyring: MasterKeyring, id: string): MasterKey {
  if (keyring.current.id === id) return keyring.current;
  const key = keyring.retired.find((k) => k.id === id);
  if (!key)
    throw new CustodyError(
      'CUSTODY_MASTER_KEY_UNKNOWN',
      `the wallet envelope was sealed under master key ${id}, which is not configured`,
    );
  return key;
}

interface Envelope {
  keyId: string;
  wrappedDek: Buffer;
  sealedSecret: Buffer;
}

function parseEnvelope(sealed: string): Envelope {
  const parts = typeof sealed === 'string' ? sealed.split('.') : [];
  const [prefix, keyId, wrapped, secret] = parts;
  const b64 = /^[A-Za-z0-9_-]+$/;
  if (
    parts.length !== 4 ||
    prefix !== ENVELOPE_PREFIX ||
    !KEY_ID.test(keyId!) ||
    !b64.test(wrapped!) ||
    !b64.test(secret!)
  ) {
    throw new CustodyError('CUSTODY_MALFORMED', 'the wallet envelope is not in the swc1 format');
  }
  const wrappedDek = Buffer.from(wrapped!, 'base64url');
  const sealedSecret = Buffer.from(secret!, 'base64url');
  if (
    wrappedDek.length !== IV_BYTES + DEK_BYTES + TAG_BYTES ||
    sealedSecret.length < IV_BYTES + TAG_BYTES + 1
  ) {
    throw new CustodyError('CUSTODY_MALFORMED', 'the wallet envelope has invalid lengths');
  }
  return { keyId: keyId!, wrappedDek, sealedSecret };
}

function format(keyId: string, wrappedDek: Buffer, sealedSecret: Buffer): string {
  return [ENVELOPE_PREFIX, keyId, wrappedDek.toString('base64url'), sealedSecret.toString('base64url')].join(
    '.',
  );
}

/**
 * Seal a mnemonic for storage (envelope encryption). A fresh random 32-byte data key
 * encrypts the mnemonic (AES-256-GCM, AAD binds the account id); the data key is wrapped
 * with AES-256-GCM under the current master key (AAD binds key id and account id).
 * Result: `swc1.<keyId>.<b64url(iv‖wrappedDek‖tag)>.<b64url(iv‖ciphertext‖tag)>`.
 */
export function sealMnemonic(mnemonic: string, accountId: string, keyring: MasterKeyring): string {
  const dek = randomBytes(DEK_BYTES);
  try {
    const sealedSecret = gcmSeal(dek, Buffer.from(mnemonic, 'utf8'), aadForSecret(accountId));
    const wrappedDek = gcmSeal(keyring.current.key, dek, aadForDek(keyring.current.id, accountId));
    return format(keyring.current.id, wrappedDek, sealedSecret);
  } finally {
    dek.fill(0);
  }
}

/**
 * Open an envelope made by `sealMnemonic` for the same account. Throws CustodyError:
 * CUSTODY_MALFORMED, CUSTODY_MASTER_KEY_UNKNOWN (sealed under a key not configured) or
 * CUSTODY_DECRYPT_FAILED (wrong key material, other account, tampering).
 */
export function openMnemonic(sealed: string, accountId: string, keyring: MasterKeyring): string {
  const env = parseEnvelope(sealed);
  const master = findKey(keyring, env.keyId);
  const dek = gcmOpen(master.key, env.wrappedDek, aadForDek(env.keyId, accountId), 'data key');
  try {
    return gcmOpen(dek, env.sealedSecret, aadForSecret(accountId), 'mnemonic').toString('utf8');
  } finally {
    dek.fill(0);
  }
}

/** True when the envelope is wrapped under a retired master key and should be rewrapped. */
export function needsRewrap(sealed: string, keyring: MasterKeyring): boolean {
  return parseEnvelope(sealed).keyId !== keyring.current.id;
}

/** Rewrap the data key under the current master key (rotation); the mnemonic ciphertext is kept. */
export function rewrapMnemonic(sealed: string, accountId: string, keyring: MasterKeyring): string {
  const env = parseEnvelope(sealed);
  const dek = gcmOpen(
    findKey(keyring, env.keyId).key,
    env.wrappedDek,
    aadForDek(env.keyId, accountId),
    'data key',
  );
  try {
    gcmOpen(dek, env.sealedSecret, aadForSecret(accountId), 'mnemonic').fill(0);
    return format(
      keyring.current.id,
      gcmSeal(keyring.current.key, dek, aadForDek(keyring.current.id, accountId)),
      env.sealedSecret,
    );
  } finally {
    dek.fill(0);
  }
}
