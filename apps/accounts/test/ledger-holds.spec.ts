import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accounts as pb } from '@sluice/contracts';
import { newId } from '@sluice/core';
import { EXTERNAL_ACCOUNT_EXAMPLES } from '@sluice/testing/external-accounts';
import { PRODUCTION, rejection, SANDBOX, startHarness, type Harness } from './support/harness.js';
import { balanceEvents, internalAccount, SETTLEMENT } from './support/ledger.js';

/** The ledger RPCs one by one: holds (place, post, void, get), PostTransfer, ReconcileLedger, and their refusals. */

let h: Harness;
beforeAll(async () => {
  h = await startHarness('accledgerholds');
});
afterAll(async () => {
  await h?.stop();
});

interface Setup {
  platformId: string;
  /** Customer USD account funded with 10_000. */
  accountId: string;
  /** The platform's USD account (a counter account). */
  platformAccountId: string;
  /** The customer's EUR account. */
  eurAccountId: string;
}

/** Funds a USD account with 10_000 from the outside world (what a settled transfer-in does): works in production too. */
async function fund(platformId: string, accountId: string): Promise<void> {
  await h.client.postTransfer({
    platformId,
    entryId: newId('JournalEntry'),
    kind: 'TRANSFER_IN',
    lines: [
      { account: SETTLEMENT, currency: 'USD', amount: -10_000n },
      { account: { internalAccountId: accountId }, currency: 'USD', amount: 10_000n },
    ],
  });
}

/** A new customer's funded USD account and an NGN external account of theirs to pay (a hold's payee). */
async function fundedPayer() {
  const platformId = await h.platform('SANDBOX');
  const customerId = await h.customer(platformId, 'Ada Obi');
  const { accounts } = await h.client.ensureCustomerAccounts({
    platformId,
    customerId,
    currencies: ['USD'],
    environment: SANDBOX,
  });
  const accountId = accounts[0]!.id;
  await fund(platformId, accountId);
  const { currency, accountInfo } = EXTERNAL_ACCOUNT_EXAMPLES.NGN_ACCOUNT;
  const { account: payee } = await h.client.createExternalAccount({
    platformId,
    environment: SANDBOX,
    customerId,
    currency,
    accountInfo: { paymentRails: [], ...accountInfo } as unknown as pb.ExternalAccountInfo,
  });
  return { platformId, accountId, payee };
}

async function setup(env: 'SANDBOX' | 'PRODUCTION' = 'SANDBOX'): Promise<Setup> {
  const platformId = await h.platform(env);
  const environment = env === 'SANDBOX' ? SANDBOX : PRODUCTION;
  const { accounts } = await h.client.ensureCustomerAccounts({
    platformId,
    customerId: newId('Customer'),
    currencies: ['USD', 'EUR'],
    environment,
  });
  const platformAccounts = await h.client.ensurePlatformAccounts({
    platformId,
    currencies: ['USD'],
    environment,
  });
  const accountId = accounts[0]!.id;
  await fund(platformId, accountId);
  return {
    platformId,
    accountId,
    platformAccountId: platformAccounts.accounts[0]!.id,
    eurAccountId: accounts[1]!.id,
  };
}

async function counts(
  platformId: string,
): Promise<{ entries: number; lines: number; events: number; system: number }> {
  const r = await h.sql.query(
    `SELECT (SELECT count(*)::int FROM accounts.journal_entries WHERE platform_id = $1) AS entries,
            (SELECT count(*)::int FROM accounts.journal_lines WHERE platform_id = $1) AS lines,
            (SELECT count(*)::int FROM accounts.outbox WHERE envelope->>'platformId' = $1) AS events,
            (SELECT count(*)::int FROM accounts.ledger_accounts WHERE platform_id = $1 AND kind = 'SYSTEM') AS system`,
    [platformId],
  );
  return r.rows[0];
}

async function expectConsistent(platformId: string): Promise<void> {
  const r = await h.client.reconcileLedger({ platformId });
  expect(r.mismatches).toEqual([]);
  expect(r.unbalancedEntryIds).toEqual([]);
  for (const c of r.currencies)
    expect([c.currency, c.postedBalanceSum, c.lineSum]).toEqual([c.currency, 0n, 0n]);
  expect(r.consistent).toBe(true);
}

describe('holds', () => {
  it('a hold lowers the available balance only; a partial post moves money to the counter account and releases the rest', async () => {
    const s = await setup();
    const holdId = `hold:${newId('JournalEntry')}`;
    const placed = await h.client.placeHold({
      platformId: s.platformId,
      holdId,
      accountId: s.accountId,
      amount: 4_000n,
      currency: 'USD',
      counterAccount: { internalAccountId: s.platformAccountId },
      kind: 'QUOTE_EXECUTION',
      description: 'Quote:abc',
    });
    expect(placed.replayed).toBe(false);
    expect(placed.hold).toMatchObject({
      id: holdId,
      accountId: s.accountId,
      counterAccount: { internalAccountId: s.platformAccountId },
      currency: 'USD',
      amount: 4_000n,
      status: pb.HoldStatus.PENDING,
      kind: 'QUOTE_EXECUTION',
      description: 'Quote:abc',
    });
    expect(placed.hold!.resolutionId).toBeUndefined();
    expect([placed.account!.balance!.amount, placed.account!.availableAmount]).toEqual([10_000n, 6_000n]);
    // A hold moves no posted balance: no BALANCE_UPDATED.
    expect(await balanceEvents(h, s.accountId)).toHaveLength(1);
    expect(await balanceEvents(h, s.platformAccountId)).toHaveLength(0);
    expect((await h.client.getHold({ platformId: s.platformId, holdId })).hold!.status).toBe(
      pb.HoldStatus.PENDING,
    );

    const posted = await h.client.postHold({
      platformId: s.platformId,
      holdId,
      postId: `post:${holdId}`,
      amount: 3_500n,
    });
    expect(posted.replayed).toBe(false);
    expect(posted.hold).toMatchObject({
      status: pb.HoldStatus.POSTED,
      postedAmount: 3_500n,
      resolutionId: `post:${holdId}`,
    });
    expect(posted.hold!.resolvedAt).toBeInstanceOf(Date);
    expect([posted.account!.balance!.amount, posted.account!.availableAmount]).toEqual([6_500n, 6_500n]);
    expect((await internalAccount(h, s.platformId, s.platformAccountId)).balance!.amount).toBe(3_500n);
    // Both internal accounts' balances moved: one event each, carrying the new balance.
    const [, customerEvent] = await balanceEvents(h, s.accountId);
    const [platformEvent] = await balanceEvents(h, s.platformAccountId);
    expect((customerEvent!.data as { balance: { amount: number } }).balance.amount).toBe(6_500);
    expect((platformEvent!.data as { balance: { amount: number } }).balance.amount).toBe(3_500);
    expect(customerEvent!.platformId).toBe(s.platformId);
    await expectConsistent(s.platformId);
  });

  it('a void releases the hold and moves nothing', async () => {
    const s = await setup();
    const holdId = newId('JournalEntry');
    await h.client.placeHold({
      platformId: s.platformId,
      holdId,
      accountId: s.accountId,
      amount: 10_000n,
      currency: 'USD',
      counterAccount: SETTLEMENT,
    });
    expect((await internalAccount(h, s.platformId, s.accountId)).availableAmount).toBe(0n);
    const voided = await h.client.voidHold({ platformId: s.platformId, holdId, voidId: `void:${holdId}` });
    expect(voided.hold).toMatchObject({ status: pb.HoldStatus.VOIDED, resolutionId: `void:${holdId}` });
    expect(voided.hold!.postedAmount).toBeUndefined();
    expect([voided.account!.balance!.amount, voided.account!.availableAmount]).toEqual([10_000n, 10_000n]);
    expect(await balanceEvents(h, s.accountId)).toHaveLength(1);
    await expectConsistent(s.platformId);
  });

  it('a hold may name its payee: an external account read in its transaction and answered with it; a deleted one holds nothing', async () => {
    const { platformId, accountId, payee } = await fundedPayer();
    const hold = (payeeExternalAccountId: string) =>
      h.client.placeHold({
        platformId,
        holdId: newId('JournalEntry'),
        accountId,
        amount: 1_000n,
        currency: 'USD',
        counterAccount: SETTLEMENT,
        payeeExternalAccountId,
      });
    const placed = await hold(payee!.id);
    // The payee as GetExternalAccount answers it (its number opened from the sealed row).
    expect(placed.payeeExternalAccount).toEqual(
      (await h.client.getExternalAccount({ platformId, accountId: payee!.id })).account,
    );
    expect(placed.account!.availableAmount).toBe(9_000n);

    await h.client.deleteExternalAccount({ platformId, accountId: payee!.id });
    const before = await counts(platformId);
    expect((await rejection(() => hold(payee!.id))).code).toBe('EXTERNAL_ACCOUNT_NOT_FOUND');
    expect((await rejection(() => hold(newId('ExternalAccount')))).code).toBe('EXTERNAL_ACCOUNT_NOT_FOUND');
    expect(await counts(platformId)).toEqual(before);
    expect((await internalAccount(h, platformId, accountId)).availableAmount).toBe(9_000n);
  });

  it('each step is idempotent by its id; another body or a second resolution is JOURNAL_ENTRY_CONFLICT and changes nothing', async () => {
    const s = await setup();
    const holdId = newId('JournalEntry');
    const place = (amount: bigint) =>
      h.client.placeHold({
        platformId: s.platformId,
        holdId,
        accountId: s.accountId,
        amount,
        currency: 'USD',
        counterAccount: SETTLEMENT,
      });
    await place(1_000n);
    const before = await counts(s.platformId);
    const again = await place(1_000n);
    expect(again.replayed).toBe(true);
    expect(again.account!.availableAmount).toBe(9_000n);
    const other = await rejection(() => place(1_001n));
    expect([other.kind, other.code]).toEqual(['ALREADY_EXISTS', 'JOURNAL_ENTRY_CONFLICT']);
    const otherCounter = await rejection(() =>
      h.client.placeHold({
        platformId: s.platformId,
        holdId,
        accountId: s.accountId,
        amount: 1_000n,
        currency: 'USD',
        counterAccount: { systemAccount: pb.SystemAccount.FEES },
      }),
    );
    expect(otherCounter.code).toBe('JOURNAL_ENTRY_CONFLICT');
    expect((await counts(s.platformId)).entries).toBe(before.entries);

    const postId = `post:${holdId}`;
    const post = await h.client.postHold({ platformId: s.platformId, holdId, postId });
    const postAgain = await h.client.postHold({ platformId: s.platformId, holdId, postId });
    expect([post.replayed, postAgain.replayed]).toEqual([false, true]);
    expect(postAgain.hold).toEqual(post.hold);
    expect(postAgain.account!.balance!.amount).toBe(9_000n);
    const afterPost = await counts(s.platformId);

    const voidAfter = await rejection(() =>
      h.client.voidHold({ platformId: s.platformId, holdId, voidId: `void:${holdId}` }),
    );
    expect([voidAfter.kind, voidAfter.code]).toEqual(['ALREADY_EXISTS', 'JOURNAL_ENTRY_CONFLICT']);
    expect(voidAfter.details).toMatchObject({ holdId, status: 'POSTED', resolutionId: postId });
    const secondPost = await rejection(() =>
      h.client.postHold({ platformId: s.platformId, holdId, postId: `post2:${holdId}` }),
    );
    expect(secondPost.code).toBe('JOURNAL_ENTRY_CONFLICT');
    const samePostOtherAmount = await rejection(() =>
      h.client.postHold({ platformId: s.platformId, holdId, postId, amount: 10n }),
    );
    expect(samePostOtherAmount.code).toBe('JOURNAL_ENTRY_CONFLICT');
    // The hold id replayed after it was posted returns the hold as it is now.
    expect((await place(1_000n)).hold!.status).toBe(pb.HoldStatus.POSTED);
    // A resolution id already used by another entry is a conflict too.
    const hold2 = newId('JournalEntry');
    await h.client.placeHold({
      platformId: s.platformId,
      holdId: hold2,
      accountId: s.accountId,
      amount: 5n,
      currency: 'USD',
      counterAccount: SETTLEMENT,
    });
    const reused = await rejection(() =>
      h.client.voidHold({ platformId: s.platformId, holdId: hold2, voidId: postId }),
    );
    expect(reused.code).toBe('JOURNAL_ENTRY_CONFLICT');
    const after = await counts(s.platformId);
    expect(after.entries).toBe(afterPost.entries + 1);
    expect(after.events).toBe(afterPost.events);
    expect((await internalAccount(h, s.platformId, s.accountId)).balance!.amount).toBe(9_000n);
    await expectConsistent(s.platformId);
  });

  it('an unknown hold, another platform’s hold, or an entry that is not a hold is HOLD_NOT_FOUND', async () => {
    const s = await setup();
    const holdId = newId('JournalEntry');
    await h.client.placeHold({
      platformId: s.platformId,
      holdId,
      accountId: s.accountId,
      amount: 5n,
      currency: 'USD',
      counterAccount: SETTLEMENT,
    });
    const { entryId: fundingEntry } = await h.client.sandboxFund({
      platformId: s.platformId,
      accountId: s.accountId,
      amount: 1n,
    });
    const other = await h.platform();
    for (const [platformId, id] of [
      [s.platformId, newId('JournalEntry')],
      [other, holdId],
      [s.platformId, fundingEntry],
    ] as const) {
      for (const call of [
        () => h.client.getHold({ platformId, holdId: id }),
        () => h.client.postHold({ platformId, holdId: id, postId: newId('JournalEntry') }),
        () => h.client.voidHold({ platformId, holdId: id, voidId: newId('JournalEntry') }),
      ]) {
        const e = await rejection(call);
        expect([e.kind, e.code]).toEqual(['NOT_FOUND', 'HOLD_NOT_FOUND']);
      }
    }
    expect((await h.client.getHold({ platformId: s.platformId, holdId })).hold!.status).toBe(
      pb.HoldStatus.PENDING,
    );
  });

  it('production accounts take holds too', async () => {
    const s = await setup('PRODUCTION');
    const r = await h.client.placeHold({
      platformId: s.platformId,
      holdId: newId('JournalEntry'),
      accountId: s.accountId,
      amount: 10_000n,
      currency: 'USD',
      counterAccount: SETTLEMENT,
    });
    expect(r.account!.availableAmount).toBe(0n);
  });
});

describe('bad input changes nothing', () => {
  it('PlaceHold: each fault names its field', async () => {
    const s = await setup();
    const base: pb.PlaceHoldRequest = {
      platformId: s.platformId,
      holdId: newId('JournalEntry'),
      accountId: s.accountId,
      amount: 100n,
      currency: 'USD',
      counterAccount: SETTLEMENT,
    };
    const before = await counts(s.platformId);
    const cases: [Partial<pb.PlaceHoldRequest>, string, string][] = [
      [{ amount: 0n }, 'amount', 'must be greater than 0'],
      [{ amount: -5n }, 'amount', 'must be greater than 0'],
      [{ amount: 9_000_000_000_000_001n }, 'amount', 'must be at most 9000000000000000'],
      [{ holdId: '' }, 'holdId', 'is required'],
      [
        { holdId: 'has spaces' },
        'holdId',
        'must be 1 to 200 characters of A-Z, a-z, 0-9, ":", ".", "_", "-"',
      ],
      [{ accountId: 'acct_1' }, 'accountId', 'must be a InternalAccount id (InternalAccount:<uuid>)'],
      [{ currency: '' }, 'currency', 'is required'],
      [{ currency: 'XYZ' }, 'currency', 'unknown currency "XYZ"'],
      [{ currency: 'EUR' }, 'currency', "must be the account's currency (USD)"],
      [{ counterAccount: undefined }, 'counterAccount', 'requires internalAccountId or systemAccount'],
      [{ counterAccount: {} }, 'counterAccount', 'requires internalAccountId or systemAccount'],
      [
        { counterAccount: { internalAccountId: s.platformAccountId, systemAccount: pb.SystemAccount.FX } },
        'counterAccount',
        'takes internalAccountId or systemAccount, not both',
      ],
      [
        { counterAccount: { internalAccountId: 'x' } },
        'counterAccount.internalAccountId',
        'must be a InternalAccount id (InternalAccount:<uuid>)',
      ],
      [
        { counterAccount: { internalAccountId: s.accountId } },
        'counterAccount',
        'must differ from accountId',
      ],
      [
        { counterAccount: { internalAccountId: s.eurAccountId } },
        'counterAccount',
        `${s.eurAccountId} holds EUR, not USD`,
      ],
      [{ kind: 'lower case' }, 'kind', 'must be 1 to 64 characters of A-Z, 0-9, "_"'],
      [
        { payeeExternalAccountId: 'ExternalAccount:x' },
        'payeeExternalAccountId',
        'must be a ExternalAccount id (ExternalAccount:<uuid>)',
      ],
    ];
    for (const [patch, field, message] of cases) {
      const e = await rejection(() => h.client.placeHold({ ...base, ...patch }));
      expect(
        [e.kind, e.code, e.details],
        JSON.stringify(patch, (_, v) => (typeof v === 'bigint' ? `${v}` : v)),
      ).toEqual(['INVALID_ARGUMENT', 'INVALID_INPUT', { errors: [{ field, message }] }]);
    }
    // Unknown account, another platform's account (debited or as counter): NOT_FOUND.
    const foreign = await setup();
    for (const patch of [
      { accountId: newId('InternalAccount') },
      { accountId: foreign.accountId },
      { counterAccount: { internalAccountId: foreign.platformAccountId } },
    ]) {
      const e = await rejection(() => h.client.placeHold({ ...base, ...patch }));
      expect([e.kind, e.code]).toEqual(['NOT_FOUND', 'INTERNAL_ACCOUNT_NOT_FOUND']);
    }
    const tooMuch = await rejection(() => h.client.placeHold({ ...base, amount: 10_001n }));
    expect([tooMuch.kind, tooMuch.code]).toEqual(['FAILED_PRECONDITION', 'INSUFFICIENT_FUNDS']);
    expect(await counts(s.platformId)).toEqual(before);
    expect((await internalAccount(h, s.platformId, s.accountId)).availableAmount).toBe(10_000n);
    expect((await internalAccount(h, foreign.platformId, foreign.accountId)).availableAmount).toBe(10_000n);
  });

  it('PostHold / VoidHold: bad ids and amounts beyond the hold', async () => {
    const s = await setup();
    const holdId = newId('JournalEntry');
    await h.client.placeHold({
      platformId: s.platformId,
      holdId,
      accountId: s.accountId,
      amount: 100n,
      currency: 'USD',
      counterAccount: SETTLEMENT,
    });
    const before = await counts(s.platformId);
    const cases: [() => Promise<unknown>, string, string][] = [
      [
        () => h.client.postHold({ platformId: s.platformId, holdId, postId: 'p', amount: 101n }),
        'amount',
        'must be at most the held amount (100)',
      ],
      [
        () => h.client.postHold({ platformId: s.platformId, holdId, postId: 'p', amount: 0n }),
        'amount',
        'must be greater than 0',
      ],
      [
        () => h.client.postHold({ platformId: s.platformId, holdId, postId: 'p', amount: -1n }),
        'amount',
        'must be greater than 0',
      ],
      [() => h.client.postHold({ platformId: s.platformId, holdId, postId: '' }), 'postId', 'is required'],
      [
        () => h.client.postHold({ platformId: s.platformId, holdId: '', postId: 'p' }),
        'holdId',
        'is required',
      ],
      [
        () => h.client.voidHold({ platformId: s.platformId, holdId, voidId: 'a b' }),
        'voidId',
        'must be 1 to 200 characters of A-Z, a-z, 0-9, ":", ".", "_", "-"',
      ],
      [
        () => h.client.voidHold({ platformId: 'nope', holdId, voidId: 'v' }),
        'platformId',
        'must be a Platform id (Platform:<uuid>)',
      ],
    ];
    for (const [call, field, message] of cases) {
      const e = await rejection(call);
      expect([e.code, e.details]).toEqual(['INVALID_INPUT', { errors: [{ field, message }] }]);
    }
    expect(await counts(s.platformId)).toEqual(before);
    expect((await h.client.getHold({ platformId: s.platformId, holdId })).hold!.status).toBe(
      pb.HoldStatus.PENDING,
    );
  });
});

describe('PostTransfer', () => {
  it('moves money immediately between internal and system accounts, with fee and FX legs, and is idempotent', async () => {
    const s = await setup();
    const entryId = `quote:${newId('JournalEntry')}`;
    // A USD → EUR conversion for the customer with a fee: 1 000 USD + 20 USD fee, 900 EUR received.
    const lines: pb.LedgerLine[] = [
      { account: { internalAccountId: s.accountId }, currency: 'USD', amount: -1_020n },
      { account: { systemAccount: pb.SystemAccount.FEES }, currency: 'USD', amount: 20n },
      { account: { systemAccount: pb.SystemAccount.FX }, currency: 'USD', amount: 1_000n },
      { account: { systemAccount: pb.SystemAccount.FX }, currency: 'EUR', amount: -900n },
      { account: { internalAccountId: s.eurAccountId }, currency: 'EUR', amount: 900n },
    ];
    const r = await h.client.postTransfer({
      platformId: s.platformId,
      entryId,
      lines,
      kind: 'QUOTE_EXECUTION',
    });
    expect(r.replayed).toBe(false);
    expect(r.accounts.map((a) => [a.id, a.balance!.amount])).toEqual([
      [s.accountId, 8_980n],
      [s.eurAccountId, 900n],
    ]);
    expect(await balanceEvents(h, s.eurAccountId)).toHaveLength(1);
    const before = await counts(s.platformId);
    const again = await h.client.postTransfer({
      platformId: s.platformId,
      entryId,
      lines,
      kind: 'QUOTE_EXECUTION',
    });
    expect(again.replayed).toBe(true);
    expect(await counts(s.platformId)).toEqual(before);
    const conflict = await rejection(() =>
      h.client.postTransfer({
        platformId: s.platformId,
        entryId,
        lines: lines.slice(0, 2).map((l, i) => ({ ...l, amount: i ? 1_020n : -1_020n })),
      }),
    );
    expect(conflict.code).toBe('JOURNAL_ENTRY_CONFLICT');
    const report = await h.client.reconcileLedger({ platformId: s.platformId });
    // System accounts keep no running totals (no hot row): their balances come from their lines.
    const system = await h.sql.query(
      `SELECT id, posted_debits::text || '/' || posted_credits::text AS totals FROM accounts.ledger_accounts WHERE platform_id = $1 AND kind = 'SYSTEM' ORDER BY id`,
      [s.platformId],
    );
    expect(system.rows.map((r) => [r.id.split(':')[1], r.totals])).toEqual([
      ['fees', '0/0'],
      ['fx', '0/0'],
      ['fx', '0/0'],
      ['settlement', '0/0'],
    ]);
    expect(report.currencies.map((c) => [c.currency, c.postedBalanceSum, c.lineSum])).toEqual([
      ['EUR', 0n, 0n],
      ['USD', 0n, 0n],
    ]);
    await expectConsistent(s.platformId);
  });

  it('refuses malformed lines with field errors, and overdrafts with INSUFFICIENT_FUNDS; nothing changes', async () => {
    const s = await setup();
    const acct = { internalAccountId: s.accountId };
    const before = await counts(s.platformId);
    const cases: [pb.LedgerLine[], { field: string; message: string }[]][] = [
      [
        [{ account: acct, currency: 'USD', amount: -5n }],
        [
          { field: 'lines', message: 'needs at least two lines' },
          { field: 'lines', message: 'do not sum to zero in USD' },
        ],
      ],
      [
        [
          { account: acct, currency: 'USD', amount: -5n },
          { account: SETTLEMENT, currency: 'USD', amount: 4n },
        ],
        [{ field: 'lines', message: 'do not sum to zero in USD' }],
      ],
      [
        [
          { account: acct, currency: 'USD', amount: 0n },
          { account: SETTLEMENT, currency: 'USD', amount: 0n },
        ],
        [
          { field: 'lines[0].amount', message: 'must not be 0' },
          { field: 'lines[1].amount', message: 'must not be 0' },
        ],
      ],
      [
        [
          { account: acct, currency: 'USD', amount: -9_000_000_000_000_001n },
          { account: SETTLEMENT, currency: 'USD', amount: 9_000_000_000_000_001n },
        ],
        [
          { field: 'lines[0].amount', message: 'must be between -9000000000000000 and 9000000000000000' },
          { field: 'lines[1].amount', message: 'must be between -9000000000000000 and 9000000000000000' },
        ],
      ],
      [
        [
          { account: SETTLEMENT, currency: 'USD', amount: -5n },
          { account: SETTLEMENT, currency: 'USD', amount: 5n },
        ],
        [{ field: 'lines[1].account', message: 'appears in another line' }],
      ],
      [
        [
          { account: acct, currency: 'ZZZ', amount: -5n },
          { account: SETTLEMENT, currency: 'USD', amount: 5n },
        ],
        [{ field: 'lines[0].currency', message: 'unknown currency "ZZZ"' }],
      ],
      [
        [
          { account: {}, currency: 'USD', amount: -5n },
          { account: SETTLEMENT, currency: 'USD', amount: 5n },
        ],
        [{ field: 'lines[0].account', message: 'requires internalAccountId or systemAccount' }],
      ],
      [
        [
          { account: acct, currency: 'EUR', amount: -5n },
          { account: SETTLEMENT, currency: 'EUR', amount: 5n },
        ],
        [{ field: 'lines[0]', message: `${s.accountId} holds USD, not EUR` }],
      ],
    ];
    for (const [lines, errors] of cases) {
      const e = await rejection(() =>
        h.client.postTransfer({ platformId: s.platformId, entryId: newId('JournalEntry'), lines }),
      );
      expect([e.code, e.details]).toEqual(['INVALID_INPUT', { errors }]);
    }
    const missingId = await rejection(() =>
      h.client.postTransfer({ platformId: s.platformId, entryId: '', lines: cases[1]![0] }),
    );
    expect(missingId.details).toEqual({
      errors: [
        { field: 'entryId', message: 'is required' },
        { field: 'lines', message: 'do not sum to zero in USD' },
      ],
    });
    const overdraft = await rejection(() =>
      h.client.postTransfer({
        platformId: s.platformId,
        entryId: newId('JournalEntry'),
        lines: [
          { account: acct, currency: 'USD', amount: -10_001n },
          { account: SETTLEMENT, currency: 'USD', amount: 10_001n },
        ],
      }),
    );
    expect([overdraft.kind, overdraft.code]).toEqual(['FAILED_PRECONDITION', 'INSUFFICIENT_FUNDS']);
    const foreign = await setup();
    const cross = await rejection(() =>
      h.client.postTransfer({
        platformId: s.platformId,
        entryId: newId('JournalEntry'),
        lines: [
          { account: SETTLEMENT, currency: 'USD', amount: -5n },
          { account: { internalAccountId: foreign.accountId }, currency: 'USD', amount: 5n },
        ],
      }),
    );
    expect(cross.code).toBe('INTERNAL_ACCOUNT_NOT_FOUND');
    expect(await counts(s.platformId)).toEqual(before);
    expect((await internalAccount(h, s.platformId, s.accountId)).balance!.amount).toBe(10_000n);
  });
});

describe('the CLEARING system account', () => {
  const CLEARING = { systemAccount: pb.SystemAccount.CLEARING };

  /** A system account's posted balance (credits − debits), derived from its lines: system accounts keep no totals. */
  async function systemBalance(platformId: string, name: string, currency: string): Promise<bigint> {
    const r = await h.sql.query(
      `SELECT coalesce(sum(l.amount), 0)::text AS b FROM accounts.journal_lines l
       JOIN accounts.journal_entries e ON e.platform_id = l.platform_id AND e.id = l.entry_id
       WHERE l.account_id = $1 AND e.phase IN ('POSTED', 'POST_PENDING')`,
      [`system:${name}:${currency}:${platformId}`],
    );
    return BigInt(r.rows[0].b);
  }

  /** A hold of `amount` USD on the setup's customer account towards CLEARING (how payments holds a quote's funds). */
  function clearingHold(s: Setup, holdId: string, amount: bigint, kind?: string) {
    return h.client.placeHold({
      platformId: s.platformId,
      holdId,
      accountId: s.accountId,
      amount,
      currency: 'USD',
      counterAccount: CLEARING,
      ...(kind ? { kind } : {}),
    });
  }

  it('a hold towards CLEARING is posted into it, another is voided; the ledger reconciles', async () => {
    const s = await setup();
    const holdId = `quote:${newId('JournalEntry')}`;
    const placed = await clearingHold(s, holdId, 4_000n, 'QUOTE_EXECUTION');
    expect(placed.hold).toMatchObject({
      counterAccount: CLEARING,
      amount: 4_000n,
      status: pb.HoldStatus.PENDING,
    });
    expect(placed.account!.availableAmount).toBe(6_000n);
    // Created on first use, like the other system accounts: may go negative, no running totals.
    const row = await h.sql.query(
      `SELECT kind, allow_negative, currency FROM accounts.ledger_accounts WHERE id = $1 AND platform_id = $2`,
      [`system:clearing:USD:${s.platformId}`, s.platformId],
    );
    expect(row.rows).toEqual([{ kind: 'SYSTEM', allow_negative: true, currency: 'USD' }]);
    expect((await h.client.getHold({ platformId: s.platformId, holdId })).hold!.counterAccount).toEqual(
      CLEARING,
    );
    expect(await systemBalance(s.platformId, 'clearing', 'USD')).toBe(0n);

    const posted = await h.client.postHold({
      platformId: s.platformId,
      holdId,
      postId: `capture:${holdId}`,
      amount: 3_000n,
    });
    expect(posted.hold).toMatchObject({
      status: pb.HoldStatus.POSTED,
      postedAmount: 3_000n,
      counterAccount: CLEARING,
    });
    expect([posted.account!.balance!.amount, posted.account!.availableAmount]).toEqual([7_000n, 7_000n]);
    // Captured and not yet applied: the money waits in CLEARING.
    expect(await systemBalance(s.platformId, 'clearing', 'USD')).toBe(3_000n);

    const voidedId = newId('JournalEntry');
    await clearingHold(s, voidedId, 2_000n);
    const voided = await h.client.voidHold({
      platformId: s.platformId,
      holdId: voidedId,
      voidId: `void:${voidedId}`,
    });
    expect(voided.hold).toMatchObject({ status: pb.HoldStatus.VOIDED, counterAccount: CLEARING });
    expect([voided.account!.balance!.amount, voided.account!.availableAmount]).toEqual([7_000n, 7_000n]);
    expect(await systemBalance(s.platformId, 'clearing', 'USD')).toBe(3_000n);

    const report = await h.client.reconcileLedger({ platformId: s.platformId });
    // USD: the customer's and the platform's accounts, SETTLEMENT and CLEARING.
    expect(report.currencies.find((c) => c.currency === 'USD')).toMatchObject({
      postedBalanceSum: 0n,
      lineSum: 0n,
      pendingDebits: 0n,
      pendingCredits: 0n,
      accountCount: 4,
    });
    await expectConsistent(s.platformId);
  });

  it('PostHold with an entry records both in one transaction: both or neither, a retry replays both', async () => {
    const s = await setup();
    const holdId = `quote:${newId('JournalEntry')}`;
    await clearingHold(s, holdId, 4_000n);
    const captureId = `capture:${holdId}`;
    // What payments' capture does: CLEARING pays the payee what the post of the hold brings in.
    const entry = {
      entryId: captureId,
      kind: 'QUOTE_CAPTURE',
      lines: [
        { account: CLEARING, currency: 'USD', amount: -4_000n },
        { account: { internalAccountId: s.platformAccountId }, currency: 'USD', amount: 4_000n },
      ],
    };
    const postId = `post:${holdId}`;
    const before = await counts(s.platformId);
    const pending = async () =>
      (await h.client.getHold({ platformId: s.platformId, holdId })).hold!.status === pb.HoldStatus.PENDING;

    // A bad entry names its field under `entry`; nothing is recorded.
    const bad = await rejection(() =>
      h.client.postHold({
        platformId: s.platformId,
        holdId,
        postId,
        entry: { ...entry, lines: entry.lines.slice(0, 1) },
      }),
    );
    expect([bad.code, bad.details]).toEqual([
      'INVALID_INPUT',
      {
        errors: [
          { field: 'entry.lines', message: 'needs at least two lines' },
          { field: 'entry.lines', message: 'do not sum to zero in USD' },
        ],
      },
    ]);
    // The entry refused (its id taken by another entry): the hold is not posted either.
    await h.client.postTransfer({
      platformId: s.platformId,
      entryId: `taken:${holdId}`,
      lines: [
        { account: SETTLEMENT, currency: 'USD', amount: -1n },
        { account: { internalAccountId: s.platformAccountId }, currency: 'USD', amount: 1n },
      ],
    });
    const afterTaken = await counts(s.platformId);
    const refused = await rejection(() =>
      h.client.postHold({
        platformId: s.platformId,
        holdId,
        postId,
        entry: { ...entry, entryId: `taken:${holdId}` },
      }),
    );
    expect(refused.code).toBe('JOURNAL_ENTRY_CONFLICT');
    expect(await counts(s.platformId)).toEqual(afterTaken);
    expect(afterTaken.entries).toBe(before.entries + 1);
    expect(await pending()).toBe(true);

    const posted = await h.client.postHold({ platformId: s.platformId, holdId, postId, entry });
    expect(posted.replayed).toBe(false);
    expect(posted.hold).toMatchObject({
      status: pb.HoldStatus.POSTED,
      postedAmount: 4_000n,
      resolutionId: postId,
    });
    expect(posted.account!.balance!.amount).toBe(6_000n);
    expect((await internalAccount(h, s.platformId, s.platformAccountId)).balance!.amount).toBe(4_001n);
    const afterPost = await counts(s.platformId);
    expect(afterPost.entries).toBe(afterTaken.entries + 2);
    const again = await h.client.postHold({ platformId: s.platformId, holdId, postId, entry });
    expect([again.replayed, again.hold]).toEqual([true, posted.hold]);
    expect(await counts(s.platformId)).toEqual(afterPost);

    // The post refused (the hold was voided): the entry is not recorded either.
    const voidedId = newId('JournalEntry');
    await clearingHold(s, voidedId, 1_000n);
    await h.client.voidHold({ platformId: s.platformId, holdId: voidedId, voidId: `void:${voidedId}` });
    const afterVoid = await counts(s.platformId);
    const late = await rejection(() =>
      h.client.postHold({
        platformId: s.platformId,
        holdId: voidedId,
        postId: `post:${voidedId}`,
        entry: { ...entry, entryId: `capture:${voidedId}` },
      }),
    );
    expect(late.code).toBe('JOURNAL_ENTRY_CONFLICT');
    expect(await counts(s.platformId)).toEqual(afterVoid);
    expect((await internalAccount(h, s.platformId, s.platformAccountId)).balance!.amount).toBe(4_001n);
    await expectConsistent(s.platformId);
  });

  it('PostTransfer lines on CLEARING: funding arrives, is paid out, comes back when returned and is refunded', async () => {
    const s = await setup();
    const base = newId('JournalEntry');
    const step = async (name: string, lines: pb.LedgerLine[], kind: string) =>
      h.client.postTransfer({ platformId: s.platformId, entryId: `${name}:${base}`, lines, kind });
    const funding: pb.LedgerLine[] = [
      { account: SETTLEMENT, currency: 'USD', amount: -1_000n },
      { account: CLEARING, currency: 'USD', amount: 1_000n },
    ];
    expect((await step('funding', funding, 'REALTIME_FUNDING')).replayed).toBe(false);
    expect((await step('funding', funding, 'REALTIME_FUNDING')).replayed).toBe(true);
    expect(await systemBalance(s.platformId, 'clearing', 'USD')).toBe(1_000n);

    await step(
      'payout',
      [
        { account: CLEARING, currency: 'USD', amount: -1_000n },
        { account: { systemAccount: pb.SystemAccount.FEES }, currency: 'USD', amount: 20n },
        { account: SETTLEMENT, currency: 'USD', amount: 980n },
      ],
      'PAYOUT',
    );
    expect(await systemBalance(s.platformId, 'clearing', 'USD')).toBe(0n);

    await step(
      'returned',
      [
        { account: SETTLEMENT, currency: 'USD', amount: -980n },
        { account: CLEARING, currency: 'USD', amount: 980n },
      ],
      'PAYOUT_RETURNED',
    );
    // Returned, not yet refunded: owed to the payer, in transit.
    expect(await systemBalance(s.platformId, 'clearing', 'USD')).toBe(980n);
    await expectConsistent(s.platformId);

    const refund = await step(
      'refund',
      [
        { account: CLEARING, currency: 'USD', amount: -980n },
        { account: { internalAccountId: s.accountId }, currency: 'USD', amount: 980n },
      ],
      'REFUND',
    );
    expect(refund.accounts.map((a) => [a.id, a.balance!.amount])).toEqual([[s.accountId, 10_980n]]);
    expect(await systemBalance(s.platformId, 'clearing', 'USD')).toBe(0n);
    expect(await systemBalance(s.platformId, 'fees', 'USD')).toBe(20n);

    // CLEARING is one account per currency: a line in each currency is two accounts.
    await step(
      'eur',
      [
        { account: CLEARING, currency: 'USD', amount: -5n },
        { account: { internalAccountId: s.accountId }, currency: 'USD', amount: 5n },
        { account: CLEARING, currency: 'EUR', amount: -4n },
        { account: { internalAccountId: s.eurAccountId }, currency: 'EUR', amount: 4n },
      ],
      'TRANSFER',
    );
    expect([
      await systemBalance(s.platformId, 'clearing', 'USD'),
      await systemBalance(s.platformId, 'clearing', 'EUR'),
    ]).toEqual([-5n, -4n]);
    const dup = await rejection(() =>
      step(
        'dup',
        [
          { account: CLEARING, currency: 'USD', amount: -5n },
          { account: CLEARING, currency: 'USD', amount: 5n },
        ],
        'TRANSFER',
      ),
    );
    expect(dup.details).toEqual({
      errors: [{ field: 'lines[1].account', message: 'appears in another line' }],
    });
    await expectConsistent(s.platformId);
  });

  /**
   * What each call sends to Postgres, by transaction (knex's `query` events; a transaction is a
   * connection's BEGIN … COMMIT, any other statement its own; the outbox relay's, which touch only
   * the outbox, left out): the first word of each statement.
   */
  async function statementsOf(call: () => Promise<unknown>): Promise<{ transaction: boolean; statements: string[] }[]> {
    const knex = h.running.deps.orm.em.getConnection().getKnex();
    const groups: { transaction: boolean; sql: string[] }[] = [];
    const open = new Map<string, { transaction: boolean; sql: string[] }>();
    const listen = (q: { sql: string; __knexUid: string }) => {
      const first = /^\s*(\w+)/.exec(q.sql)![1]!.toUpperCase();
      let group = open.get(q.__knexUid);
      if (!group) {
        group = { transaction: first === 'BEGIN', sql: [] };
        groups.push(group);
        if (group.transaction) open.set(q.__knexUid, group);
      }
      group.sql.push(q.sql);
      if (first === 'COMMIT' || first === 'ROLLBACK') open.delete(q.__knexUid);
    };
    knex.on('query', listen);
    try {
      await call();
    } finally {
      knex.removeListener('query', listen);
    }
    return groups
      .filter((g) => g.sql.some((sql) => /journal_|ledger_accounts|internal_accounts|external_accounts/.test(sql)))
      .map((g) => ({
        transaction: g.transaction,
        statements: g.sql.map((sql) => /^\s*(\w+)/.exec(sql)![1]!.toUpperCase()),
      }));
  }

  it('a payment\'s calls: GetExternalAccount and a new hold are one statement each, no transaction; PostHold with its capture one transaction of three statements', async () => {
    const { platformId, accountId, payee } = await fundedPayer();
    const one = [{ transaction: false, statements: expect.any(Array) }];

    const read = await statementsOf(() => h.client.getExternalAccount({ platformId, accountId: payee!.id }));
    expect(read).toEqual([{ transaction: false, statements: ['SELECT'] }]);

    const holdId = `quote:${newId('JournalEntry')}`;
    const place = () =>
      h.client.placeHold({
        platformId,
        holdId,
        accountId,
        amount: 1_000n,
        currency: 'USD',
        counterAccount: CLEARING,
        kind: 'QUOTE_EXECUTION',
        payeeExternalAccountId: payee!.id,
      });
    let placed: pb.PlaceHoldResponse | undefined;
    // The payee's read, the checks, CLEARING on first use, the entry, its lines and the account's totals.
    expect(await statementsOf(async () => (placed = await place()))).toEqual([
      { transaction: false, statements: ['WITH'] },
    ]);
    expect(placed!.replayed).toBe(false);
    expect(placed!.payeeExternalAccount!.id).toBe(payee!.id);
    // A retry is not placed by that statement: the transaction answers it, as before.
    const again = await statementsOf(async () => expect((await place()).replayed).toBe(true));
    expect(again).toEqual([...one, { transaction: true, statements: expect.any(Array) }]);

    const entry = {
      entryId: `capture:${holdId}`,
      kind: 'QUOTE_CAPTURE',
      lines: [
        { account: CLEARING, currency: 'USD', amount: -1_000n },
        { account: { systemAccount: pb.SystemAccount.FEES }, currency: 'USD', amount: 10n },
        { account: { systemAccount: pb.SystemAccount.FX }, currency: 'USD', amount: 990n },
        { account: { systemAccount: pb.SystemAccount.FX }, currency: 'NGN', amount: -1_500_000n },
        { account: SETTLEMENT, currency: 'NGN', amount: 1_500_000n },
      ],
    };
    // The capture entry (its system accounts on first use), the hold, its post with the payer's
    // totals; the payer's balance event goes in the COMMIT's round trip (writeAtCommit).
    const posted = await statementsOf(() =>
      h.client.postHold({ platformId, holdId, postId: `post:${holdId}`, entry }),
    );
    expect(posted).toEqual([{ transaction: true, statements: ['BEGIN', 'WITH', 'SELECT', 'WITH', 'COMMIT'] }]);
    expect((await internalAccount(h, platformId, accountId)).balance!.amount).toBe(9_000n);
    expect((await balanceEvents(h, accountId)).at(-1)!.data).toMatchObject({ balance: { amount: 9_000 } });
    await expectConsistent(platformId);
  });
});

describe('ReconcileLedger', () => {
  it('reports per-currency sums and any account whose running totals drifted from its lines', async () => {
    const s = await setup();
    await h.client.placeHold({
      platformId: s.platformId,
      holdId: newId('JournalEntry'),
      accountId: s.accountId,
      amount: 300n,
      currency: 'USD',
      counterAccount: SETTLEMENT,
    });
    const ok = await h.client.reconcileLedger({ platformId: s.platformId });
    expect(ok.consistent).toBe(true);
    expect(ok.currencies.find((c) => c.currency === 'USD')).toMatchObject({
      postedBalanceSum: 0n,
      lineSum: 0n,
      pendingDebits: 300n,
      pendingCredits: 300n,
    });
    await h.sql.query(
      `UPDATE accounts.ledger_accounts SET pending_debits = pending_debits - 1 WHERE id = $1`,
      [s.accountId],
    );
    try {
      const bad = await h.client.reconcileLedger({ platformId: s.platformId });
      expect(bad.consistent).toBe(false);
      expect(
        bad.mismatches.map((m) => [m.ledgerAccountId, m.stored!.pendingDebits, m.derived!.pendingDebits]),
      ).toEqual([[s.accountId, 299n, 300n]]);
    } finally {
      await h.sql.query(
        `UPDATE accounts.ledger_accounts SET pending_debits = pending_debits + 1 WHERE id = $1`,
        [s.accountId],
      );
    }
    const bad = await rejection(() => h.client.reconcileLedger({ platformId: '' }));
    expect(bad.details).toEqual({ errors: [{ field: 'platformId', message: 'is required' }] });
  });
});
