import { p256 } from '@noble/curves/p256';
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils';
import { createBase58check } from '@scure/base';
import { WalletClientError } from './errors.js';
import { hpkeOpen } from './hpke.js';
import { parsePrivateKey, parsePublicKey } from './keys.js';

const base58check = createBase58check(sha256);

/**
 * Decrypt `encryptedSessionSigningKey` (base58check of compressed encapsulated key ‖
 * HPKE ciphertext) with the private key whose public key was sent as `clientPublicKey`.
 * Returns the session private key, hex (64 chars).
 */
export async function decryptSessionBundle(bundle: string, privateKey: string): Promise<string> {
  const receiver = parsePrivateKey(privateKey);
  let bytes: Uint8Array;
  try {
    bytes = base58check.decode(bundle);
  } catch {
    throw new WalletClientError('INVALID_BUNDLE', 'session bundle is not valid base58check');
  }
  if (bytes.length <= 33) throw new WalletClientError('INVALID_BUNDLE', 'session bundle is too short');
  const enc = parsePublicKey(bytesToHex(bytes.subarray(0, 33))).toRawBytes(false);
  const plaintext = await hpkeOpen(enc, bytes.subarray(33), receiver);
  if (plaintext.length !== 32 || !p256.utils.isValidPrivateKey(plaintext)) {
    throw new WalletClientError('INVALID_BUNDLE', 'session bundle does not contain a P-256 private key');
  }
  return bytesToHex(plaintext);
}

export interface DecryptExportOptions {
  /** When set, the bundle's signed `organizationId` (the internal account id) must equal it. */
  organizationId?: string;
  /**
   * The service's published export signing key (uncompressed hex). When set, the bundle must
   * be signed by exactly this key (production). When unset, a present signature is still
   * verified against the bundle's own `enclaveQuorumPublic`, and an unsigned (sandbox) bundle is accepted.
   */
  signerPublicKey?: string;
}

/**
 * Decrypt `encryptedWalletCredentials` (export bundle JSON) with the private key whose
 * public key was sent as the export `clientPublicKey`. Returns the mnemonic.
 */
export async function decryptExport(
  exportBundle: string,
  privateKey: string,
  options: DecryptExportOptions = {},
): Promise<string> {
  const receiver = parsePrivateKey(privateKey);
  let outer: Record<string, unknown>;
  let signed: Record<string, unknown>;
  try {
    outer = JSON.parse(exportBundle) as Record<string, unknown>;
    if (typeof outer.data !== 'string' || !/^(?:[0-9a-fA-F]{2})+$/.test(outer.data)) throw new Error('data');
    signed = JSON.parse(
      new TextDecoder('utf-8', { fatal: true }).decode(hexToBytes(outer.data.toLowerCase())),
    ) as Record<string, unknown>;
  } catch {
    throw new WalletClientError('INVALID_BUNDLE', 'export bundle is not the expected JSON with hex `data`');
  }
  const dataBytes = hexToBytes((outer.data as string).toLowerCase());
  const signature = typeof outer.dataSignature === 'string' ? outer.dataSignature : '';
  const signer = typeof outer.enclaveQuorumPublic === 'string' ? outer.enclaveQuorumPublic : '';
  if (options.signerPublicKey !== undefined) {
    if (signer.toLowerCase() !== formatUncompressed(options.signerPublicKey)) {
      throw new WalletClientError(
        'BUNDLE_SIGNATURE_INVALID',
        'export bundle is not signed by the expected key',
      );
    }
  }
  if (signature !== '' || signer !== '') {
    let ok = false;
    try {
      ok = p256.verify(
        p256.Signature.fromDER(signature).toCompactRawBytes(),
        sha256(dataBytes),
        parsePublicKey(signer).toRawBytes(false),
        { lowS: false, prehash: false, format: 'compact' },
      );
    } catch {
      ok = false;
    }
    if (!ok)
      throw new WalletClientError('BUNDLE_SIGNATURE_INVALID', 'export bundle signature does not verify');
  }
  if (options.organizationId !== undefined && signed.organizationId !== options.organizationId) {
    throw new WalletClientError(
      'ORGANIZATION_MISMATCH',
      'export bundle was issued for another organizationId',
    );
  }
  if (
    typeof signed.encappedPublic !== 'string' ||
    typeof signed.ciphertext !== 'string' ||
    !/^(?:[0-9a-fA-F]{2})+$/.test(signed.ciphertext)
  ) {
    throw new WalletClientError('INVALID_BUNDLE', 'export bundle data lacks encappedPublic/ciphertext');
  }
  const enc = parsePublicKey(signed.encappedPublic).toRawBytes(false);
  const plaintext = await hpkeOpen(enc, hexToBytes(signed.ciphertext.toLowerCase()), receiver);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(plaintext);
  } catch {
    throw new WalletClientError('INVALID_BUNDLE', 'exported secret is not UTF-8 text');
  }
}

function formatUncompressed(hex: string): string {
  return bytesToHex(parsePublicKey(hex).toRawBytes(false));
}
