import { describe, expect, it } from 'vitest';
import { generateOtp, hashOtp, otpMatches } from './otp.js';

describe('OTP hashes', () => {
  it('a code matches the hash stored for its challenge only', () => {
    const code = generateOtp(6);
    const stored = hashOtp('Challenge:a', code);
    expect(stored).toMatch(/^[0-9a-f]{64}$/);
    expect(otpMatches('Challenge:a', code, stored)).toBe(true);
    expect(otpMatches('Challenge:b', code, stored)).toBe(false);
    const other = code === '000000' ? '000001' : '000000';
    expect(otpMatches('Challenge:a', other, stored)).toBe(false);
  });

  it('a malformed stored hash never matches', () => {
    expect(otpMatches('Challenge:a', '123456', '')).toBe(false);
    expect(otpMatches('Challenge:a', '123456', hashOtp('Challenge:a', '123456').slice(0, 63))).toBe(false);
  });
});
