import { createHash, randomInt } from 'node:crypto';
import { constantTimeEqual } from '@sluice/crypto';
import { invalidInput } from '@sluice/core';

/** The sandbox OTP: accepted on verify for sandbox platforms, no email is sent. */
export const SANDBOX_OTP = '000000';
/** Lifetime of an emailed OTP. */
export const OTP_TTL_MS = 10 * 60_000;
/** Minimum time between two OTP emails of one credential. */
export const OTP_RESEND_INTERVAL_MS = 30_000;
/** Wrong guesses allowed per OTP before a new one must be requested. */
export const OTP_MAX_ATTEMPTS = 5;

/** Digits of an emailed OTP when the platform configures none (or a length outside 4 to 10). */
export const DEFAULT_OTP_LENGTH = 6;

/** The length of a platform's OTPs: its `embeddedWalletConfig.otpLength` when that is 4 to 10 digits. */
export function otpLength(configured: number | undefined): number {
  return configured !== undefined && configured >= 4 && configured <= 10 ? configured : DEFAULT_OTP_LENGTH;
}

/** A uniformly random numeric code of `length` digits. */
export function generateOtp(length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += String(randomInt(10));
  return s;
}

/** Hash stored for an OTP, bound to its challenge id (never the code itself). */
export function hashOtp(challengeId: string, code: string): string {
  return createHash('sha256').update(`sluice:otp:v1|${challengeId}|${code}`).digest('hex');
}

/** True when `code` is the OTP whose hash was stored for the challenge (constant-time comparison). */
export function otpMatches(challengeId: string, code: string, storedHash: string): boolean {
  return constantTimeEqual(hashOtp(challengeId, code), storedHash);
}

const EMAIL_RE = /^[^\s@<>()[\]\\,;:"]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** Validates an email address; 400 INVALID_INPUT naming `field`. Returns it trimmed. */
export function validateEmail(value: unknown, field = 'email'): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalidInput([{ field, message: 'is required' }]);
  const email = value.trim();
  if (email.length > 254 || !EMAIL_RE.test(email)) throw invalidInput([{ field, message: 'must be an email address' }]);
  return email;
}

/** Validates the shape of a submitted OTP (digits, 4 to 10). */
export function validateOtpShape(value: unknown, field = 'otp'): string {
  if (typeof value !== 'string' || value === '') throw invalidInput([{ field, message: 'is required' }]);
  if (!/^[0-9]{4,10}$/.test(value)) throw invalidInput([{ field, message: 'must be 4 to 10 digits' }]);
  return value;
}
