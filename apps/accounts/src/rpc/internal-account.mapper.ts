import { environmentToPb } from '@sluice/rpc';
import { accounts as pb } from '@sluice/contracts';
import { currencyView } from '@sluice/core';
import {
  availableBalance,
  type InternalAccountRecord,
  type InternalAccountType,
  type Owner,
} from '../domain/internal-account.js';
import { fundingInstructions } from '../domain/funding-instructions.js';

/** proto <-> domain translations of the accounts API. */

const TYPE_TO_PB: Record<InternalAccountType, pb.InternalAccountType> = {
  INTERNAL_FIAT: pb.InternalAccountType.INTERNAL_FIAT,
  INTERNAL_CRYPTO: pb.InternalAccountType.INTERNAL_CRYPTO,
  EMBEDDED_WALLET: pb.InternalAccountType.EMBEDDED_WALLET,
};

export function typeFromPb(t: pb.InternalAccountType | undefined): InternalAccountType | undefined {
  return (Object.keys(TYPE_TO_PB) as InternalAccountType[]).find((k) => TYPE_TO_PB[k] === t);
}

export function ownerFromPb(o: pb.Owner | undefined): Owner | undefined {
  return o === pb.Owner.CUSTOMERS ? 'CUSTOMER' : o === pb.Owner.PLATFORM ? 'PLATFORM' : undefined;
}

export function toPb(a: InternalAccountRecord): pb.InternalAccount {
  return {
    id: a.id,
    platformId: a.platformId,
    ...(a.customerId ? { customerId: a.customerId } : {}),
    type: TYPE_TO_PB[a.type],
    balance: { amount: a.postedBalance, currency: currencyView(a.currency) },
    fundingPaymentInstructions: fundingInstructions(a).map((i) => ({
      accountOrWalletInfo: {
        ...i.accountOrWalletInfo,
        paymentRails: i.accountOrWalletInfo.paymentRails ?? [],
      },
      instructionsNotes: i.instructionsNotes,
      isPlatformAccount: i.isPlatformAccount,
    })),
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    currency: a.currency,
    environment: environmentToPb(a.environment),
    availableAmount: availableBalance(a),
    fundingReference: a.fundingReference,
    ...(a.type === 'EMBEDDED_WALLET' ? { privateEnabled: a.privateEnabled ?? false } : {}),
  };
}
