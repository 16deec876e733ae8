import { common, payments as pb } from '@sluice/contracts';
import { currencyView } from '@sluice/core';
import type { CorridorRate } from '../domain/exchange-rate-table.js';
import { toDecimalString } from '../domain/ratio.js';
import type { ReceiverLookup } from '../domain/receiver-lookup.js';
import type { SandboxReceiverBehavior } from '../domain/uma.js';
import type { UmaProvider } from '../domain/uma-providers.js';
import type { Environment } from '../app/receiver-lookups.service.js';

export function environmentFromPb(e: common.Environment | undefined): Environment | undefined {
  return e === common.Environment.SANDBOX
    ? 'SANDBOX'
    : e === common.Environment.PRODUCTION
      ? 'PRODUCTION'
      : undefined;
}

export const currencyToPb = (code: string): pb.Currency => currencyView(code);

const BEHAVIOR: Record<SandboxReceiverBehavior, pb.SandboxReceiverBehavior> = {
  SUCCESS: pb.SandboxReceiverBehavior.SUCCESS,
  LONG_PENDING: pb.SandboxReceiverBehavior.LONG_PENDING,
  COMPLIANCE_FAILURE: pb.SandboxReceiverBehavior.COMPLIANCE_FAILURE,
};

export function lookupToPb(l: ReceiverLookup): pb.ReceiverLookup {
  return {
    id: l.id,
    platformId: l.platformId,
    ...(l.receiverUmaAddress ? { receiverUmaAddress: l.receiverUmaAddress } : {}),
    ...(l.externalAccountId ? { externalAccountId: l.externalAccountId } : {}),
    ...(l.senderUmaAddress ? { senderUmaAddress: l.senderUmaAddress } : {}),
    ...(l.customerId ? { customerId: l.customerId } : {}),
    sendingCurrency: l.sendingCurrency,
    supportedCurrencies: l.supportedCurrencies.map((p) => ({
      currency: currencyToPb(p.currency),
      estimatedExchangeRate: toDecimalString(p.estimatedExchangeRate),
      min: p.min,
      max: p.max,
    })),
    requiredPayerDataFields: l.requiredPayerDataFields.map((f) => ({ name: f.name, mandatory: f.mandatory })),
    sandboxBehavior: l.sandboxBehavior ? BEHAVIOR[l.sandboxBehavior] : pb.SandboxReceiverBehavior.UNSPECIFIED,
    createdAt: l.createdAt,
    expiresAt: l.expiresAt,
    ...(l.counterpartyName ? { counterpartyName: l.counterpartyName } : {}),
  };
}

export function corridorToPb(c: CorridorRate): pb.ExchangeRate {
  return {
    sourceCurrency: currencyToPb(c.sourceCurrency),
    destinationCurrency: currencyToPb(c.destinationCurrency),
    destinationPaymentRail: c.destinationPaymentRail,
    sendingAmount: c.sendingAmount,
    minSendingAmount: c.minSendingAmount,
    maxSendingAmount: c.maxSendingAmount,
    receivingAmount: c.receivingAmount,
    exchangeRate: toDecimalString(c.exchangeRate),
    fixedFee: c.fixedFee,
    variableFeeRate: toDecimalString(c.variableFeeRate),
    updatedAt: c.updatedAt,
  };
}

export function providerToPb(p: UmaProvider): pb.UmaProvider {
  return {
    name: p.name,
    domain: p.domain,
    supportedRegions: p.supportedRegions,
    supportedCurrencies: p.supportedCurrencies.map(currencyToPb),
    ...(p.logoUrl ? { logoUrl: p.logoUrl } : {}),
    ...(p.lei ? { lei: p.lei } : {}),
    allowListStatus: p.allowListStatus,
  };
}
