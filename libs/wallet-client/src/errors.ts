/** Error raised by the wallet client for malformed inputs or failed decryption/verification. */
export class WalletClientError extends Error {
  constructor(
    readonly code:
      | 'INVALID_KEY'
      | 'INVALID_BUNDLE'
      | 'DECRYPTION_FAILED'
      | 'BUNDLE_SIGNATURE_INVALID'
      | 'ORGANIZATION_MISMATCH',
    message: string,
  ) {
    super(message);
    this.name = 'WalletClientError';
  }
}
