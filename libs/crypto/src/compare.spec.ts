import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { constantTimeEqual } from './index.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest();

describe('constantTimeEqual', () => {
  it('is true for the same bytes, as buffers or as strings', () => {
    expect(constantTimeEqual(sha256('a'), sha256('a'))).toBe(true);
    expect(constantTimeEqual(sha256('a').toString('hex'), sha256('a').toString('hex'))).toBe(true);
    expect(constantTimeEqual(new Uint8Array(0), new Uint8Array(0))).toBe(true);
  });

  it('is false when any byte differs: the first, a middle one, the last', () => {
    const tag = createHmac('sha256', 'k').update('m').digest();
    for (const i of [0, 15, 31]) {
      const other = Buffer.from(tag);
      other[i] = other[i]! ^ 1;
      expect(constantTimeEqual(tag, other)).toBe(false);
    }
  });

  it('is false, without throwing, when the lengths differ (a truncated or padded value)', () => {
    const h = sha256('a');
    expect(constantTimeEqual(h, h.subarray(0, 31))).toBe(false);
    expect(constantTimeEqual(h.toString('hex'), `${h.toString('hex')}0`)).toBe(false);
    expect(constantTimeEqual('', 'x')).toBe(false);
  });

  it('compares strings as their UTF-8 bytes (case and Unicode form matter)', () => {
    expect(constantTimeEqual('abc', 'ABC')).toBe(false);
    expect(constantTimeEqual('é', 'e\u0301')).toBe(false);
    expect(constantTimeEqual('é', Buffer.from('é', 'utf8'))).toBe(true);
  });
});
