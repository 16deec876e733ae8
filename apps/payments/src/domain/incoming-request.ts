import { FieldErrors, type Environment } from '@sluice/core';
import { checkAmount, checkCurrency, checkEnvironment, checkId, checkMemo, checkRequestKey, jsonObject } from './field-rules.js';
import { checkTransactionRef } from './transaction-query.js';
import { checkUmaAddress, parseUmaAddress } from './uma.js';

/** POST /sandbox/uma/receive, valid: a simulated incoming UMA payment to a customer of the platform. */
export interface UmaReceiveRequest {
  platformId: string;
  environment: Environment;
  requestKey: string;
  /** Canonical (lower case). */
  senderUmaAddress: string;
  /** As given, blanks trimmed: the receiver is looked up as given and in lower case. */
  receiverUmaAddress: string;
  currency: string;
  amount: bigint;
}

/** POST /sandbox/uma/receive as it arrives. */
export type UmaReceiveInput = Omit<UmaReceiveRequest, 'environment'> & { environment: Environment | undefined };

/** A valid incoming UMA payment, or INVALID_INPUT naming every bad field. */
export function parseUmaReceiveRequest(input: UmaReceiveInput): UmaReceiveRequest {
  const errors = new FieldErrors();
  checkId(errors, 'platformId', input.platformId, 'Platform');
  checkEnvironment(errors, input.environment);
  checkRequestKey(errors, input.requestKey);
  checkUmaAddress(errors, 'senderUmaAddress', input.senderUmaAddress);
  checkUmaAddress(errors, 'receiverUmaAddress', input.receiverUmaAddress);
  checkCurrency(errors, 'receivingCurrencyCode', input.currency);
  checkAmount(errors, 'receivingCurrencyAmount', input.amount);
  errors.throwIfAny();
  return {
    ...input,
    environment: input.environment!,
    senderUmaAddress: parseUmaAddress(input.senderUmaAddress, 'senderUmaAddress').address,
    receiverUmaAddress: input.receiverUmaAddress.trim(),
  };
}

/** POST /transactions/{id}/approve, valid. */
export interface ApprovalRequest {
  platformId: string;
  transactionId: string;
  /** What the platform tells about the receiver, if anything. */
  receiverCustomerInfo?: Record<string, unknown>;
}

/** A valid approval (the receiver's data as JSON text), or INVALID_INPUT. */
export function parseApprovalRequest(input: {
  platformId: string;
  transactionId: string;
  receiverCustomerInfoJson?: string;
}): ApprovalRequest {
  const errors = new FieldErrors();
  checkTransactionRef(errors, input.platformId, input.transactionId);
  const info = jsonObject(errors, 'receiverCustomerInfo', input.receiverCustomerInfoJson);
  errors.throwIfAny();
  return { platformId: input.platformId, transactionId: input.transactionId, ...(info ? { receiverCustomerInfo: info } : {}) };
}

/** POST /transactions/{id}/reject, valid. */
export interface RejectionRequest {
  platformId: string;
  transactionId: string;
  reason?: string;
}

/** A valid rejection, or INVALID_INPUT. */
export function parseRejectionRequest(input: RejectionRequest): RejectionRequest {
  const errors = new FieldErrors();
  checkTransactionRef(errors, input.platformId, input.transactionId);
  checkMemo(errors, 'reason', input.reason);
  errors.throwIfAny();
  return input;
}

/** POST /sandbox/internal-accounts/{id}/fund, valid: a simulated deposit into an internal account. */
export interface SandboxFundRequest {
  platformId: string;
  environment: Environment;
  accountId: string;
  amount: bigint;
  /** The Idempotency-Key of the request; the same key funds once. */
  requestKey?: string;
}

/** Checks a sandbox funding request (INVALID_INPUT naming each bad field). */
export function parseSandboxFundRequest(input: Omit<SandboxFundRequest, 'environment'> & { environment: Environment | undefined }): SandboxFundRequest {
  const errors = new FieldErrors();
  checkId(errors, 'platformId', input.platformId, 'Platform');
  checkEnvironment(errors, input.environment);
  checkId(errors, 'accountId', input.accountId, 'InternalAccount');
  checkAmount(errors, 'amount', input.amount);
  if (input.requestKey !== undefined) checkRequestKey(errors, input.requestKey);
  errors.throwIfAny();
  return { ...input, environment: input.environment! };
}
