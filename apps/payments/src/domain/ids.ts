import { idUuid } from '@sluice/core';

// Ids derived from a payment rather than generated: a step repeated by a retry, a concurrent
// request or a re-run job carries the same id, so the accounts ledger (or the unique key of a
// table) makes the repetition a no-op. The strings are stable: rows and ledger entries of older
// releases carry them.

/** The id of the step that posts a hold (its money moves). */
export const holdPostId = (holdId: string): string => `${holdId}:post`;

/** The id of the step that voids a hold (its money stays). */
export const holdVoidId = (holdId: string): string => `${holdId}:void`;

/** The ledger ids of a same-currency transfer. */
export const transferLedgerIds = {
  /** The hold a transfer-out places on its internal account: `transfer-out:<uuid of the transaction>`. */
  hold: (transactionId: string): string => `transfer-out:${idUuid(transactionId)}`,
  /** The entry crediting a settled transfer-in: `transfer-in:<uuid of the transaction>`. */
  credit: (transactionId: string): string => `transfer-in:${idUuid(transactionId)}`,
};

/** The entry crediting an incoming UMA payment: `incoming:<uuid of the transaction>`. */
export const incomingCreditEntryId = (transactionId: string): string => `incoming:${idUuid(transactionId)}`;

/** The ledger ids of a quote payment (domain/quote-ledger.ts says what each entry books). */
export interface QuoteLedgerIds {
  /** The execution hold on an internal-account source: `quote:<uuid of the quote>`. */
  hold: string;
  post: string;
  void: string;
  funding: string;
  capture: string;
  return: string;
  refund: string;
}

/** The ledger ids of the payment of `quoteId`: every entry shares the prefix `quote:<uuid>`. */
export function quoteLedgerIds(quoteId: string): QuoteLedgerIds {
  const base = `quote:${idUuid(quoteId)}`;
  return {
    hold: base,
    post: holdPostId(base),
    void: holdVoidId(base),
    funding: `${base}:funding`,
    capture: `${base}:capture`,
    return: `${base}:return`,
    refund: `${base}:refund`,
  };
}

/** The request key of a quote's OUTGOING transaction (unique per platform: one transaction per quote). */
export const quoteExecutionRequestKey = (quoteId: string): string => `quote-execute:${quoteId}`;

/** The reference of the refund of a transaction: its own reference with `-REFUND`. */
export const refundReference = (transactionReference: string): string => `${transactionReference}-REFUND`;
