import type { KycProvider, ScreeningSubject } from '../app/ports.js';
import { SANDBOX_SCREENING_MS, sandboxOutcome, type ScreeningOutcome } from '../domain/sandbox.js';

/**
 * The sandbox KYC/KYB provider, complete: outcomes by the specification's magic suffixes (the
 * last 3 characters of a person's last name, of a business's registration number), known
 * SANDBOX_SCREENING_MS × SANDBOX_TIME_SCALE after submission.
 */
export class SandboxKycProvider implements KycProvider {
  constructor(private readonly timeScale: number) {}

  decisionDelayMs(): number {
    return Math.round(SANDBOX_SCREENING_MS * this.timeScale);
  }

  async screen(subject: ScreeningSubject): Promise<ScreeningOutcome> {
    return sandboxOutcome(subject.kind === 'PERSON' ? subject.lastName : subject.registrationNumber);
  }
}

/**
 * Production: no KYC partner is integrated yet. Every check stays PENDING (a human review
 * through the partner's console, outside Sluice) and is asked again every `recheckMs`. A real
 * adapter implements KycProvider's contract (app/ports.ts): submit on first `screen` for a
 * reference, answer the partner's decision on later calls, idempotently.
 */
export class ProductionKycProvider implements KycProvider {
  constructor(private readonly recheckMs: number) {}

  decisionDelayMs(): number {
    return this.recheckMs;
  }

  async screen(): Promise<ScreeningOutcome> {
    return 'PENDING';
  }
}
