import { p256 } from '@noble/curves/p256';
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils';
import { parseClientPublicKey } from './client-public-key.js';
import { hpkeSeal } from './hpke.js';

/** `version` of the export bundle envelope. */
export const EXPORT_BUNDLE_VERSION = 'v1.0.0';

/** The service key that signs export bundles in production (`enclaveQuorumPublic` is its public key). */
export interface ExportSigningKey {
  /** 32-byte P-256 private key. */
  privateKey: Uint8Array;
  /** Uncompressed public key, hex (130 chars): published so integrators can pin it. */
  publicKey: string;
}

/**
 * Parse the export signing key from configuration (`WALLET_EXPORT_SIGNING_KEY`: 64 hex
 * characters, a P-256 private key). Throws a plain Error naming the variable (a config fault).
 */
export function parseExportSigningKey(hex: string, variable = 'WALLET_EXPORT_SIGNING_KEY'): ExportSigningKey {
  if (!/^[0-9a-fA-F]{64}$/.test(hex))
    throw new Error(`${variable} must be 64 hex characters (a P-256 private key)`);
  const privateKey = hexToBytes(hex.toLowerCase());
  if (!p256.utils.isValidPrivateKey(privateKey))
    throw new Error(`${variable} is not a valid P-256 private key`);
  return { privateKey, publicKey: bytesToHex(p256.getPublicKey(privateKey, false)) };
}

export interface ExportBundleInput {
  /** The secret to export (a BIP-39 mnemonic); encrypted as its UTF-8 bytes. */
  mnemonic: string;
  /** The client's ephemeral export key (validated like every clientPublicKey; field `clientPublicKey`). */
  clientPublicKey: string;
  /** Bound in the signed data; clients check it (Turnkey's `organizationId`). We use the internal account id. */
  organizationId: string;
  /** SANDBOX leaves `dataSignature`/`enclaveQuorumPublic` empty; PRODUCTION requires `signingKey`. */
  environment: 'SANDBOX' | 'PRODUCTION';
  signingKey?: ExportSigningKey;
  /** Deterministic test vectors only. */
  ephemeralPrivateKey?: Uint8Array;
}

/**
 * Encrypt a wallet mnemonic to the client's export key in the export-bundle form
 * (`encryptedWalletCredentials`): JSON `{version, data, dataSignature, enclaveQuorumPublic}`
 * where `data` is the hex of the UTF-8 JSON `{encappedPublic, ciphertext, organizationId}`
 * (`encappedPublic` uncompressed hex), and `dataSignature` is a DER-hex ECDSA-P256 signature
 * over SHA-256 of the `data` bytes by the service export key. Same HPKE construction as the
 * credential bundle, so `@turnkey/crypto`'s `decryptExportBundle` opens it when given our
 * signing public key as `dangerouslyOverrideSignerPublicKey`.
 */
export async function createExportBundle(input: ExportBundleInput): Promise<string> {
  const receiver = parseClientPublicKey(input.clientPublicKey);
  if (input.environment === 'PRODUCTION' && !input.signingKey) {
    throw new Error('createExportBundle: production export bundles require the export signing key');
  }
  const { encapsulatedKey, ciphertext } = await hpkeSeal(
    new TextEncoder().encode(input.mnemonic),
    receiver,
    input.ephemeralPrivateKey,
  );
  const signed = JSON.stringify({
    encappedPublic: bytesToHex(encapsulatedKey),
    ciphertext: bytesToHex(ciphertext),
    organizationId: input.organizationId,
  });
  const dataBytes = new TextEncoder().encode(signed);
  let dataSignature = '';
  let enclaveQuorumPublic = '';
  if (input.environment === 'PRODUCTION' && input.signingKey) {
    dataSignature = p256.sign(sha256(dataBytes), input.signingKey.privateKey, { prehash: false }).toDERHex();
    enclaveQuorumPublic = input.signingKey.publicKey;
  }
  return JSON.stringify({
    version: EXPORT_BUNDLE_VERSION,
    data: bytesToHex(dataBytes),
    dataSignature,
    enclaveQuorumPublic,
  });
}
