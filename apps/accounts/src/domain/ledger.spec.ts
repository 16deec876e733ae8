import { describe, expect, it } from 'vitest';
import {
  assertPostWithinHold,
  assertValidEntry,
  canonicalLines,
  entryFingerprint,
  sandboxFundingAccountId,
  sandboxFundingEntry,
  totalsDeltas,
  holdEntry,
  holdFromEntries,
  postHoldEntry,
  refOfLedgerAccountId,
  SYSTEM_ACCOUNT_NAMES,
  systemAccountId,
  unbalancedCurrencies,
  voidHoldEntry,
  type JournalEntry,
} from './ledger.js';

const P = 'Platform:0190c6d2-7a1e-7c4e-9a57-0d1f4b9e2a10';
const A = 'InternalAccount:0190c6d2-7a1e-7c4e-9a57-0d1f4b9e2a11';
const B = 'InternalAccount:0190c6d2-7a1e-7c4e-9a57-0d1f4b9e2a12';

function entry(lines: JournalEntry['lines'], extra: Partial<JournalEntry> = {}): JournalEntry {
  return { id: 'e-1', platformId: P, kind: 'TEST', phase: 'POSTED', lines, ...extra };
}

describe('journal entries', () => {
  it('a sandbox funding entry debits the platform funding account and credits the account, and balances', () => {
    const e = sandboxFundingEntry({
      entryId: 'JournalEntry:x',
      platformId: P,
      accountId: A,
      currency: 'USD',
      amount: 1234n,
    });
    expect(e.lines).toEqual([
      { accountId: sandboxFundingAccountId(P, 'USD'), currency: 'USD', amount: -1234n },
      { accountId: A, currency: 'USD', amount: 1234n },
    ]);
    expect(e.phase).toBe('POSTED');
    expect(() => assertValidEntry(e)).not.toThrow();
  });

  it('refuses an entry that does not balance', () => {
    expect(() =>
      assertValidEntry(
        entry([
          { accountId: A, currency: 'USD', amount: 100n },
          { accountId: B, currency: 'USD', amount: -99n },
        ]),
      ),
    ).toThrow(/does not balance in USD/);
  });

  it('balances per currency, not across currencies', () => {
    expect(() =>
      assertValidEntry(
        entry([
          { accountId: A, currency: 'USD', amount: 100n },
          { accountId: B, currency: 'EUR', amount: -100n },
        ]),
      ),
    ).toThrow(/does not balance/);
    expect(() =>
      assertValidEntry(
        entry([
          { accountId: A, currency: 'USD', amount: 100n },
          { accountId: 'x:usd', currency: 'USD', amount: -100n },
          { accountId: B, currency: 'EUR', amount: -90n },
          { accountId: 'x:eur', currency: 'EUR', amount: 90n },
        ]),
      ),
    ).not.toThrow();
  });

  it('refuses zero lines, single lines, repeated accounts, out-of-range amounts and malformed ids', () => {
    expect(() =>
      assertValidEntry(
        entry([
          { accountId: A, currency: 'USD', amount: 0n },
          { accountId: B, currency: 'USD', amount: 0n },
        ]),
      ),
    ).toThrow(/zero line/);
    expect(() => assertValidEntry(entry([{ accountId: A, currency: 'USD', amount: 5n }]))).toThrow(
      /at least two lines/,
    );
    expect(() =>
      assertValidEntry(
        entry([
          { accountId: A, currency: 'USD', amount: 5n },
          { accountId: A, currency: 'USD', amount: -5n },
        ]),
      ),
    ).toThrow(/appears twice/);
    const big = 9_000_000_000_000_001n;
    expect(() =>
      assertValidEntry(
        entry([
          { accountId: A, currency: 'USD', amount: big },
          { accountId: B, currency: 'USD', amount: -big },
        ]),
      ),
    ).toThrow(/out of range/);
    expect(() =>
      assertValidEntry(
        entry(
          [
            { accountId: A, currency: 'USD', amount: 5n },
            { accountId: B, currency: 'USD', amount: -5n },
          ],
          { id: 'has space' },
        ),
      ),
    ).toThrow(/malformed/);
  });

  it('requires pendingEntryId exactly for POST_PENDING and VOID_PENDING, and a void has no lines', () => {
    const lines = [
      { accountId: A, currency: 'USD', amount: -5n },
      { accountId: B, currency: 'USD', amount: 5n },
    ];
    expect(() => assertValidEntry(entry(lines, { phase: 'POST_PENDING' }))).toThrow(/pendingEntryId/);
    expect(() => assertValidEntry(entry(lines, { phase: 'POSTED', pendingEntryId: 'h' }))).toThrow(
      /pendingEntryId/,
    );
    expect(() => assertValidEntry(entry(lines, { phase: 'VOID_PENDING', pendingEntryId: 'h' }))).toThrow(
      /no lines/,
    );
    expect(() => assertValidEntry(entry([], { phase: 'VOID_PENDING', pendingEntryId: 'h' }))).not.toThrow();
  });

  it('fingerprints what an entry does, whatever the order of its lines', () => {
    const l1 = { accountId: A, currency: 'USD', amount: 5n };
    const l2 = { accountId: B, currency: 'USD', amount: -5n };
    expect(entryFingerprint(entry([l1, l2]))).toBe(entryFingerprint(entry([l2, l1])));
    expect(entryFingerprint(entry([l1, l2]))).not.toBe(
      entryFingerprint(
        entry([
          { ...l1, amount: 6n },
          { ...l2, amount: -6n },
        ]),
      ),
    );
    expect(entryFingerprint(entry([l1, l2]))).not.toBe(
      entryFingerprint(entry([l1, l2], { phase: 'PENDING' })),
    );
    expect(canonicalLines([l2, l1]).map((l) => l.accountId)).toEqual([A, B]);
  });
});

describe('running totals', () => {
  const hold = entry(
    [
      { accountId: B, currency: 'USD', amount: -70n },
      { accountId: A, currency: 'USD', amount: 70n },
    ],
    { id: 'hold', phase: 'PENDING' },
  );

  it('a posted entry moves posted debits and credits', () => {
    const e = entry([
      { accountId: B, currency: 'USD', amount: -70n },
      { accountId: A, currency: 'USD', amount: 70n },
    ]);
    expect(totalsDeltas(e)).toEqual([
      {
        accountId: A,
        currency: 'USD',
        postedDebits: 0n,
        postedCredits: 70n,
        pendingDebits: 0n,
        pendingCredits: 0n,
      },
      {
        accountId: B,
        currency: 'USD',
        postedDebits: 70n,
        postedCredits: 0n,
        pendingDebits: 0n,
        pendingCredits: 0n,
      },
    ]);
  });

  it('a hold moves only pending totals', () => {
    expect(totalsDeltas(hold)).toEqual([
      {
        accountId: A,
        currency: 'USD',
        postedDebits: 0n,
        postedCredits: 0n,
        pendingDebits: 0n,
        pendingCredits: 70n,
      },
      {
        accountId: B,
        currency: 'USD',
        postedDebits: 0n,
        postedCredits: 0n,
        pendingDebits: 70n,
        pendingCredits: 0n,
      },
    ]);
  });

  it('posting a hold (partially) releases it in full and posts the posted amounts', () => {
    const post = entry(
      [
        { accountId: B, currency: 'USD', amount: -50n },
        { accountId: A, currency: 'USD', amount: 50n },
      ],
      { id: 'post', phase: 'POST_PENDING', pendingEntryId: 'hold' },
    );
    expect(() => assertPostWithinHold(post, hold.lines)).not.toThrow();
    expect(totalsDeltas(post, hold.lines)).toEqual([
      {
        accountId: A,
        currency: 'USD',
        postedDebits: 0n,
        postedCredits: 50n,
        pendingDebits: 0n,
        pendingCredits: -70n,
      },
      {
        accountId: B,
        currency: 'USD',
        postedDebits: 50n,
        postedCredits: 0n,
        pendingDebits: -70n,
        pendingCredits: 0n,
      },
    ]);
  });

  it('voiding a hold releases it and posts nothing', () => {
    const voided = entry([], { id: 'void', phase: 'VOID_PENDING', pendingEntryId: 'hold' });
    expect(totalsDeltas(voided, hold.lines)).toEqual([
      {
        accountId: A,
        currency: 'USD',
        postedDebits: 0n,
        postedCredits: 0n,
        pendingDebits: 0n,
        pendingCredits: -70n,
      },
      {
        accountId: B,
        currency: 'USD',
        postedDebits: 0n,
        postedCredits: 0n,
        pendingDebits: -70n,
        pendingCredits: 0n,
      },
    ]);
  });

  it('refuses to post more than was held, or on other accounts', () => {
    const more = entry(
      [
        { accountId: B, currency: 'USD', amount: -71n },
        { accountId: A, currency: 'USD', amount: 71n },
      ],
      { phase: 'POST_PENDING', pendingEntryId: 'hold' },
    );
    expect(() => assertPostWithinHold(more, hold.lines)).toThrow(/exceeds/);
    const other = entry(
      [
        { accountId: 'C', currency: 'USD', amount: -10n },
        { accountId: A, currency: 'USD', amount: 10n },
      ],
      { phase: 'POST_PENDING', pendingEntryId: 'hold' },
    );
    expect(() => assertPostWithinHold(other, hold.lines)).toThrow(/does not match/);
  });
});

describe('holds', () => {
  const placed = holdEntry({
    holdId: 'h-1',
    platformId: P,
    accountId: A,
    counterAccountId: systemAccountId(P, 'SETTLEMENT', 'USD'),
    currency: 'USD',
    amount: 500n,
    kind: 'TRANSFER_OUT',
  });
  const created = new Date('2026-01-01T00:00:00Z');
  const view = (resolution?: Parameters<typeof holdFromEntries>[2]) =>
    holdFromEntries({ ...placed, createdAt: created }, placed.lines, resolution)!;

  it('a hold is a valid PENDING entry debiting the account towards the counter account', () => {
    expect(() => assertValidEntry(placed)).not.toThrow();
    expect(placed.phase).toBe('PENDING');
    expect(view()).toMatchObject({ accountId: A, amount: 500n, status: 'PENDING', currency: 'USD' });
    expect(totalsDeltas(placed).find((d) => d.accountId === A)).toMatchObject({
      pendingDebits: 500n,
      postedDebits: 0n,
    });
  });

  it('a post is within the hold and releases all of it; more than held is refused', () => {
    const hold = view();
    const post = postHoldEntry(hold, 'p-1', 200n);
    expect(() => assertValidEntry(post)).not.toThrow();
    expect(() => assertPostWithinHold(post, placed.lines)).not.toThrow();
    expect(totalsDeltas(post, placed.lines).find((d) => d.accountId === A)).toMatchObject({
      postedDebits: 200n,
      pendingDebits: -500n,
    });
    expect(() => postHoldEntry(hold, 'p-2', 501n)).toThrow(/outside 1..500/);
    expect(() => postHoldEntry(hold, 'p-2', 0n)).toThrow();
    const resolved = view({ id: 'p-1', phase: 'POST_PENDING', createdAt: created, lines: post.lines });
    expect(resolved).toMatchObject({ status: 'POSTED', postedAmount: 200n, resolutionId: 'p-1' });
  });

  it('a void has no lines and releases the hold', () => {
    const v = voidHoldEntry(view(), 'v-1');
    expect(() => assertValidEntry(v)).not.toThrow();
    expect(totalsDeltas(v, placed.lines).find((d) => d.accountId === A)).toMatchObject({
      pendingDebits: -500n,
      postedDebits: 0n,
    });
    expect(view({ id: 'v-1', phase: 'VOID_PENDING', createdAt: created, lines: [] })).toMatchObject({
      status: 'VOIDED',
    });
    expect(
      view({ id: 'v-1', phase: 'VOID_PENDING', createdAt: created, lines: [] }).postedAmount,
    ).toBeUndefined();
  });

  it('only PENDING two-line entries read as holds', () => {
    expect(holdFromEntries({ ...placed, phase: 'POSTED', createdAt: created }, placed.lines)).toBeUndefined();
    expect(holdFromEntries({ ...placed, createdAt: created }, placed.lines.slice(0, 1))).toBeUndefined();
  });
});

describe('ledger account references', () => {
  it('maps system account ids back to their names; sandbox funding cannot be named', () => {
    expect(refOfLedgerAccountId(A)).toEqual({ internalAccountId: A });
    expect(refOfLedgerAccountId(systemAccountId(P, 'FX', 'EUR'))).toEqual({ system: 'FX' });
    expect(systemAccountId(P, 'CLEARING', 'USD')).toBe(`system:clearing:USD:${P}`);
    for (const name of SYSTEM_ACCOUNT_NAMES)
      expect(refOfLedgerAccountId(systemAccountId(P, name, 'USD'))).toEqual({ system: name });
    expect(SYSTEM_ACCOUNT_NAMES).toEqual(['SETTLEMENT', 'FEES', 'FX', 'CLEARING']);
    expect(refOfLedgerAccountId(sandboxFundingAccountId(P, 'USD'))).toBeUndefined();
  });

  it('finds the currencies whose lines do not sum to zero', () => {
    expect(
      unbalancedCurrencies([
        { currency: 'USD', amount: -5n },
        { currency: 'USD', amount: 5n },
      ]),
    ).toEqual([]);
    expect(
      unbalancedCurrencies([
        { currency: 'USD', amount: -5n },
        { currency: 'EUR', amount: 5n },
      ]),
    ).toEqual(['USD', 'EUR']);
  });
});
