import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  generateMnemonic,
  isValidMnemonic,
  loadMasterKeyring,
  masterKeyId,
  needsRewrap,
  openMnemonic,
  rewrapMnemonic,
  sealMnemonic,
  type MasterKeyring,
} from './key-custody.js';

const accountId = 'InternalAccount:019542f5-b3e7-1d02-0000-000000000002';
const b64 = () => randomBytes(32).toString('base64');

function custodyCode(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect((e as Error).name).toBe('CustodyError');
    return (e as { code: string }).code;
  }
  throw new Error('expected a CustodyError');
}

function flipByte(segment: string, index: number): string {
  const bytes = Buffer.from(segment, 'base64url');
  bytes[index] = bytes[index]! ^ 0x01;
  return bytes.toString('base64url');
}

describe('key custody', () => {
  it('generates distinct valid 24-word BIP-39 mnemonics', () => {
    const a = generateMnemonic();
    const b = generateMnemonic();
    expect(a.split(' ')).toHaveLength(24);
    expect(isValidMnemonic(a)).toBe(true);
    expect(a).not.toBe(b);
    expect(isValidMnemonic(a.split(' ').reverse().join(' '))).toBe(false);
  });

  it('round-trips a mnemonic through the envelope without exposing it', () => {
    const keyring = loadMasterKeyring(b64());
    const mnemonic = generateMnemonic();
    const sealed = sealMnemonic(mnemonic, accountId, keyring);
    expect(sealed).toMatch(/^swc1\.mk_[0-9a-f]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(sealed.split('.')[1]).toBe(keyring.current.id);
    expect(sealed).not.toContain(mnemonic.split(' ')[0]);
    expect(sealMnemonic(mnemonic, accountId, keyring)).not.toBe(sealed); // fresh data key and IVs
    expect(openMnemonic(sealed, accountId, keyring)).toBe(mnemonic);
  });

  it('fails with a clear error under a wrong master key', () => {
    const sealed = sealMnemonic(generateMnemonic(), accountId, loadMasterKeyring(b64()));
    expect(custodyCode(() => openMnemonic(sealed, accountId, loadMasterKeyring(b64())))).toBe(
      'CUSTODY_MASTER_KEY_UNKNOWN',
    );
    // same key id, different key material (misconfiguration): authentication fails
    const kid = sealed.split('.')[1]!;
    const impostor: MasterKeyring = { current: { id: kid, key: randomBytes(32) }, retired: [] };
    expect(custodyCode(() => openMnemonic(sealed, accountId, impostor))).toBe('CUSTODY_DECRYPT_FAILED');
  });

  it('detects tampering of either layer and refuses malformed envelopes', () => {
    const keyring = loadMasterKeyring(b64());
    const sealed = sealMnemonic(generateMnemonic(), accountId, keyring);
    const [prefix, kid, wrapped, secret] = sealed.split('.') as [string, string, string, string];
    expect(
      custodyCode(() =>
        openMnemonic([prefix, kid, flipByte(wrapped, 20), secret].join('.'), accountId, keyring),
      ),
    ).toBe('CUSTODY_DECRYPT_FAILED');
    expect(
      custodyCode(() =>
        openMnemonic([prefix, kid, wrapped, flipByte(secret, 15)].join('.'), accountId, keyring),
      ),
    ).toBe('CUSTODY_DECRYPT_FAILED');
    expect(
      custodyCode(() =>
        openMnemonic([prefix, kid, wrapped, flipByte(secret, 0)].join('.'), accountId, keyring),
      ),
    ).toBe('CUSTODY_DECRYPT_FAILED'); // IV
    expect(custodyCode(() => openMnemonic('swc2.' + sealed.slice(5), accountId, keyring))).toBe(
      'CUSTODY_MALFORMED',
    );
    expect(
      custodyCode(() =>
        openMnemonic([prefix, kid, wrapped.slice(0, 10), secret].join('.'), accountId, keyring),
      ),
    ).toBe('CUSTODY_MALFORMED');
    expect(custodyCode(() => openMnemonic('garbage', accountId, keyring))).toBe('CUSTODY_MALFORMED');
  });

  it('binds the account id (AAD): another account cannot open it', () => {
    const keyring = loadMasterKeyring(b64());
    const sealed = sealMnemonic(generateMnemonic(), accountId, keyring);
    expect(
      custodyCode(() =>
        openMnemonic(sealed, 'InternalAccount:019542f5-b3e7-1d02-0000-000000000003', keyring),
      ),
    ).toBe('CUSTODY_DECRYPT_FAILED');
  });

  it('rotates: retired keys still open, rewrap moves the envelope to the current key', () => {
    const oldKey = b64();
    const mnemonic = generateMnemonic();
    const sealed = sealMnemonic(mnemonic, accountId, loadMasterKeyring(oldKey));
    const rotated = loadMasterKeyring(b64(), ` ${oldKey} ,`);
    expect(rotated.retired).toHaveLength(1);
    expect(openMnemonic(sealed, accountId, rotated)).toBe(mnemonic);
    expect(needsRewrap(sealed, rotated)).toBe(true);
    const rewrapped = rewrapMnemonic(sealed, accountId, rotated);
    expect(needsRewrap(rewrapped, rotated)).toBe(false);
    expect(rewrapped.split('.')[3]).toBe(sealed.split('.')[3]);
    expect(openMnemonic(rewrapped, accountId, { current: rotated.current, retired: [] })).toBe(mnemonic);
  });

  it('validates the master key configuration', () => {
    expect(custodyCode(() => loadMasterKeyring(''))).toBe('CUSTODY_CONFIG_INVALID');
    expect(custodyCode(() => loadMasterKeyring(randomBytes(16).toString('base64')))).toBe(
      'CUSTODY_CONFIG_INVALID',
    );
    expect(custodyCode(() => loadMasterKeyring(b64(), 'not-base64!'))).toBe('CUSTODY_CONFIG_INVALID');
    const key = randomBytes(32);
    expect(loadMasterKeyring(key.toString('base64')).current.id).toBe(masterKeyId(key));
  });
});
