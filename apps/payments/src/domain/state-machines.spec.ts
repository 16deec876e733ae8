import { describe, expect, it } from 'vitest';
import {
  INCOMING_TRANSITIONS,
  OUTGOING_TRANSITIONS,
  QUOTE_STATUSES,
  QUOTE_TRANSITIONS,
  TRANSACTION_STATUSES,
  isTerminal,
  predecessors,
  quoteFollowing,
  quoteStatusFor,
  transitionQuote,
  transitionTransaction,
} from './state-machines.js';

describe('quote state machine', () => {
  it('allows exactly PENDING → PROCESSING → COMPLETED | FAILED, COMPLETED → FAILED (returned) and PENDING → EXPIRED', () => {
    const allowed = new Set([
      'PENDING>PROCESSING',
      'PENDING>EXPIRED',
      'PROCESSING>COMPLETED',
      'PROCESSING>FAILED',
      'COMPLETED>FAILED',
    ]);
    for (const from of QUOTE_STATUSES) {
      for (const to of QUOTE_STATUSES) {
        const key = `${from}>${to}`;
        if (allowed.has(key)) expect(transitionQuote(from, to)).toBe(to);
        else
          expect(() => transitionQuote(from, to), key).toThrow(
            expect.objectContaining({ code: 'ILLEGAL_STATE_TRANSITION', details: { from, to } }),
          );
      }
    }
    expect(['FAILED', 'EXPIRED'].every((s) => isTerminal(QUOTE_TRANSITIONS, s as never))).toBe(true);
  });

  it('a quote follows its transaction: every status it takes is reachable from where the transaction was', () => {
    expect(quoteStatusFor('COMPLETED')).toBe('COMPLETED');
    for (const s of ['FAILED', 'REJECTED', 'REFUNDED'] as const) expect(quoteStatusFor(s)).toBe('FAILED');
    expect(quoteStatusFor('EXPIRED')).toBe('EXPIRED');
    for (const s of ['CREATED', 'PENDING', 'PROCESSING'] as const) expect(quoteStatusFor(s)).toBeUndefined();
    expect(predecessors(QUOTE_TRANSITIONS, 'FAILED').sort()).toEqual(['COMPLETED', 'PROCESSING']);
    expect(predecessors(QUOTE_TRANSITIONS, 'EXPIRED')).toEqual(['PENDING']);
  });

  it('quoteFollowing gives the quote as follow() writes it: status and updatedAt move only where the table allows', () => {
    const at = new Date('2026-11-27T10:00:00Z');
    const later = new Date('2026-11-27T10:00:01Z');
    const q = { id: 'Quote:x', status: 'PROCESSING' as const, updatedAt: at };
    expect(quoteFollowing(q, { status: 'COMPLETED', updatedAt: later })).toEqual({ ...q, status: 'COMPLETED', updatedAt: later });
    expect(quoteFollowing(q, { status: 'FAILED', updatedAt: later })).toEqual({ ...q, status: 'FAILED', updatedAt: later });
    expect(quoteFollowing(q, { status: 'PROCESSING', updatedAt: later })).toBe(q);
    // EXPIRED follows only from PENDING.
    expect(quoteFollowing(q, { status: 'EXPIRED', updatedAt: later })).toBe(q);
  });
});

describe('transaction state machines', () => {
  it('every state is reachable from CREATED and every non-terminal state can finish', () => {
    for (const table of [OUTGOING_TRANSITIONS, INCOMING_TRANSITIONS]) {
      const seen = new Set(['CREATED']);
      const queue = ['CREATED'];
      while (queue.length) {
        for (const n of table[queue.shift() as never] as string[]) {
          if (!seen.has(n)) {
            seen.add(n);
            queue.push(n);
          }
        }
      }
      const expected = TRANSACTION_STATUSES.filter((s) => table === OUTGOING_TRANSITIONS || s !== 'REFUNDED');
      expect([...seen].sort()).toEqual([...expected].sort());
    }
  });

  it('refuses illegal moves per type', () => {
    expect(transitionTransaction('OUTGOING', 'PROCESSING', 'COMPLETED')).toBe('COMPLETED');
    expect(transitionTransaction('OUTGOING', 'COMPLETED', 'FAILED')).toBe('FAILED'); // returned by the receiving bank
    expect(transitionTransaction('OUTGOING', 'FAILED', 'REFUNDED')).toBe('REFUNDED');
    expect(transitionTransaction('INCOMING', 'PENDING', 'REJECTED')).toBe('REJECTED');
    for (const [type, from, to] of [
      ['OUTGOING', 'COMPLETED', 'PROCESSING'],
      ['OUTGOING', 'REFUNDED', 'COMPLETED'],
      ['OUTGOING', 'CREATED', 'COMPLETED'],
      ['OUTGOING', 'EXPIRED', 'PENDING'],
      ['INCOMING', 'COMPLETED', 'FAILED'],
      ['INCOMING', 'FAILED', 'REFUNDED'],
      ['INCOMING', 'REJECTED', 'PROCESSING'],
    ] as const) {
      expect(() => transitionTransaction(type, from, to), `${type} ${from}>${to}`).toThrow(
        expect.objectContaining({ code: 'ILLEGAL_STATE_TRANSITION' }),
      );
    }
  });
});
