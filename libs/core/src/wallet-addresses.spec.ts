import { describe, expect, it } from 'vitest';
import { CRYPTO_NETWORKS, checkCryptoDestination, cryptoNetworkVariant } from './wallet-addresses.js';

describe('crypto destinations by the external-account variants', () => {
  it('knows the networks a variant pays to, and no other', () => {
    expect([...CRYPTO_NETWORKS].sort()).toEqual(['BASE', 'ETHEREUM', 'LIGHTNING', 'POLYGON', 'SOLANA', 'SPARK', 'TRON']);
    expect(cryptoNetworkVariant('SOLANA')?.accountType).toBe('SOLANA_WALLET');
    expect(cryptoNetworkVariant('BITCOIN')).toBeUndefined();
    expect(cryptoNetworkVariant('USD_ACCOUNT')).toBeUndefined();
    expect(cryptoNetworkVariant('constructor')).toBeUndefined();
  });

  it("checks an address by its network's grammar", () => {
    expect(checkCryptoDestination('SOLANA', '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU')).toBeUndefined();
    expect(checkCryptoDestination('ETHEREUM', '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU')).toBe(
      'must be 0x followed by 40 hexadecimal digits',
    );
    expect(checkCryptoDestination('POLYGON', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')).toBeUndefined();
    expect(checkCryptoDestination('TRON', 'TBCBMJNZTXwsMfgHKfsSSPcreaWJkeqY1o')).toBeUndefined();
    // LIGHTNING takes any of its three identifiers.
    expect(checkCryptoDestination('LIGHTNING', 'alice@wallet.example.com')).toBeUndefined();
    expect(checkCryptoDestination('LIGHTNING', 'not an address')).toContain('lightning address');
    expect(checkCryptoDestination('BITCOIN', 'bc1q')).toBe('BITCOIN is not a network Sluice pays to');
  });
});
