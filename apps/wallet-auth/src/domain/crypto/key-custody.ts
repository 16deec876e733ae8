import {
  EnvelopeError,
  IV_BYTES,
  KEY_ID_PATTERN,
  TAG_BYTES,
  WRAPPED_DATA_KEY_BYTES,
  gcmOpen,
  gcmSeal,
  loadMasterKeyring as loadEnvelopeKeyring,
  masterKeyId as envelopeMasterKeyId,
  newDataKey,
  rewrapDataKey,
  unwrapDataKey,
  wrapDataKey,
  type EnvelopeErrorCode,
  type MasterKeyring,
  type WrappedDataKey,
} from '@sluice/crypto';
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

export type { MasterKey, MasterKeyring } from '@sluice/crypto';

const ENVELOPE_PREFIX = 'swc1';
/** The master-key variables of wallet-auth and the label of their key ids (fixed: ids are stored in envelopes). */
const KEYRING_NAMES = {
  current: 'WALLET_MASTER_KEY',
  retired: 'WALLET_MASTER_KEYS_RETIRED',
  idLabel: 'sluice-wallet-master-key-id:v1',
};

/** Key id of a master key: `mk_` + first 16 hex chars of SHA-256("sluice-wallet-master-key-id:v1" ‖ key). */
export function masterKeyId(key: Uint8Array): string {
  return envelopeMasterKeyId(key, KEYRING_NAMES.idLabel);
}

const CUSTODY_CODES: Record<EnvelopeErrorCode, CustodyError['code']> = {
  MASTER_KEY_UNKNOWN: 'CUSTODY_MASTER_KEY_UNKNOWN',
  DECRYPT_FAILED: 'CUSTODY_DECRYPT_FAILED',
  MALFORMED: 'CUSTODY_MALFORMED',
  CONFIG_INVALID: 'CUSTODY_CONFIG_INVALID',
};

/** Runs a step of the shared envelope kit, reporting its failures as wallet CustodyErrors. */
function custody<T>(fn: () => T, what?: string): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof EnvelopeError) {
      const message =
        e.code === 'DECRYPT_FAILED' && what
          ? `cannot decrypt the wallet ${what}: wrong master key, wrong account id or tampered envelope`
          : e.code === 'MASTER_KEY_UNKNOWN'
            ? e.message.replace('the envelope', 'the wallet envelope')
            : e.message;
      throw new CustodyError(CUSTODY_CODES[e.code], message);
    }
    throw e;
  }
}

/**
 * Build the keyring from configuration: `WALLET_MASTER_KEY` (base64, 32 bytes) seals new
 * envelopes; `WALLET_MASTER_KEYS_RETIRED` (optional, comma-separated base64 keys) only opens
 * envelopes sealed before a rotation. Throws CustodyError CUSTODY_CONFIG_INVALID naming the variable.
 */
export function loadMasterKeyring(current: string, retired?: string): MasterKeyring {
  return custody(() => loadEnvelopeKeyring(current, retired, KEYRING_NAMES));
}

function aadForDek(accountId: string): (keyId: string) => Buffer {
  return (keyId) => Buffer.from(`sluice:wallet-custody:v1:dek|${keyId}|${accountId}`, 'utf8');
}

function aadForSecret(accountId: string): Buffer {
  return Buffer.from(`sluice:wallet-custody:v1:mnemonic|${accountId}`, 'utf8');
}

interface Envelope {
  key: WrappedDataKey;
  sealedSecret: Buffer;
}

function parseEnvelope(sealed: string): Envelope {
  const parts = typeof sealed === 'string' ? sealed.split('.') : [];
  const [prefix, keyId, wrapped, secret] = parts;
  const b64 = /^[A-Za-z0-9_-]+$/;
  if (
    parts.length !== 4 ||
    prefix !== ENVELOPE_PREFIX ||
    !KEY_ID_PATTERN.test(keyId!) ||
    !b64.test(wrapped!) ||
    !b64.test(secret!)
  ) {
    throw new CustodyError('CUSTODY_MALFORMED', 'the wallet envelope is not in the swc1 format');
  }
  const wrappedDek = Buffer.from(wrapped!, 'base64url');
  const sealedSecret = Buffer.from(secret!, 'base64url');
  if (wrappedDek.length !== WRAPPED_DATA_KEY_BYTES || sealedSecret.length < IV_BYTES + TAG_BYTES + 1) {
    throw new CustodyError('CUSTODY_MALFORMED', 'the wallet envelope has invalid lengths');
  }
  return { key: { keyId: keyId!, wrapped: wrappedDek }, sealedSecret };
}

function format(key: WrappedDataKey, sealedSecret: Buffer): string {
  return [ENVELOPE_PREFIX, key.keyId, key.wrapped.toString('base64url'), sealedSecret.toString('base64url')].join(
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
  const dek = newDataKey();
  try {
    const sealedSecret = gcmSeal(dek, Buffer.from(mnemonic, 'utf8'), aadForSecret(accountId));
    return format(wrapDataKey(keyring, dek, aadForDek(accountId)), sealedSecret);
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
  const dek = custody(() => unwrapDataKey(keyring, env.key, aadForDek(accountId)), 'data key');
  try {
    return custody(() => gcmOpen(dek, env.sealedSecret, aadForSecret(accountId), 'mnemonic'), 'mnemonic').toString(
      'utf8',
    );
  } finally {
    dek.fill(0);
  }
}

/** True when the envelope is wrapped under a retired master key and should be rewrapped. */
export function needsRewrap(sealed: string, keyring: MasterKeyring): boolean {
  return parseEnvelope(sealed).key.keyId !== keyring.current.id;
}

/** Rewrap the data key under the current master key (rotation); the mnemonic ciphertext is kept. */
export function rewrapMnemonic(sealed: string, accountId: string, keyring: MasterKeyring): string {
  openMnemonic(sealed, accountId, keyring); // the whole envelope must open before it is rewrapped
  const env = parseEnvelope(sealed);
  return format(
    custody(() => rewrapDataKey(keyring, env.key, aadForDek(accountId)), 'data key'),
    env.sealedSecret,
  );
}
