import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isId } from '@sluice/core';
import { formatCredential, loadOrCreateLocalCredential, parseCredential } from './credentials.js';

const TOKEN = 'Token:01936f5e-7b2a-7c3d-8e4f-0123456789ab';

describe('platform credentials', () => {
  it('parses <tokenId>:<secret> although the token id contains a colon', () => {
    expect(parseCredential(`${TOKEN}:sk_s3cr3t-with.symbols!`, 'X')).toEqual({
      tokenId: TOKEN,
      clientSecret: 'sk_s3cr3t-with.symbols!',
    });
  });

  it.each([
    ['no secret', TOKEN],
    ['empty secret', `${TOKEN}:`],
    ['not a token id', 'Customer:01936f5e-7b2a-7c3d-8e4f-0123456789ab:abcdefghijklmnopq'],
    ['no id', 'abcdefghijklmnopq'],
    ['short secret', `${TOKEN}:short`],
    ['a colon in the secret', `${TOKEN}:abcdefghijklmnopq:r`],
    ['whitespace in the secret', `${TOKEN}:abcdefghijklmnopq r`],
    ['an over-long secret', `${TOKEN}:abcdefghijklmnopq${'x'.repeat(250)}`],
  ])('rejects %s, naming the variable and never echoing the secret', (_label, value) => {
    let message = '';
    try {
      parseCredential(value, 'SANDBOX_PLATFORM_CREDENTIALS');
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('SANDBOX_PLATFORM_CREDENTIALS');
    expect(message).not.toContain('abcdefghijklmnopq');
  });

  it('round-trips through the Basic user:password form', () => {
    const c = parseCredential(`${TOKEN}:0123456789abcdef`, 'X');
    expect(formatCredential(c)).toBe(`${TOKEN}:0123456789abcdef`);
  });

  it('creates the local sandbox credential once, owner-readable only, and reuses it', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-cred-')), 'nested', 'sandbox-credentials.json');
    const first = loadOrCreateLocalCredential(file);
    expect(first.created).toBe(true);
    expect(isId(first.credential.tokenId, 'Token')).toBe(true);
    expect(first.credential.clientSecret.length).toBeGreaterThanOrEqual(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const second = loadOrCreateLocalCredential(file);
    expect(second).toEqual({ credential: first.credential, created: false });
    expect(JSON.parse(readFileSync(file, 'utf8')).environment).toBe('SANDBOX');
  });

  it('refuses a corrupt credential file instead of silently replacing it', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-cred-')), 'c.json');
    writeFileSync(file, JSON.stringify({ tokenId: 'nope' }));
    expect(() => loadOrCreateLocalCredential(file)).toThrow(/not a valid credential file/);
  });
});
