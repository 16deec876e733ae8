import { describe, expect, it } from 'vitest';
import { p256 } from '@noble/curves/p256';
import { sha256 } from '@noble/hashes/sha2';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { verifyStampSignature } from '@turnkey/crypto';
import { generateKeyPair, stamp as clientStamp } from '@sluice/wallet-client';
import { parseStamp, verifyStamp } from './stamp.js';

const payload =
  '{"accountId":"InternalAccount:019542f5-b3e7-1d02-0000-000000000002","action":"EXPORT_WALLET"}';

function encode(obj: unknown): string {
  return Buffer.from(typeof obj === 'string' ? obj : JSON.stringify(obj)).toString('base64url');
}

function decode(header: string): { publicKey: string; scheme: string; signature: string } {
  return JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
}

function failure(fn: () => unknown): { code: string; kind: string; details?: Record<string, unknown> } {
  try {
    fn();
  } catch (e) {
    return e as { code: string; kind: string; details?: Record<string, unknown> };
  }
  throw new Error('expected a failure');
}

describe('verifyStamp', () => {
  it.each(['node', 'purejs'] as const)(
    'accepts a stamp made by @turnkey/api-key-stamper (%s runtime)',
    async (runtime) => {
      const key = generateKeyPair();
      const stamper = new ApiKeyStamper({
        apiPublicKey: key.publicKeyCompressed,
        apiPrivateKey: key.privateKey,
        runtimeOverride: runtime,
      });
      const { stampHeaderValue } = await stamper.stamp(payload);
      expect(verifyStamp(stampHeaderValue, payload).publicKey).toBe(key.publicKeyCompressed);
    },
  );

  it('accepts a stamp made by @sluice/wallet-client, which Turnkey verifies too', async () => {
    const key = generateKeyPair();
    const header = clientStamp(payload, key.privateKey);
    const verified = verifyStamp(header, payload);
    expect(verified).toMatchObject({
      publicKey: key.publicKeyCompressed,
      scheme: 'SIGNATURE_SCHEME_TK_API_P256',
    });
    expect(await verifyStampSignature(key.publicKeyCompressed, decode(header).signature, payload)).toBe(true);
  });

  it('accepts high-S signatures (as browsers produce)', () => {
    const key = generateKeyPair();
    const low = p256.sign(sha256(new TextEncoder().encode(payload)), key.privateKey, { lowS: true });
    const high = new p256.Signature(low.r, p256.CURVE.n - low.s);
    expect(high.hasHighS()).toBe(true);
    const header = encode({
      publicKey: key.publicKeyCompressed,
      scheme: 'SIGNATURE_SCHEME_TK_API_P256',
      signature: high.toDERHex(),
    });
    expect(verifyStamp(header, payload).publicKey).toBe(key.publicKeyCompressed);
  });

  it('refuses a tampered payload and a stamp claiming another key as WALLET_SIGNATURE_INVALID', () => {
    const key = generateKeyPair();
    const other = generateKeyPair();
    const header = clientStamp(payload, key.privateKey);
    const tampered = failure(() => verifyStamp(header, payload.replace('EXPORT_WALLET', 'EXECUTE_QUOTE')));
    expect(tampered).toMatchObject({
      code: 'WALLET_SIGNATURE_INVALID',
      kind: 'UNAUTHENTICATED',
      details: { reason: 'Invalid Service-Wallet-Signature' },
    });
    // one extra whitespace byte is a different payload
    expect(failure(() => verifyStamp(header, payload + ' ')).code).toBe('WALLET_SIGNATURE_INVALID');
    const swapped = encode({ ...decode(header), publicKey: other.publicKeyCompressed });
    expect(failure(() => verifyStamp(swapped, payload)).code).toBe('WALLET_SIGNATURE_INVALID');
    const otherSigned = clientStamp(payload, other.privateKey);
    expect(verifyStamp(otherSigned, payload).publicKey).toBe(other.publicKeyCompressed);
    expect(verifyStamp(otherSigned, payload).publicKey).not.toBe(key.publicKeyCompressed);
  });

  it('distinguishes missing and each kind of malformed stamp', () => {
    const key = generateKeyPair();
    const good = decode(clientStamp(payload, key.privateKey));
    const malformed = (header: string) => {
      const e = failure(() => verifyStamp(header, payload));
      expect(e.code).toBe('WALLET_SIGNATURE_MALFORMED');
      expect(e.kind).toBe('UNAUTHENTICATED');
      return (e.details as { problem: string }).problem;
    };
    expect(failure(() => verifyStamp(undefined, payload)).code).toBe('WALLET_SIGNATURE_MISSING');
    expect(failure(() => parseStamp('  ')).code).toBe('WALLET_SIGNATURE_MISSING');
    expect(malformed('not*base64url!')).toBe('base64url');
    expect(malformed('abcde')).toBe('base64url');
    expect(malformed(encode('not json'))).toBe('json');
    expect(malformed(encode([good]))).toBe('json');
    expect(malformed(encode({ ...good, scheme: 'SIGNATURE_SCHEME_TK_API_SECP256K1' }))).toBe('scheme');
    expect(malformed(encode({ publicKey: good.publicKey, signature: good.signature }))).toBe('scheme');
    expect(malformed(encode({ ...good, publicKey: key.publicKey }))).toBe('publicKey'); // uncompressed is not the stamp form
    expect(malformed(encode({ ...good, publicKey: '02' + 'ff'.repeat(32) }))).toBe('publicKey'); // x >= p: not on the curve
    expect(malformed(encode({ ...good, signature: 'xyz' }))).toBe('signature');
    expect(malformed(encode({ ...good, signature: '3045dead' }))).toBe('signature');
    expect(malformed(encode({ ...good, signature: good.signature + '00' }))).toBe('signature'); // trailing bytes
    expect(malformed(encode({ ...good, signature: new p256.Signature(1n, 1n).toCompactHex() }))).toBe(
      'signature',
    ); // raw r||s, not DER
    expect(malformed(encode({ ...good, signature: 123 }))).toBe('signature');
  });

  it('accepts padded base64url and ignores unknown members', () => {
    const key = generateKeyPair();
    const good = decode(clientStamp(payload, key.privateKey));
    const withExtra = Buffer.from(JSON.stringify({ ...good, note: 'x' })).toString('base64');
    const padded = withExtra.replace(/\+/g, '-').replace(/\//g, '_');
    expect(verifyStamp(padded, payload).publicKey).toBe(key.publicKeyCompressed);
  });
});
