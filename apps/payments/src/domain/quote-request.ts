import { FieldErrors, isCurrencyCode, isId, PAYMENT_RAILS, PURPOSES_OF_PAYMENT, type Environment } from '@sluice/core';
import { checkAmount, checkCurrency, checkEnvironment, checkId, checkMemo, jsonObject } from './field-rules.js';
import { isPaymentRail, type PaymentRail } from './payment-rails.js';
import type { LockedCurrencySide } from './pricing.js';
import type { PurposeOfPayment } from './quote.js';
import { checkUmaAddress } from './uma.js';

/** POST /quotes, valid as far as the request alone tells (the accounts and the lookup are checked on creation). */
export interface CreateQuoteRequest {
  platformId: string;
  environment: Environment;
  /**
   * ACCOUNT: an internal account pays (`customerId`, when given, must own it).
   * REALTIME_FUNDING: the payer pays the quote's paymentInstructions in `currency`,
   * on behalf of `customerId` (or of the platform when absent).
   */
  source:
    | { kind: 'ACCOUNT'; accountId: string; customerId?: string }
    | { kind: 'REALTIME_FUNDING'; currency: string; customerId?: string };
  destination:
    | { kind: 'ACCOUNT'; accountId: string; paymentRail?: PaymentRail }
    | { kind: 'UMA_ADDRESS'; umaAddress: string; currency?: string };
  lockedCurrencySide: LockedCurrencySide;
  lockedCurrencyAmount: bigint;
  lookupId?: string;
  description?: string;
  purposeOfPayment?: PurposeOfPayment;
  senderCustomerInfo: Record<string, unknown>;
  /** Execute right after creation (refused for EMBEDDED_WALLET and REALTIME_FUNDING sources). */
  immediatelyExecute?: boolean;
}

/** POST /quotes as it arrives: the flat fields of the CreateQuote message. */
export interface CreateQuoteInput {
  platformId: string;
  environment: Environment | undefined;
  /** ACCOUNT (or empty) or REALTIME_FUNDING. */
  sourceKind: string;
  sourceAccountId: string;
  sourceCurrency?: string;
  sourceCustomerId?: string;
  /** ACCOUNT or UMA_ADDRESS. */
  destinationKind: string;
  destinationAccountId?: string;
  destinationPaymentRail?: string;
  destinationUmaAddress?: string;
  destinationCurrency?: string;
  lockedCurrencySide: string;
  lockedCurrencyAmount: bigint;
  lookupId?: string;
  immediatelyExecute: boolean;
  description?: string;
  purposeOfPayment?: string;
  /** JSON object text (empty: none). */
  senderCustomerInfoJson: string;
}

/** A valid quote request, or INVALID_INPUT naming every bad field. */
export function parseCreateQuoteRequest(input: CreateQuoteInput): CreateQuoteRequest {
  const errors = new FieldErrors();
  checkId(errors, 'platformId', input.platformId, 'Platform');
  checkEnvironment(errors, input.environment);
  checkId(errors, 'source.customerId', input.sourceCustomerId, 'Customer', true);
  checkAmount(errors, 'lockedCurrencyAmount', input.lockedCurrencyAmount);
  checkId(errors, 'lookupId', input.lookupId, 'Lookup', true);
  const source = quoteSource(errors, input);
  const destination = quoteDestination(errors, input);
  const side = input.lockedCurrencySide;
  if (side !== 'SENDING' && side !== 'RECEIVING') errors.add('lockedCurrencySide', 'must be SENDING or RECEIVING');
  const purpose = input.purposeOfPayment;
  if (purpose !== undefined && !isPurposeOfPayment(purpose)) {
    errors.add('purposeOfPayment', `must be one of ${PURPOSES_OF_PAYMENT.join(', ')}`);
  }
  checkMemo(errors, 'description', input.description);
  const info = jsonObject(errors, 'senderCustomerInfo', input.senderCustomerInfoJson);
  errors.throwIfAny();
  return {
    platformId: input.platformId,
    environment: input.environment!,
    source: source!,
    destination: destination!,
    lockedCurrencySide: side === 'RECEIVING' ? 'RECEIVING' : 'SENDING',
    lockedCurrencyAmount: input.lockedCurrencyAmount,
    ...(input.lookupId !== undefined ? { lookupId: input.lookupId } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(purpose !== undefined && isPurposeOfPayment(purpose) ? { purposeOfPayment: purpose } : {}),
    senderCustomerInfo: info ?? {},
    immediatelyExecute: input.immediatelyExecute,
  };
}

function quoteSource(errors: FieldErrors, input: CreateQuoteInput): CreateQuoteRequest['source'] | undefined {
  const owner = input.sourceCustomerId !== undefined ? { customerId: input.sourceCustomerId } : {};
  if (input.sourceKind === '' || input.sourceKind === 'ACCOUNT') {
    if (isId(input.sourceAccountId, 'InternalAccount')) {
      return { kind: 'ACCOUNT', accountId: input.sourceAccountId, ...owner };
    }
    errors.add('source.accountId', 'must be an InternalAccount id (InternalAccount:<uuid>)');
  } else if (input.sourceKind === 'REALTIME_FUNDING') {
    const currency = input.sourceCurrency ?? '';
    if (isCurrencyCode(currency)) return { kind: 'REALTIME_FUNDING', currency, ...owner };
    errors.add('source.currency', currency ? `unknown currency "${currency}"` : 'is required');
  } else errors.add('source.sourceType', 'must be ACCOUNT or REALTIME_FUNDING');
  return undefined;
}

function quoteDestination(
  errors: FieldErrors,
  input: CreateQuoteInput,
): CreateQuoteRequest['destination'] | undefined {
  const rail = input.destinationPaymentRail;
  if (input.destinationKind === 'ACCOUNT') {
    const id = input.destinationAccountId ?? '';
    if (rail !== undefined && !isPaymentRail(rail, PAYMENT_RAILS)) errors.add('destination.paymentRail', `must be one of ${PAYMENT_RAILS.join(', ')}`);
    if (isId(id, 'InternalAccount') || isId(id, 'ExternalAccount')) {
      return {
        kind: 'ACCOUNT',
        accountId: id,
        ...(rail !== undefined && isPaymentRail(rail, PAYMENT_RAILS) ? { paymentRail: rail } : {}),
      };
    }
    errors.add('destination.accountId', 'must be an InternalAccount or ExternalAccount id');
  } else if (input.destinationKind === 'UMA_ADDRESS') {
    if (rail !== undefined) errors.add('destination.paymentRail', 'is not a field of destinationType UMA_ADDRESS');
    const umaAddress = input.destinationUmaAddress ?? '';
    checkUmaAddress(errors, 'destination.umaAddress', umaAddress);
    checkCurrency(errors, 'destination.currency', input.destinationCurrency);
    return {
      kind: 'UMA_ADDRESS',
      umaAddress,
      ...(input.destinationCurrency !== undefined ? { currency: input.destinationCurrency } : {}),
    };
  } else errors.add('destination.destinationType', 'must be ACCOUNT or UMA_ADDRESS');
  return undefined;
}

/** POST /quotes/{id}/execute, valid: the wallet signature headers of an EMBEDDED_WALLET source, if any. */
export interface ExecuteQuoteRequest {
  platformId: string;
  environment: Environment;
  quoteId: string;
  /** Service-Wallet-Signature. */
  signature?: string;
  /** Request-Id (the signing request; defaults to the quote's). */
  requestId?: string;
  /** The agent whose approved action executes the quote (agents service). */
  agentId?: string;
}

/** Longest Service-Wallet-Signature header. */
const WALLET_SIGNATURE_MAX_LENGTH = 4096;

/** A valid execute, or INVALID_INPUT naming the bad field or header. */
export function parseExecuteQuoteRequest(
  input: Omit<ExecuteQuoteRequest, 'environment'> & { environment: Environment | undefined },
): ExecuteQuoteRequest {
  const errors = quoteCallErrors(input);
  checkId(errors, 'Request-Id', input.requestId, 'Request', true);
  if (input.agentId !== undefined) checkId(errors, 'agentId', input.agentId, 'Agent');
  if (input.signature !== undefined && input.signature.length > WALLET_SIGNATURE_MAX_LENGTH) {
    errors.add('Service-Wallet-Signature', `must be at most ${WALLET_SIGNATURE_MAX_LENGTH} characters`);
  }
  errors.throwIfAny();
  return {
    platformId: input.platformId,
    environment: input.environment!,
    quoteId: input.quoteId,
    ...(input.signature ? { signature: input.signature } : {}),
    ...(input.requestId ? { requestId: input.requestId } : {}),
    ...(input.agentId ? { agentId: input.agentId } : {}),
  };
}

/** POST /sandbox/send, valid: the payer of a REALTIME_FUNDING quote pays it. */
export interface SandboxSendRequest {
  platformId: string;
  environment: Environment;
  quoteId: string;
  currencyCode: string;
  /** The amount paid; absent: the quote's totalSendingAmount. */
  amount?: bigint;
}

/** A valid sandbox payment, or INVALID_INPUT (the amount and currency must also match the quote). */
export function parseSandboxSendRequest(
  input: Omit<SandboxSendRequest, 'environment'> & { environment: Environment | undefined },
): SandboxSendRequest {
  const errors = quoteCallErrors(input);
  checkCurrency(errors, 'currencyCode', input.currencyCode);
  checkAmount(errors, 'currencyAmount', input.amount);
  errors.throwIfAny();
  return { ...input, environment: input.environment! };
}

/** A valid reference to a quote of a platform, or INVALID_INPUT. */
export function parseQuoteRef(platformId: string, quoteId: string): { platformId: string; quoteId: string } {
  const errors = new FieldErrors();
  checkId(errors, 'platformId', platformId, 'Platform');
  checkId(errors, 'quoteId', quoteId, 'Quote');
  errors.throwIfAny();
  return { platformId, quoteId };
}

/** The problems of a call on a quote of a platform in its environment (execute, sandbox payment). */
function quoteCallErrors(input: { platformId: string; environment: Environment | undefined; quoteId: string }): FieldErrors {
  const errors = new FieldErrors();
  checkId(errors, 'platformId', input.platformId, 'Platform');
  checkEnvironment(errors, input.environment);
  checkId(errors, 'quoteId', input.quoteId, 'Quote');
  return errors;
}

function isPurposeOfPayment(v: string): v is PurposeOfPayment {
  return (PURPOSES_OF_PAYMENT as readonly string[]).includes(v);
}
