import type { ApprovalPolicy } from '../domain/incoming-approval.js';
import type { EntityManager } from '@sluice/store';
import type { LedgerAccountRef, LedgerLine } from '../domain/quote-ledger.js';
import type { FailureDetail, RefundReason, Transaction } from '../domain/transaction.js';
import type { ReceiverProfile, UmaAddress } from '../domain/uma.js';
import type { UmaProvider } from '../domain/uma-providers.js';

// Every outbound port of payments: what the use cases need from other services, from payment
// networks and from the outbox. compose.ts wires the implementations — clients/ for the other
// services (one client per service) and the sandbox simulations, events/ for the publisher — and
// tests or the benchmark may replace any of them (PaymentsAdapters).

// ---- accounts: internal and external accounts, the ledger -------------------------------------

/** An internal account as payments needs it. */
export interface InternalAccountInfo {
  id: string;
  customerId?: string;
  currency: string;
  /** INTERNAL_FIAT, INTERNAL_CRYPTO or EMBEDDED_WALLET (an EMBEDDED_WALLET pays only with its owner's signature). */
  type: 'INTERNAL_FIAT' | 'INTERNAL_CRYPTO' | 'EMBEDDED_WALLET' | 'UNKNOWN';
}

/** An external account as payments needs it. */
export interface ExternalAccountInfo {
  id: string;
  customerId?: string;
  currency: string;
  status: 'ACTIVE' | 'PENDING' | 'UNDER_REVIEW' | 'INACTIVE' | 'UNKNOWN';
  /** accountInfo.accountType: USD_ACCOUNT, EUR_ACCOUNT, SPARK_WALLET, ... (which payment rails apply). */
  accountType: string;
  /** Account number, IBAN, CLABE, wallet address, pix key, ... (the sandbox suffix is its last 3 digits). */
  primaryIdentifier: string;
  /** accountInfo.paymentRails: the rails this account is paid on (empty for wallets; absent: its type's). */
  paymentRails?: string[];
}

/** The external-account read of the accounts service (and of what payments keeps of it: clients/kept-parties.ts). */
export interface ExternalAccountReads {
  getExternalAccount(platformId: string, accountId: string): Promise<ExternalAccountInfo>;
}

/** Reads of the accounts service; unknown or another platform's accounts are its NOT_FOUND errors. */
export interface AccountsPort extends ExternalAccountReads {
  getInternalAccount(platformId: string, accountId: string): Promise<InternalAccountInfo>;
  /** The customer's internal account in `currency`, if it has one (the receiver of an incoming payment). */
  customerAccount(
    platformId: string,
    customerId: string,
    currency: string,
  ): Promise<InternalAccountInfo | undefined>;
}

/**
 * The two-phase ledger of the accounts service. Every step carries a unique id (domain/ids.ts);
 * repeating a step with the same id is a no-op, so callers retry freely.
 */
export interface Ledger {
  /**
   * Pending debit of the internal account towards `counter` (default SETTLEMENT, the
   * outside world); INSUFFICIENT_FUNDS when the available balance is short.
   */
  placeHold(h: {
    platformId: string;
    holdId: string;
    accountId: string;
    amount: bigint;
    currency: string;
    counter?: LedgerAccountRef;
    kind: string;
    description?: string;
    /** An external account to read in the hold's transaction (unknown or deleted: EXTERNAL_ACCOUNT_NOT_FOUND, nothing held). */
    payeeExternalAccountId?: string;
  }): Promise<{ payee?: ExternalAccountInfo }>;
  /**
   * Posts the hold in full; with `entry`, that posted entry (postEntry's rules) is recorded first in
   * the same ledger transaction: both or neither.
   */
  postHold(h: {
    platformId: string;
    holdId: string;
    postId: string;
    entry?: { entryId: string; lines: LedgerLine[]; kind: string; description?: string };
  }): Promise<void>;
  voidHold(h: { platformId: string; holdId: string; voidId: string }): Promise<void>;
  /** Immediate credit of the internal account from the settlement account (money from outside). */
  creditFromOutside(c: {
    platformId: string;
    entryId: string;
    accountId: string;
    amount: bigint;
    currency: string;
    kind: string;
    description?: string;
  }): Promise<void>;
  /** One posted entry of balanced lines (each currency sums to zero); INSUFFICIENT_FUNDS for an internal account short of it. */
  postEntry(e: {
    platformId: string;
    entryId: string;
    lines: LedgerLine[];
    kind: string;
    description?: string;
  }): Promise<void>;
}

// ---- identity: customers -----------------------------------------------------------------------

/** A customer of a platform as payments needs it. */
export interface CustomerRef {
  customerId: string;
  platformCustomerId: string;
}

/** Customers of the identity service; CUSTOMER_NOT_FOUND passes through. */
export interface CustomerDirectory {
  /** The platform's own id of a customer. */
  platformCustomerId(platformId: string, customerId: string): Promise<string>;
  /** The platform's (not deleted) customer with this UMA address, if any (the receiver of an incoming payment). */
  customerByUmaAddress(platformId: string, umaAddress: string): Promise<CustomerRef | undefined>;
}

/** Whether a platform is asked to approve its incoming payments (identity owns its config). */
export interface ApprovalPolicies {
  /** The platform's webhook endpoint presence and per-currency approval thresholds. */
  approvalPolicy(platformId: string): Promise<ApprovalPolicy>;
}

// ---- wallet-auth: the signed retry of EMBEDDED_WALLET executions --------------------------------

/** A single-use signing request of wallet-auth: the signed retry's step 1 (HTTP 202). */
export interface SigningChallenge {
  requestId: string;
  payloadToSign: string;
  expiresAt: Date;
}

/**
 * The wallet owner's authorization of an EMBEDDED_WALLET execution: wallet-auth's signed retry
 * (action EXECUTE_QUOTE, body `{"quoteId": ...}`). `verify` throws wallet-auth's 401 DomainError
 * (WALLET_SIGNATURE_MISSING, SIGNING_REQUEST_REUSED, WALLET_SIGNATURE_INVALID, ...) and consumes the request.
 */
export interface WalletSignatures {
  challenge(platformId: string, accountId: string, bodyJson: string): Promise<SigningChallenge>;
  verify(
    platformId: string,
    accountId: string,
    signed: { bodyJson: string; signature?: string; requestId?: string },
  ): Promise<void>;
}

// ---- rail adapters: the networks payments move on ------------------------------------------------

/** A payment handed to a rail adapter: a payout to, or a pull from, an outside party. */
export interface RailPayment {
  transactionId: string;
  direction: 'PAYOUT' | 'PULL';
  amount: bigint;
  currency: string;
  /** The external account's primary identifier (account number, IBAN, CLABE, address, ...) or UMA address. */
  counterpartyIdentifier: string;
}

/** A rail adapter's answer at submission. */
export type RailSubmission =
  | { accepted: false; detail: FailureDetail }
  | { accepted: true; /** when to ask for the outcome (before time scaling) */ checkAfterMs: number };

/** A transfer rail's view of a transfer it accepted. */
export type TransferStatus =
  | { state: 'PENDING'; checkAfterMs: number }
  | { state: 'SETTLED' }
  | { state: 'FAILED'; detail: FailureDetail };

/**
 * The rail adapter of same-currency transfers (transfer-out payouts, transfer-in pulls) on the
 * external account's payment rail (ACH, SEPA, ...): takes transfers and reports their outcome.
 * Submissions are idempotent on transactionId. An unconfigured adapter (`configured: false`)
 * answers RAIL_UNAVAILABLE.
 */
export interface TransferRail {
  readonly configured: boolean;
  submit(p: RailPayment): Promise<RailSubmission>;
  status(p: RailPayment, ageMs: number): Promise<TransferStatus>;
}

/** What a payout rail says of a payout it accepted. */
export type PayoutStatus =
  | { state: 'PENDING'; checkAfterMs: number }
  /** Delivered. `returnCheckAfterMs`: the rail may still return it; ask `returned` after this long. */
  | { state: 'SETTLED'; returnCheckAfterMs?: number }
  /** Failed before any money left: the funds are released. */
  | { state: 'FAILED'; detail: FailureDetail }
  /** The money left and came back (cancelled or undeliverable): it is refunded to the payer. */
  | { state: 'RETURNED'; detail: FailureDetail; reason: RefundReason };

/** The fate of a refund (money going back to the payer). */
export type RefundStatus =
  { state: 'PENDING'; checkAfterMs: number } | { state: 'COMPLETED' } | { state: 'FAILED' };

/**
 * The rail adapter of quote payouts (to an external account or a UMA address): submission, the
 * payout's outcome, a late return of a delivered payout, and the refund of a payout whose money
 * came back. Every call is idempotent on the transaction id.
 */
export interface PayoutRail {
  readonly configured: boolean;
  submit(p: RailPayment): Promise<RailSubmission>;
  status(p: RailPayment, ageMs: number): Promise<PayoutStatus>;
  /** Asked `returnCheckAfterMs` after a delivery: the return, if the payout came back. */
  returned(p: RailPayment): Promise<{ detail: FailureDetail; reason: RefundReason } | undefined>;
  refund(p: RailPayment): Promise<RefundStatus>;
}

/** The payout rails of one environment: to external accounts and to UMA addresses. */
export interface PayoutRails {
  account: PayoutRail;
  uma: PayoutRail;
}

// ---- UMA: other institutions and the provider registry -------------------------------------------

/**
 * A UMA counterparty: resolves a receiver at another institution (UMA LNURLP lookup in
 * production). Undefined when the institution says the receiver does not exist.
 */
export interface UmaCounterparty {
  lookupReceiver(address: UmaAddress): Promise<ReceiverProfile | undefined>;
}

/** Where the UMA provider list comes from (a UMA registry in production; fixed data in the sandbox). */
export interface UmaProviderDirectory {
  providers(platformId: string): Promise<UmaProvider[]>;
}

// ---- events: what happened to transactions -------------------------------------------------------

/**
 * Publishes the webhook events of transactions (the event catalogue's OUTGOING_PAYMENT.* and
 * INCOMING_PAYMENT.*), written to the outbox in the caller's database transaction.
 */
export interface TransactionEvents {
  /** The event of a new transaction's first status, if that status has one. */
  created(em: EntityManager, t: Transaction): Promise<void>;
  /** The events of a change: its status webhook and, when the refund moved, the refund's. */
  changed(em: EntityManager, prev: Transaction, next: Transaction): Promise<void>;
}
