import type { PURPOSES_OF_PAYMENT } from '@sluice/core';
import type { PaymentInstruction } from './payment-instructions.js';
import type { QuoteAmounts } from './pricing.js';
import type { QuoteStatus } from './state-machines.js';
import type { TransactionEndpoint } from './transaction.js';

/** A purpose of payment the API accepts (public PurposeOfPayment; the vocabulary is core's). */
export type PurposeOfPayment = (typeof PURPOSES_OF_PAYMENT)[number];

/**
 * A quote: the amounts of one cross-currency payment locked until `expiresAt`.
 * The amounts never change once created; only the status (through
 * QUOTE_TRANSITIONS) and `transactionId` (set on execution) do.
 */
export interface Quote {
  id: string;
  platformId: string;
  status: QuoteStatus;
  source: TransactionEndpoint;
  destination: TransactionEndpoint;
  /** The customer on whose behalf the quote is made (the source account's owner); absent for the platform. */
  customerId?: string;
  amounts: QuoteAmounts;
  lookupId?: string;
  description?: string;
  purposeOfPayment?: PurposeOfPayment;
  /** What the sender declared for the receiver's required payer data. */
  senderCustomerInfo: Record<string, unknown>;
  /** The receiving counterparty's name and other data it shared, if any. */
  counterpartyInformation: Record<string, string>;
  transactionId?: string;
  /** ACCOUNT sources: whether the source is an EMBEDDED_WALLET (its execution needs the wallet signature). */
  sourceEmbeddedWallet?: boolean;
  /** EMBEDDED_WALLET sources: the wallet-auth signing request that authorizes the execution. */
  signingRequestId?: string;
  /** EMBEDDED_WALLET sources: the challenge the wallet owner stamps (public Quote.payloadToSign). */
  payloadToSign?: string;
  /** REALTIME_FUNDING sources: how to pay the quote (public Quote.paymentInstructions). */
  paymentInstructions?: PaymentInstruction[];
  createdAt: Date;
  expiresAt: Date;
  updatedAt: Date;
}

/** True when the quote can no longer be executed at `now` (its expiry is exclusive). */
export function isPastExpiry(q: Pick<Quote, 'expiresAt'>, now: Date): boolean {
  return q.expiresAt.getTime() <= now.getTime();
}
