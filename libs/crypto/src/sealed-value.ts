import { createHmac, hkdfSync } from 'node:crypto';
import {
  EnvelopeError,
  IV_BYTES,
  KEY_ID_PATTERN,
  TAG_BYTES,
  WRAPPED_DATA_KEY_BYTES,
  gcmOpen,
  gcmSeal,
  newDataKey,
  rewrapDataKey,
  unwrapDataKey,
  wrapDataKey,
  type MasterKey,
  type MasterKeyring,
  type WrappedDataKey,
} from './envelope.js';

/**
 * One secret value sealed into one text column with the envelope scheme:
 * `<prefix>.<keyId>.<b64url(iv‖wrapped data key‖tag)>.<b64url(iv‖ciphertext‖tag)>`. The data key
 * is bound (AAD) to `<context>:dek|<keyId>|<owner>` and the value to `<context>:<field>|<owner>`,
 * so a value copied to another row (another owner) or another column does not open. The key id is
 * readable without any key (`sealedKeyId`), so a rotation finds what is still wrapped under a
 * retired key with SQL (`split_part(column, '.', 2)`).
 */
export interface SealedValueScheme {
  /** First part of the text, naming the format and what it holds (`swc1`, `sid1`...). */
  prefix: string;
  /** Namespace of the AAD, fixed per service and purpose (`sluice:wallet-custody:v1`). */
  context: string;
  /** What the value is (`mnemonic`, `customer`...), bound into the value's AAD. */
  field: string;
}

interface ParsedValue {
  key: WrappedDataKey;
  sealed: Buffer;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

const dekAad = (s: SealedValueScheme, owner: string) => (keyId: string) =>
  Buffer.from(`${s.context}:dek|${keyId}|${owner}`, 'utf8');
const valueAad = (s: SealedValueScheme, owner: string) =>
  Buffer.from(`${s.context}:${s.field}|${owner}`, 'utf8');

/** True when `text` has the form of a value sealed under `scheme` (it may still fail to open). */
export function isSealedValue(scheme: SealedValueScheme, text: string): boolean {
  return typeof text === 'string' && text.startsWith(`${scheme.prefix}.`);
}

function parse(scheme: SealedValueScheme, text: string): ParsedValue {
  const parts = typeof text === 'string' ? text.split('.') : [];
  const [prefix, keyId, wrapped, sealed] = parts;
  if (
    parts.length !== 4 ||
    prefix !== scheme.prefix ||
    !KEY_ID_PATTERN.test(keyId!) ||
    !B64URL.test(wrapped!) ||
    !B64URL.test(sealed!)
  )
    throw new EnvelopeError('MALFORMED', `the sealed ${scheme.field} is not in the ${scheme.prefix} format`);
  const key = { keyId: keyId!, wrapped: Buffer.from(wrapped!, 'base64url') };
  const value = Buffer.from(sealed!, 'base64url');
  if (key.wrapped.length !== WRAPPED_DATA_KEY_BYTES || value.length < IV_BYTES + TAG_BYTES)
    throw new EnvelopeError('MALFORMED', `the sealed ${scheme.field} has invalid lengths`);
  return { key, sealed: value };
}

function format(scheme: SealedValueScheme, key: WrappedDataKey, sealed: Buffer): string {
  return [scheme.prefix, key.keyId, key.wrapped.toString('base64url'), sealed.toString('base64url')].join('.');
}

/** Seals `plaintext` for the row `owner` under a fresh data key wrapped by the current master key. */
export function sealValue(keyring: MasterKeyring, scheme: SealedValueScheme, owner: string, plaintext: string): string {
  const dataKey = newDataKey();
  try {
    const sealed = gcmSeal(dataKey, Buffer.from(plaintext, 'utf8'), valueAad(scheme, owner));
    return format(scheme, wrapDataKey(keyring, dataKey, dekAad(scheme, owner)), sealed);
  } finally {
    dataKey.fill(0);
  }
}

/**
 * Opens a value sealed by `sealValue` for the same owner. EnvelopeError: MALFORMED,
 * MASTER_KEY_UNKNOWN (wrapped under a key not configured) or DECRYPT_FAILED (another owner,
 * another key with the same id, any changed byte).
 */
export function openValue(keyring: MasterKeyring, scheme: SealedValueScheme, owner: string, text: string): string {
  const v = parse(scheme, text);
  const dataKey = unwrapDataKey(keyring, v.key, dekAad(scheme, owner));
  try {
    return gcmOpen(dataKey, v.sealed, valueAad(scheme, owner), scheme.field).toString('utf8');
  } finally {
    dataKey.fill(0);
  }
}

/** The id of the master key that wraps the value's data key (no key needed). */
export function sealedKeyId(scheme: SealedValueScheme, text: string): string {
  return parse(scheme, text).key.keyId;
}

/**
 * The value with its data key rewrapped under the current master key (rotation); the value's
 * ciphertext is kept. The whole value must open first, so a damaged one is never rewrapped.
 */
export function rewrapValue(keyring: MasterKeyring, scheme: SealedValueScheme, owner: string, text: string): string {
  openValue(keyring, scheme, owner, text);
  const v = parse(scheme, text);
  return format(scheme, rewrapDataKey(keyring, v.key, dekAad(scheme, owner)), v.sealed);
}

/**
 * The index keys derived so far, per master key (as long as it is loaded) and label: the HKDF is most
 * of an index's cost, and a filter or an insert computes one per request.
 */
const indexKeys = new WeakMap<MasterKey, Map<string, Buffer>>();

function indexKey(key: MasterKey, label: string): Buffer {
  let byLabel = indexKeys.get(key);
  if (!byLabel) indexKeys.set(key, (byLabel = new Map()));
  let k = byLabel.get(label);
  if (!k) byLabel.set(label, (k = Buffer.from(hkdfSync('sha256', key.key, Buffer.alloc(0), `sluice-blind-index:${label}`, 32))));
  return k;
}

/**
 * Blind indexes of `value` for equality lookups on a sealed column: HMAC-SHA256 under a key
 * derived (HKDF) from each master key of the ring and `label`, `bi1.<keyId>.<hex>`, the current
 * key's first. Store the first; look a value up with all of them (rows written before a rotation
 * carry a retired key's index until they are rewrapped). The same value gives the same index
 * under one key, so an index reveals equality between rows and nothing else.
 */
export function blindIndexes(keyring: MasterKeyring, label: string, value: string): string[] {
  return [keyring.current, ...keyring.retired].map((k) => indexUnder(k, label, value));
}

/** The blind index of `value` under the current master key alone: what is stored (`blindIndexes`' first). */
export function blindIndex(keyring: MasterKeyring, label: string, value: string): string {
  return indexUnder(keyring.current, label, value);
}

function indexUnder(key: MasterKey, label: string, value: string): string {
  return `bi1.${key.id}.${createHmac('sha256', indexKey(key, label)).update(value, 'utf8').digest('hex')}`;
}
