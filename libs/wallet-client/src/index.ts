export { WalletClientError } from './errors.js';
export {
  generateKeyPair,
  keyPairFromPrivateKey,
  formatClientPublicKey,
  compressPublicKey,
  isValidClientPublicKey,
} from './keys.js';
export type { KeyPair } from './keys.js';
export { decryptSessionBundle, decryptExport } from './bundles.js';
export type { DecryptExportOptions } from './bundles.js';
export { stamp, STAMP_SCHEME, SIGNATURE_HEADER } from './stamp.js';
