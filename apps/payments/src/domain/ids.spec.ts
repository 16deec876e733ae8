import { describe, expect, it } from 'vitest';
import { holdPostId, holdVoidId, incomingCreditEntryId, quoteExecutionRequestKey, quoteLedgerIds, refundReference, transferLedgerIds } from './ids.js';
import { JOB_KINDS, jobIds } from './jobs.js';

const T = 'Transaction:0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const Q = 'Quote:0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c';

// The derived ids are stable strings: ledger entries, holds, job rows and request keys written
// by older releases carry them, so a repeated step after an upgrade is still a no-op.
describe('derived ids', () => {
  it('ledger ids of transfers, incoming payments and quote payments', () => {
    const hold = transferLedgerIds.hold(T);
    expect(hold).toBe('transfer-out:0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b');
    expect(holdPostId(hold)).toBe(`${hold}:post`);
    expect(holdVoidId(hold)).toBe(`${hold}:void`);
    expect(transferLedgerIds.credit(T)).toBe('transfer-in:0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b');
    expect(incomingCreditEntryId(T)).toBe('incoming:0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b');
    const base = 'quote:0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c';
    expect(quoteLedgerIds(Q)).toEqual({
      hold: base,
      post: `${base}:post`,
      void: `${base}:void`,
      funding: `${base}:funding`,
      capture: `${base}:capture`,
      return: `${base}:return`,
      refund: `${base}:refund`,
    });
    expect(quoteExecutionRequestKey(Q)).toBe(`quote-execute:${Q}`);
    expect(refundReference('SLC-ABCDEFGHJKLMNPQR')).toBe('SLC-ABCDEFGHJKLMNPQR-REFUND');
  });

  it('job ids: one job per purpose, prefixed by its kind', () => {
    expect(jobIds.transferSubmit(T)).toBe(`transfer.submit:${T}`);
    expect(jobIds.transferSettle(T, 2)).toBe(`transfer.settle:${T}:2`);
    expect(jobIds.quotePayment(JOB_KINDS.quotePaymentSubmit, T, 0)).toBe(`quote-payment.submit:${T}:0`);
    expect(jobIds.quotePayment(JOB_KINDS.quotePaymentRefund, T, 1)).toBe(`quote-payment.refund:${T}:1`);
    expect(jobIds.quoteExpire(Q)).toBe(`quote.expire:${Q}`);
    expect(jobIds.incomingComplete(T)).toBe(`incoming.complete:${T}`);
    expect(jobIds.incomingApprovalTimeout(T)).toBe(`incoming.approval-timeout:${T}`);
    expect(jobIds.lookupsPurge(493_000)).toBe('receiver-lookups.purge:493000');
  });
});
