/**
 * The sandbox outcome tables of KYC and KYB (the specification's "Sandbox behavior"): the last 3
 * characters of a magic value decide. Beneficial owner KYC reads `personalInfo.lastName`, KYB
 * `businessInfo.registrationNumber`, individual KYC (our choice, same table) the customer's
 * `fullName`.
 */
export type ScreeningOutcome = 'PENDING' | 'REJECTED' | 'APPROVED';

/** 001 PENDING, 002 REJECTED, anything else APPROVED. */
export function sandboxOutcome(magic: string): ScreeningOutcome {
  const suffix = magic.trim().slice(-3);
  if (suffix === '001') return 'PENDING';
  if (suffix === '002') return 'REJECTED';
  return 'APPROVED';
}

/** Sandbox time a screening takes before its outcome is known (before SANDBOX_TIME_SCALE). */
export const SANDBOX_SCREENING_MS = 1000;
