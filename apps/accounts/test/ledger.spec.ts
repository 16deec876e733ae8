import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accounts as pb } from '@sluice/contracts';
import { newId } from '@sluice/core';
import { streamName, type EventEnvelope } from '@sluice/events';
import { eventually } from '@sluice/testing';
import { transactional, type MikroORM } from '@sluice/store';
import { withLedgerErrors } from '../src/app/ledger.service.js';
import { LedgerRepository } from '../src/store/ledger.repository.js';
import { sandboxFundingAccountId, type JournalEntry } from '../src/domain/ledger.js';
import { PRODUCTION, rejection, SANDBOX, startHarness, type Harness } from './support/harness.js';
import { balanceEvents } from './support/ledger.js';

let h: Harness;
let orm: MikroORM;
const ledgerRepo = new LedgerRepository();

beforeAll(async () => {
  h = await startHarness('accledger');
  orm = h.running.deps.orm;
});
afterAll(async () => {
  await h?.stop();
});

async function newAccount(
  currency = 'USD',
  platform?: string,
): Promise<{ platformId: string; account: pb.InternalAccount }> {
  const platformId = platform ?? (await h.platform());
  const { accounts } = await h.client.ensureCustomerAccounts({
    platformId,
    customerId: newId('Customer'),
    currencies: [currency],
    environment: SANDBOX,
  });
  return { platformId, account: accounts[0]! };
}

async function balanceOf(platformId: string, accountId: string): Promise<bigint> {
  return (await h.client.getInternalAccount({ platformId, accountId })).account!.balance!.amount;
}

async function journalCounts(): Promise<{ entries: number; lines: number; events: number }> {
  const r = await h.sql.query(`SELECT
      (SELECT count(*)::int FROM accounts.journal_entries) AS entries,
      (SELECT count(*)::int FROM accounts.journal_lines) AS lines,
      (SELECT count(*)::int FROM accounts.outbox) AS events`);
  return r.rows[0];
}

async function expectInvariants(): Promise<void> {
  const em = orm.em.fork();
  expect(await ledgerRepo.unbalancedEntries(em)).toEqual([]);
  expect(await ledgerRepo.reconcile(em)).toEqual([]);
  for (const t of await ledgerRepo.currencyTotals(em))
    expect([t.currency, t.balances, t.lines]).toEqual([t.currency, 0n, 0n]);
}

describe('SandboxFund', () => {
  it('credits the account with one balanced entry and returns the updated account', async () => {
    const { platformId, account } = await newAccount('USD');
    await new Promise((r) => setTimeout(r, 5));
    const r = await h.client.sandboxFund({ platformId, accountId: account.id, amount: 100_000n });
    expect(r.replayed).toBe(false);
    expect(r.entryId).toMatch(/^JournalEntry:/);
    expect(r.account!.balance!.amount).toBe(100_000n);
    expect(r.account!.availableAmount).toBe(100_000n);
    expect(r.account!.updatedAt!.getTime()).toBeGreaterThan(account.updatedAt!.getTime());
    expect(await balanceOf(platformId, account.id)).toBe(100_000n);
    const lines = await h.sql.query(
      `SELECT account_id, currency, amount FROM accounts.journal_lines WHERE entry_id = $1 ORDER BY line_no`,
      [r.entryId],
    );
    expect(lines.rows).toEqual([
      { account_id: account.id, currency: 'USD', amount: '100000' },
      { account_id: sandboxFundingAccountId(platformId, 'USD'), currency: 'USD', amount: '-100000' },
    ]);
    await h.client.sandboxFund({ platformId, accountId: account.id, amount: 1n });
    expect(await balanceOf(platformId, account.id)).toBe(100_001n);
    await expectInvariants();
  });

  it('writes INTERNAL_ACCOUNT.BALANCE_UPDATED with the public InternalAccount in the same transaction, and the relay publishes it', async () => {
    const { platformId, account } = await newAccount('EUR');
    const r = await h.client.sandboxFund({ platformId, accountId: account.id, amount: 2_500n });
    const events = await balanceEvents(h, account.id);
    expect(events).toHaveLength(1);
    const e = events[0]!;
    expect(e.type).toBe('INTERNAL_ACCOUNT.BALANCE_UPDATED');
    expect(e.platformId).toBe(platformId);
    const a = r.account!;
    expect(e.data).toEqual({
      id: a.id,
      customerId: a.customerId,
      type: 'INTERNAL_FIAT',
      balance: { amount: 2500, currency: { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 } },
      fundingPaymentInstructions: [
        {
          accountOrWalletInfo: {
            accountType: 'EUR_ACCOUNT',
            iban: a.fundingPaymentInstructions[0]!.accountOrWalletInfo!.iban,
            swiftCode: a.fundingPaymentInstructions[0]!.accountOrWalletInfo!.swiftCode,
            paymentRails: ['SEPA', 'SEPA_INSTANT'],
            reference: a.fundingReference,
          },
          instructionsNotes: a.fundingPaymentInstructions[0]!.instructionsNotes,
          isPlatformAccount: false,
        },
      ],
      createdAt: a.createdAt!.toISOString(),
      updatedAt: a.updatedAt!.toISOString(),
    });

    const consumer = await h.running.deps.bus.js.consumers.get(streamName(h.prefix, 'accounts'));
    const published = await eventually(async () => {
      const m = await consumer.next({ expires: 1000 });
      return m && m.json<EventEnvelope>().id === e.id ? m : undefined;
    }, 15_000);
    expect(published.subject).toBe(`${h.prefix}.accounts.internal_account.balance_updated`);
    expect(published.headers?.get('Nats-Msg-Id')).toBe(e.id);
  });

  it('a retried entry id is a no-op; the same id with other content is a conflict', async () => {
    const { platformId, account } = await newAccount('USD');
    const entryId = `test:${newId('JournalEntry')}`;
    const first = await h.client.sandboxFund({ platformId, accountId: account.id, amount: 700n, entryId });
    const before = await journalCounts();
    const again = await h.client.sandboxFund({ platformId, accountId: account.id, amount: 700n, entryId });
    expect(again).toMatchObject({ entryId, replayed: true });
    expect(again.account!.balance!.amount).toBe(700n);
    expect(first.replayed).toBe(false);
    const concurrent = await Promise.all(
      Array.from({ length: 10 }, () =>
        h.client.sandboxFund({ platformId, accountId: account.id, amount: 700n, entryId }),
      ),
    );
    expect(concurrent.every((c) => c.replayed)).toBe(true);
    expect(await journalCounts()).toEqual(before);
    expect(await balanceOf(platformId, account.id)).toBe(700n);
    expect(await balanceEvents(h, account.id)).toHaveLength(1);

    const conflict = await rejection(() =>
      h.client.sandboxFund({ platformId, accountId: account.id, amount: 701n, entryId }),
    );
    expect([conflict.kind, conflict.code]).toEqual(['ALREADY_EXISTS', 'JOURNAL_ENTRY_CONFLICT']);
    expect(await journalCounts()).toEqual(before);

    // Entry ids are scoped to the platform: another platform may use the same one.
    const other = await newAccount('USD');
    const theirs = await h.client.sandboxFund({
      platformId: other.platformId,
      accountId: other.account.id,
      amount: 5n,
      entryId,
    });
    expect(theirs.replayed).toBe(false);
  });

  it('50 concurrent fundings add up exactly', async () => {
    const { platformId, account } = await newAccount('USDC');
    const amounts = Array.from({ length: 50 }, (_, i) => BigInt(1_000_000 * (i + 1) + i));
    const results = await Promise.all(
      amounts.map((amount) => h.client.sandboxFund({ platformId, accountId: account.id, amount })),
    );
    const total = amounts.reduce((s, a) => s + a, 0n);
    expect(results.every((r) => !r.replayed)).toBe(true);
    expect(await balanceOf(platformId, account.id)).toBe(total);
    const events = await balanceEvents(h, account.id);
    expect(events).toHaveLength(50);
    // Each event carries the balance right after its own entry: all distinct, the last one the total.
    const seen = events
      .map((e) => BigInt((e.data as { balance: { amount: number } }).balance.amount))
      .sort((a, b) => (a < b ? -1 : 1));
    expect(new Set(seen).size).toBe(50);
    expect(seen[49]).toBe(total);
    await expectInvariants();
  });

  it('rejects bad amounts and changes nothing', async () => {
    const { platformId, account } = await newAccount('USD');
    await h.client.sandboxFund({ platformId, accountId: account.id, amount: 10n });
    const before = await journalCounts();
    for (const [amount, message] of [
      [0n, 'must be greater than 0'],
      [-5n, 'must be greater than 0'],
      [9_000_000_000_000_001n, 'must be at most 9000000000000000'],
    ] as const) {
      const e = await rejection(() => h.client.sandboxFund({ platformId, accountId: account.id, amount }));
      expect(e.code).toBe('INVALID_INPUT');
      expect(e.details).toEqual({ errors: [{ field: 'amount', message }] });
    }
    const badEntry = await rejection(() =>
      h.client.sandboxFund({ platformId, accountId: account.id, amount: 1n, entryId: 'no spaces allowed' }),
    );
    expect((badEntry.details!.errors as { field: string }[])[0]!.field).toBe('entryId');
    expect(await journalCounts()).toEqual(before);
    expect(await balanceOf(platformId, account.id)).toBe(10n);
  });

  it('refuses a balance above the limit and changes nothing', async () => {
    const { platformId, account } = await newAccount('USD');
    await h.client.sandboxFund({ platformId, accountId: account.id, amount: 9_000_000_000_000_000n });
    const before = await journalCounts();
    const e = await rejection(() => h.client.sandboxFund({ platformId, accountId: account.id, amount: 1n }));
    expect([e.kind, e.code]).toEqual(['FAILED_PRECONDITION', 'BALANCE_LIMIT_EXCEEDED']);
    expect(await journalCounts()).toEqual(before);
    expect(await balanceOf(platformId, account.id)).toBe(9_000_000_000_000_000n);
  });

  it('another platform’s account is NOT_FOUND; a production account is SANDBOX_ONLY', async () => {
    const { account } = await newAccount('USD');
    const otherPlatform = await h.platform();
    const before = await journalCounts();
    const cross = await rejection(() =>
      h.client.sandboxFund({ platformId: otherPlatform, accountId: account.id, amount: 5n }),
    );
    expect([cross.kind, cross.code]).toEqual(['NOT_FOUND', 'INTERNAL_ACCOUNT_NOT_FOUND']);
    const missing = await rejection(() =>
      h.client.sandboxFund({ platformId: otherPlatform, accountId: newId('InternalAccount'), amount: 5n }),
    );
    expect(missing.code).toBe('INTERNAL_ACCOUNT_NOT_FOUND');

    const prodPlatform = await h.platform('PRODUCTION');
    const { accounts } = await h.client.ensureCustomerAccounts({
      platformId: prodPlatform,
      customerId: newId('Customer'),
      currencies: ['USD'],
      environment: PRODUCTION,
    });
    const prod = await rejection(() =>
      h.client.sandboxFund({ platformId: prodPlatform, accountId: accounts[0]!.id, amount: 5n }),
    );
    expect([prod.kind, prod.code]).toEqual(['PERMISSION_DENIED', 'SANDBOX_ONLY']);
    expect(await journalCounts()).toEqual(before);
  });
});

describe('ledger guarantees in the database', () => {
  it('refuses an unbalanced entry at commit', async () => {
    const { platformId, account } = await newAccount('USD');
    const client = await h.sql.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO accounts.journal_entries (platform_id, id, kind, phase, fingerprint) VALUES ($1, 'bad', 'TEST', 'POSTED', 'x')`,
        [platformId],
      );
      await client.query(
        `INSERT INTO accounts.journal_lines (platform_id, entry_id, line_no, account_id, currency, amount) VALUES ($1, 'bad', 1, $2, 'USD', 5)`,
        [platformId, account.id],
      );
      await expect(client.query('COMMIT')).rejects.toThrow(/does not balance/);
    } finally {
      client.release();
    }
    const r = await h.sql.query(`SELECT count(*)::int AS n FROM accounts.journal_entries WHERE id = 'bad'`);
    expect(r.rows[0].n).toBe(0);
  });

  it('refuses lines in a currency other than the account’s, or on another platform’s account', async () => {
    const { platformId, account } = await newAccount('USD');
    const other = await newAccount('USD');
    const service = h.running.graph.ledger;
    const entry = (lines: JournalEntry['lines']): JournalEntry => ({
      id: newId('JournalEntry'),
      platformId,
      kind: 'TEST',
      phase: 'POSTED',
      lines,
    });
    // System accounts are created by the first entry that names them.
    const world = (cur: string) => sandboxFundingAccountId(platformId, cur);
    const wrongCurrency = transactional(orm, (em) =>
      service.recordIn(
        em,
        entry([
          { accountId: account.id, currency: 'EUR', amount: 5n },
          { accountId: world('EUR'), currency: 'EUR', amount: -5n },
        ]),
      ),
    );
    await expect(wrongCurrency).rejects.toThrow(/journal_lines_account_fk/);
    const otherPlatform = transactional(orm, (em) =>
      service.recordIn(
        em,
        entry([
          { accountId: other.account.id, currency: 'USD', amount: 5n },
          { accountId: world('USD'), currency: 'USD', amount: -5n },
        ]),
      ),
    );
    await expect(otherPlatform).rejects.toThrow(/journal_lines_account_fk/);
    expect(await balanceOf(other.platformId, other.account.id)).toBe(0n);
    expect(await balanceOf(platformId, account.id)).toBe(0n);
  });

  it('the journal is append-only', async () => {
    const { platformId, account } = await newAccount('USD');
    const { entryId } = await h.client.sandboxFund({ platformId, accountId: account.id, amount: 5n });
    await expect(
      h.sql.query(`UPDATE accounts.journal_lines SET amount = amount * 2 WHERE entry_id = $1`, [entryId]),
    ).rejects.toThrow(/append-only/);
    await expect(
      h.sql.query(`DELETE FROM accounts.journal_entries WHERE id = $1`, [entryId]),
    ).rejects.toThrow(/append-only/);
  });

  it('running totals can only come from lines: a drift is reported by reconcile', async () => {
    const { platformId, account } = await newAccount('USD');
    await h.client.sandboxFund({ platformId, accountId: account.id, amount: 5n });
    const em = orm.em.fork();
    expect(await ledgerRepo.reconcile(em, platformId)).toEqual([]);
    await h.sql.query(
      `UPDATE accounts.ledger_accounts SET posted_credits = posted_credits + 1 WHERE id = $1`,
      [account.id],
    );
    const drift = await ledgerRepo.reconcile(orm.em.fork(), platformId);
    expect(drift.map((d) => [d.accountId, d.stored.postedCredits, d.derived.postedCredits])).toEqual([
      [account.id, 6n, 5n],
    ]);
    await h.sql.query(
      `UPDATE accounts.ledger_accounts SET posted_credits = posted_credits - 1 WHERE id = $1`,
      [account.id],
    );
  });
});

describe('two-phase holds (the shape issue 3 builds on)', () => {
  it('a hold lowers the available balance, is refused beyond it, and is posted or voided exactly once', async () => {
    const { platformId, account } = await newAccount('USD');
    const platformAccounts = await h.client.ensurePlatformAccounts({
      platformId,
      currencies: ['USD'],
      environment: SANDBOX,
    });
    const dest = platformAccounts.accounts[0]!.id;
    await h.client.sandboxFund({ platformId, accountId: account.id, amount: 1_000n });
    const service = h.running.graph.ledger;
    const record = (e: JournalEntry) =>
      withLedgerErrors(() => transactional(orm, (em) => service.recordIn(em, e)));
    const transfer = (amount: bigint) => [
      { accountId: account.id, currency: 'USD', amount: -amount },
      { accountId: dest, currency: 'USD', amount },
    ];
    const available = async () =>
      (await h.client.getInternalAccount({ platformId, accountId: account.id })).account!;

    await record({ id: 'hold-1', platformId, kind: 'TEST', phase: 'PENDING', lines: transfer(600n) });
    expect((await available()).availableAmount).toBe(400n);
    expect((await available()).balance!.amount).toBe(1_000n);

    const tooMuch = await rejection(() =>
      record({ id: 'hold-2', platformId, kind: 'TEST', phase: 'PENDING', lines: transfer(401n) }),
    );
    expect(tooMuch.code).toBe('INSUFFICIENT_FUNDS');

    await record({
      id: 'post-1',
      platformId,
      kind: 'TEST',
      phase: 'POST_PENDING',
      pendingEntryId: 'hold-1',
      lines: transfer(500n),
    });
    expect((await available()).balance!.amount).toBe(500n);
    expect((await available()).availableAmount).toBe(500n);
    const twice = await rejection(() =>
      record({
        id: 'void-1',
        platformId,
        kind: 'TEST',
        phase: 'VOID_PENDING',
        pendingEntryId: 'hold-1',
        lines: [],
      }),
    );
    expect(twice.code).toBe('JOURNAL_ENTRY_CONFLICT');

    await record({ id: 'hold-3', platformId, kind: 'TEST', phase: 'PENDING', lines: transfer(500n) });
    expect((await available()).availableAmount).toBe(0n);
    await record({
      id: 'void-3',
      platformId,
      kind: 'TEST',
      phase: 'VOID_PENDING',
      pendingEntryId: 'hold-3',
      lines: [],
    });
    expect((await available()).availableAmount).toBe(500n);
    const overdraft = await rejection(() =>
      record({ id: 'pay-4', platformId, kind: 'TEST', phase: 'POSTED', lines: transfer(501n) }),
    );
    expect(overdraft.code).toBe('INSUFFICIENT_FUNDS');
    expect(
      (await h.client.getInternalAccount({ platformId, accountId: dest })).account!.balance!.amount,
    ).toBe(500n);
    await expectInvariants();
  });
});
