import {
  EnvelopeError,
  loadMasterKeyring as loadEnvelopeKeyring,
  masterKeyId as envelopeMasterKeyId,
  openValue,
  rewrapValue,
  sealValue,
  sealedKeyId,
  type EnvelopeErrorCode,
  type MasterKeyring,
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

/** The master-key variables of wallet-auth and the label of their key ids (fixed: ids are stored in envelopes). */
export const WALLET_KEYRING = {
  current: 'WALLET_MASTER_KEY',
  retired: 'WALLET_MASTER_KEYS_RETIRED',
  idLabel: 'sluice-wallet-master-key-id:v1',
};

/** Key id of a master key: `mk_` + first 16 hex chars of SHA-256("sluice-wallet-master-key-id:v1" ‖ key). */
export function masterKeyId(key: Uint8Array): string {
  return envelopeMasterKeyId(key, WALLET_KEYRING.idLabel);
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
  return custody(() => loadEnvelopeKeyring(current, retired, WALLET_KEYRING));
}

/** The envelope of a wallet mnemonic in one column: `swc1.<keyId>.<wrapped data key>.<ciphertext>`. */
export const MNEMONIC_SCHEME = { prefix: 'swc1', context: 'sluice:wallet-custody:v1', field: 'mnemonic' };

/**
 * Seal a mnemonic for storage (envelope encryption). A fresh random 32-byte data key
 * encrypts the mnemonic (AES-256-GCM, AAD binds the account id); the data key is wrapped
 * with AES-256-GCM under the current master key (AAD binds key id and account id).
 * Result: `swc1.<keyId>.<b64url(iv‖wrappedDek‖tag)>.<b64url(iv‖ciphertext‖tag)>`.
 */
export function sealMnemonic(mnemonic: string, accountId: string, keyring: MasterKeyring): string {
  return sealValue(keyring, MNEMONIC_SCHEME, accountId, mnemonic);
}

/**
 * Open an envelope made by `sealMnemonic` for the same account. Throws CustodyError:
 * CUSTODY_MALFORMED, CUSTODY_MASTER_KEY_UNKNOWN (sealed under a key not configured) or
 * CUSTODY_DECRYPT_FAILED (wrong key material, other account, tampering).
 */
export function openMnemonic(sealed: string, accountId: string, keyring: MasterKeyring): string {
  return custody(() => openValue(keyring, MNEMONIC_SCHEME, accountId, sealed), 'mnemonic');
}

/** True when the envelope is wrapped under a retired master key and should be rewrapped. */
export function needsRewrap(sealed: string, keyring: MasterKeyring): boolean {
  return custody(() => sealedKeyId(MNEMONIC_SCHEME, sealed)) !== keyring.current.id;
}

/** Rewrap the data key under the current master key (rotation); the mnemonic ciphertext is kept. */
export function rewrapMnemonic(sealed: string, accountId: string, keyring: MasterKeyring): string {
  return custody(() => rewrapValue(keyring, MNEMONIC_SCHEME, accountId, sealed), 'mnemonic');
}
