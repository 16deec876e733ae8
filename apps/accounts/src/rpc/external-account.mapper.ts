import { common, accounts as pb } from '@sluice/contracts';
import type { AccountInfoInput, ExternalAccountRecord } from '../domain/external-account.js';
import { type BeneficiaryVerificationStatus } from '@sluice/core';

/** proto <-> domain translations of external accounts. */

const VERIFICATION_TO_PB: Record<BeneficiaryVerificationStatus, pb.BeneficiaryVerificationStatus> = {
  MATCHED: pb.BeneficiaryVerificationStatus.MATCHED,
  PARTIAL_MATCH: pb.BeneficiaryVerificationStatus.PARTIAL_MATCH,
  NOT_MATCHED: pb.BeneficiaryVerificationStatus.NOT_MATCHED,
  UNSUPPORTED: pb.BeneficiaryVerificationStatus.UNSUPPORTED,
  CHECKED_BY_RECEIVING_FI: pb.BeneficiaryVerificationStatus.CHECKED_BY_RECEIVING_FI,
  PENDING: pb.BeneficiaryVerificationStatus.PENDING,
};

/** Drops absent proto fields (ts-proto leaves optional fields undefined) so the domain sees what was sent. */
function compact<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== '')) as Partial<T>;
}

/** The request's accountInfo as the domain validator takes it (raw, unvalidated). */
export function accountInfoFromPb(info: pb.ExternalAccountInfo | undefined): AccountInfoInput | undefined {
  if (!info) return undefined;
  const { beneficiary, ...rest } = info;
  return {
    ...compact(rest),
    ...(beneficiary
      ? {
          beneficiary: {
            ...compact({ ...beneficiary, address: undefined }),
            ...(beneficiary.address ? { address: compact(beneficiary.address) } : {}),
          },
        }
      : {}),
  };
}

const STATUS_TO_PB: Record<ExternalAccountRecord['status'], pb.ExternalAccountStatus> = {
  PENDING: pb.ExternalAccountStatus.PENDING,
  ACTIVE: pb.ExternalAccountStatus.ACTIVE,
  UNDER_REVIEW: pb.ExternalAccountStatus.UNDER_REVIEW,
  INACTIVE: pb.ExternalAccountStatus.INACTIVE,
};

export function externalAccountToPb(a: ExternalAccountRecord): pb.ExternalAccount {
  const { beneficiary, paymentRails, ...info } = a.accountInfo;
  return {
    id: a.id,
    platformId: a.platformId,
    ...(a.customerId ? { customerId: a.customerId } : {}),
    status: STATUS_TO_PB[a.status],
    currency: a.currency,
    accountInfo: {
      ...info,
      paymentRails: paymentRails ?? [],
      ...(beneficiary
        ? {
            beneficiary: {
              ...beneficiary,
              ...(beneficiary.address
                ? { address: { ...beneficiary.address } as pb.PostalAddress }
                : { address: undefined }),
            },
          }
        : {}),
    },
    ...(a.platformAccountId ? { platformAccountId: a.platformAccountId } : {}),
    defaultUmaDepositAccount: a.defaultUmaDepositAccount,
    beneficiaryVerificationStatus: VERIFICATION_TO_PB[a.beneficiaryVerificationStatus],
    ...(a.verifiedFullName ? { beneficiaryVerifiedData: { fullName: a.verifiedFullName } } : {}),
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    environment: a.environment === 'SANDBOX' ? common.Environment.SANDBOX : common.Environment.PRODUCTION,
    primaryIdentifier: a.primaryIdentifier,
  };
}
