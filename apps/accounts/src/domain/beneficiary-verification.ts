import { type BeneficiaryVerificationStatus, type ExternalAccountType } from '@sluice/core';

/**
 * Beneficiary name verification ("confirmation of payee"): does the name the platform
 * gave match the holder of the account? An adapter per environment:
 *
 * - `SandboxBeneficiaryVerifier`: deterministic, by the sandbox suffix of the primary
 *   identifier (see `verificationScenario`).
 * - `ProductionBeneficiaryVerifier`: no verification partner is integrated yet, so every
 *   account is `UNSUPPORTED` (the payment rail will check, or not, at payout time). A
 *   partner adapter (CoP for GBP, VoP for EUR SEPA, PIX DICT lookup for BRL, ...)
 *   implements the same interface.
 */

export interface VerificationRequest {
  accountType: ExternalAccountType;
  currency: string;
  /** Account number, IBAN, CLABE, pix key, wallet address, invoice or lightning address. */
  primaryIdentifier: string;
  /** The name the platform says holds the account; undefined when it gave none. */
  beneficiaryName: string | undefined;
}

export type VerificationResult =
  | { outcome: 'VERIFIED'; status: BeneficiaryVerificationStatus; verifiedFullName?: string }
  /** The account does not exist or cannot receive funds: the create is refused. */
  | { outcome: 'INVALID_ACCOUNT'; reason: string };

export interface BeneficiaryVerifier {
  verify(req: VerificationRequest): Promise<VerificationResult>;
}

/**
 * The sandbox scenario an identifier selects: its last 3 characters when they are
 * digits, else undefined (the default scenario). For identifiers with a domain part
 * (an e-mail pix key, a lightning address: `user102@domain`) the digits are read at
 * the end of the username. Shared by every sandbox rule keyed on an external
 * account (beneficiary verification 1xx, transfers and payouts 0xx).
 */
export function sandboxScenario(identifier: string): string | undefined {
  const at = identifier.lastIndexOf('@');
  const user = at > 0 ? identifier.slice(0, at) : identifier;
  return /([0-9]{3})$/.exec(user)?.[1];
}

/** What each 1xx suffix does to beneficiary verification (other suffixes: MATCHED). */
export const VERIFICATION_SCENARIOS: Readonly<Record<string, BeneficiaryVerificationStatus | 'INVALID_ACCOUNT'>> = {
  '102': 'NOT_MATCHED',
  '103': 'PARTIAL_MATCH',
  '104': 'PENDING',
  '105': 'INVALID_ACCOUNT',
  '106': 'UNSUPPORTED',
  '107': 'CHECKED_BY_RECEIVING_FI',
};

/** The verification outcome the sandbox gives an identifier. */
export function verificationScenario(identifier: string): BeneficiaryVerificationStatus | 'INVALID_ACCOUNT' {
  return VERIFICATION_SCENARIOS[sandboxScenario(identifier) ?? ''] ?? 'MATCHED';
}

const OTHER_NAMES = ['Maria Oliveira', 'Kenji Watanabe', 'Amara Okafor', 'Lucas Fernández', 'Sophie Martin'];

/** A fuzzy variant of a name: the first given name as an initial ("John Doe" → "J. Doe"), or a truncation. */
export function partialMatchName(name: string): string {
  const words = name.trim().split(/\s+/);
  if (words.length > 1) return [`${words[0]![0]!.toUpperCase()}.`, ...words.slice(1)].join(' ');
  return words[0]!.length > 3 ? `${words[0]!.slice(0, -1)}.` : `${words[0]} Jr.`;
}

/** A clearly different name, stable per identifier, never equal to `name`. */
export function otherHolderName(identifier: string, name: string | undefined): string {
  let h = 0;
  for (const ch of identifier) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  const pick = OTHER_NAMES[h % OTHER_NAMES.length]!;
  return pick === name ? OTHER_NAMES[(h + 1) % OTHER_NAMES.length]! : pick;
}

/** The sandbox verifier: the suffix of the primary identifier decides (see VERIFICATION_SCENARIOS). */
export class SandboxBeneficiaryVerifier implements BeneficiaryVerifier {
  async verify(req: VerificationRequest): Promise<VerificationResult> {
    const scenario = verificationScenario(req.primaryIdentifier);
    const name = req.beneficiaryName;
    switch (scenario) {
      case 'INVALID_ACCOUNT':
        return { outcome: 'INVALID_ACCOUNT', reason: 'the receiving institution reports the account as invalid or closed' };
      case 'MATCHED':
        return { outcome: 'VERIFIED', status: 'MATCHED', ...(name ? { verifiedFullName: name } : {}) };
      case 'PARTIAL_MATCH':
        return {
          outcome: 'VERIFIED',
          status: 'PARTIAL_MATCH',
          verifiedFullName: name ? partialMatchName(name) : otherHolderName(req.primaryIdentifier, undefined),
        };
      case 'NOT_MATCHED':
        return {
          outcome: 'VERIFIED',
          status: 'NOT_MATCHED',
          verifiedFullName: otherHolderName(req.primaryIdentifier, name),
        };
      default:
        // PENDING, UNSUPPORTED, CHECKED_BY_RECEIVING_FI: the rail returned no name (yet).
        return { outcome: 'VERIFIED', status: scenario };
    }
  }
}

/**
 * The production verifier until a verification partner is configured: reports
 * UNSUPPORTED for every account and never refuses one.
 */
export class ProductionBeneficiaryVerifier implements BeneficiaryVerifier {
  async verify(): Promise<VerificationResult> {
    return { outcome: 'VERIFIED', status: 'UNSUPPORTED' };
  }
}
