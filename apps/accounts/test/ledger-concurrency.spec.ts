import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accounts as pb } from '@sluice/contracts';
import { newId } from '@sluice/core';
import { rejection, SANDBOX, startHarness, type Harness } from './support/harness.js';
import { fundedAccount, internalAccount, SETTLEMENT } from './support/ledger.js';

/**
 * The two-phase ledger under concurrency, through real gRPC against real Postgres:
 * the database (not Node) refuses holds beyond the available balance, and a hold is
 * resolved exactly once whatever the interleaving of posts, voids and retries.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness('accledgerconc');
});
afterAll(async () => {
  await h?.stop();
});

const AMOUNT = 1_000n;

/**
 * Every invariant of the ledger, for the whole database and through the ReconcileLedger RPC.
 * The sum over all accounts per currency takes internal accounts' running totals and
 * system accounts' posted lines (system accounts keep no running totals).
 */
async function expectInvariants(platformId: string): Promise<void> {
  const report = await h.client.reconcileLedger({ platformId });
  expect(report.mismatches).toEqual([]);
  expect(report.unbalancedEntryIds).toEqual([]);
  for (const c of report.currencies) {
    expect([c.currency, c.postedBalanceSum, c.lineSum]).toEqual([c.currency, 0n, 0n]);
    expect(c.pendingDebits).toBe(c.pendingCredits);
  }
  expect(report.consistent).toBe(true);
  const q = await h.sql.query(`SELECT
      (SELECT count(*)::int FROM (SELECT 1 FROM accounts.journal_lines GROUP BY platform_id, entry_id, currency HAVING sum(amount) <> 0) u) AS unbalanced,
      (SELECT count(*)::int FROM (
         SELECT currency FROM (
           SELECT currency, posted_credits - posted_debits AS b FROM accounts.ledger_accounts WHERE kind = 'INTERNAL'
           UNION ALL
           SELECT l.currency, l.amount FROM accounts.journal_lines l
           JOIN accounts.journal_entries e ON e.platform_id = l.platform_id AND e.id = l.entry_id
           WHERE l.account_id LIKE 'system:%' AND e.phase IN ('POSTED', 'POST_PENDING')) x
         GROUP BY currency HAVING sum(b) <> 0) z) AS nonzero,
      (SELECT count(*)::int FROM accounts.ledger_accounts WHERE NOT allow_negative AND posted_credits - posted_debits - pending_debits < 0) AS overdrawn`);
  expect(q.rows[0]).toEqual({ unbalanced: 0, nonzero: 0, overdrawn: 0 });
}

/** What a refused call came back with: `KIND/CODE` of a domain error, else the transport status and message. */
function refusal(e: unknown): string {
  const d = e as { kind?: string; code?: string; grpcCode?: number; message?: string; details?: unknown };
  if (d.kind && d.code) return `${d.kind}/${d.code}`;
  return `gRPC status ${d.grpcCode ?? '?'}: ${d.message ?? String(e)}`;
}

describe('200 concurrent holds against one account funded for 100', () => {
  let platformId: string;
  let accountId: string;
  const placed: string[] = [];

  it('exactly 100 succeed, the rest are INSUFFICIENT_FUNDS, available never below zero', async () => {
    ({ platformId, accountId } = await fundedAccount(h, 100n * AMOUNT));
    const ids = Array.from({ length: 200 }, (_, i) => `hold:${i}:${newId('JournalEntry')}`);
    const results = await Promise.allSettled(
      ids.map((holdId) =>
        h.client.placeHold({
          platformId,
          holdId,
          accountId,
          amount: AMOUNT,
          currency: 'USD',
          counterAccount: SETTLEMENT,
          kind: 'TRANSFER_OUT',
        }),
      ),
    );
    const ok = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ id: ids[i]!, r: r.value }] : []));
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [refusal(r.reason)] : []));
    expect(new Set(refused)).toEqual(new Set(['FAILED_PRECONDITION/INSUFFICIENT_FUNDS']));
    expect(ok).toHaveLength(100);
    expect(refused).toHaveLength(100);
    for (const { r } of ok) {
      expect(r.replayed).toBe(false);
      expect(r.hold!.status).toBe(pb.HoldStatus.PENDING);
      expect(r.account!.availableAmount).toBeGreaterThanOrEqual(0n);
    }
    // Each success saw a distinct available balance: the holds were serialized by the database.
    expect(new Set(ok.map(({ r }) => r.account!.availableAmount)).size).toBe(100);
    placed.push(...ok.map(({ id }) => id));
    const a = await internalAccount(h, platformId, accountId);
    expect([a.balance!.amount, a.availableAmount]).toEqual([100n * AMOUNT, 0n]);
    const entries = await h.sql.query(
      `SELECT count(*)::int AS n FROM accounts.journal_entries WHERE platform_id = $1 AND phase = 'PENDING'`,
      [platformId],
    );
    expect(entries.rows[0].n).toBe(100);
    await expectInvariants(platformId);
  });

  it('posts and voids racing with duplicate retries and competing resolutions resolve each hold exactly once', async () => {
    expect(placed).toHaveLength(100);
    type Attempt = { holdId: string; resolutionId: string; run: () => Promise<pb.PostHoldResponse> };
    const attempts: Attempt[] = [];
    placed.forEach((holdId, i) => {
      const post = i < 50;
      const resolutionId = `${post ? 'post' : 'void'}:${holdId}`;
      // Partial posts for some: the rest of the hold is released.
      const amount = i % 5 === 0 ? 600n : undefined;
      const run = post
        ? () => h.client.postHold({ platformId, holdId, postId: resolutionId, ...(amount ? { amount } : {}) })
        : () => h.client.voidHold({ platformId, holdId, voidId: resolutionId });
      for (let k = 0; k < 3; k++) attempts.push({ holdId, resolutionId, run });
      if (i % 10 === 3) {
        // A competing resolution of the opposite kind under another id.
        const otherId = `${post ? 'void' : 'post'}:rival:${holdId}`;
        attempts.push({
          holdId,
          resolutionId: otherId,
          run: post
            ? () => h.client.voidHold({ platformId, holdId, voidId: otherId })
            : () => h.client.postHold({ platformId, holdId, postId: otherId }),
        });
      }
    });
    attempts.sort(() => Math.random() - 0.5);
    const results = await Promise.allSettled(attempts.map((a) => a.run()));

    const winner = new Map<string, string>();
    const fresh = new Map<string, number>();
    results.forEach((r, i) => {
      const a = attempts[i]!;
      if (r.status === 'rejected') {
        expect(refusal(r.reason), `${a.resolutionId}: ${JSON.stringify(r.reason)}`).toMatch(
          /\/JOURNAL_ENTRY_CONFLICT$/,
        );
        return;
      }
      const hold = r.value.hold!;
      expect(hold.resolutionId).toBe(a.resolutionId);
      const w = winner.get(a.holdId);
      if (w) expect(w).toBe(a.resolutionId);
      winner.set(a.holdId, a.resolutionId);
      if (!r.value.replayed) fresh.set(a.holdId, (fresh.get(a.holdId) ?? 0) + 1);
    });
    expect(winner.size).toBe(100);
    for (const id of placed) expect(fresh.get(id)).toBe(1);

    // In the journal: one resolution per hold, and it is the winner's.
    const resolutions = await h.sql.query(
      `SELECT pending_entry_id, id FROM accounts.journal_entries WHERE platform_id = $1 AND pending_entry_id IS NOT NULL`,
      [platformId],
    );
    expect(resolutions.rows).toHaveLength(100);
    for (const row of resolutions.rows) expect(winner.get(row.pending_entry_id)).toBe(row.id);

    // The balance moved by exactly the posted amounts; no hold is left pending.
    let posted = 0n;
    for (const id of placed) {
      const { hold } = await h.client.getHold({ platformId, holdId: id });
      expect(hold!.resolutionId).toBe(winner.get(id));
      if (hold!.status === pb.HoldStatus.POSTED) posted += hold!.postedAmount!;
      else expect(hold!.status).toBe(pb.HoldStatus.VOIDED);
    }
    expect(posted).toBeGreaterThan(0n);
    const a = await internalAccount(h, platformId, accountId);
    expect(a.balance!.amount).toBe(100n * AMOUNT - posted);
    expect(a.availableAmount).toBe(a.balance!.amount);
    // One balance event per posted hold (plus the funding), none for holds or voids.
    const events = await h.sql.query(
      `SELECT count(*)::int AS n FROM accounts.outbox WHERE type = 'INTERNAL_ACCOUNT.BALANCE_UPDATED' AND envelope->'data'->>'id' = $1`,
      [accountId],
    );
    const postedCount = [...winner.values()].filter((w) => w.startsWith('post:')).length;
    expect(events.rows[0].n).toBe(1 + postedCount);
    await expectInvariants(platformId);
  });
});

describe('one id, many concurrent calls', () => {
  // Each platform is new, so the 20 placements also race to create its SETTLEMENT system account (see
  // ledger-insert-races.spec.ts for the interleaving that once made one of them INTERNAL).
  it('the same hold placed 20 times concurrently is one hold; 20 concurrent posts with one id post once', async () => {
    const { platformId, accountId } = await fundedAccount(h, 10n * AMOUNT);
    const holdId = `hold:${newId('JournalEntry')}`;
    const place = () =>
      h.client.placeHold({
        platformId,
        holdId,
        accountId,
        amount: 3n * AMOUNT,
        currency: 'USD',
        counterAccount: SETTLEMENT,
      });
    const placedAll = await Promise.all(Array.from({ length: 20 }, place));
    expect(placedAll.filter((r) => !r.replayed)).toHaveLength(1);
    for (const r of placedAll) expect(r.hold).toMatchObject({ id: holdId, amount: 3n * AMOUNT });
    expect((await internalAccount(h, platformId, accountId)).availableAmount).toBe(7n * AMOUNT);

    const postId = `post:${holdId}`;
    const posts = await Promise.all(
      Array.from({ length: 20 }, () => h.client.postHold({ platformId, holdId, postId })),
    );
    expect(posts.filter((r) => !r.replayed)).toHaveLength(1);
    for (const r of posts)
      expect(r.hold).toMatchObject({ status: pb.HoldStatus.POSTED, postedAmount: 3n * AMOUNT });
    const a = await internalAccount(h, platformId, accountId);
    expect([a.balance!.amount, a.availableAmount]).toEqual([7n * AMOUNT, 7n * AMOUNT]);
    const n = await h.sql.query(
      `SELECT count(*)::int AS n FROM accounts.journal_entries WHERE platform_id = $1`,
      [platformId],
    );
    expect(n.rows[0].n).toBe(3); // funding, hold, post
    await expectInvariants(platformId);
  });

  it('concurrent immediate transfers out never overdraw; holds and transfers share the same guard', async () => {
    const { platformId, accountId } = await fundedAccount(h, 20n * AMOUNT);
    await h.client.placeHold({
      platformId,
      holdId: `hold:${newId('JournalEntry')}`,
      accountId,
      amount: 5n * AMOUNT,
      currency: 'USD',
      counterAccount: SETTLEMENT,
    });
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, () =>
        h.client.postTransfer({
          platformId,
          entryId: newId('JournalEntry'),
          kind: 'TRANSFER_OUT',
          lines: [
            { account: { internalAccountId: accountId }, currency: 'USD', amount: -AMOUNT },
            { account: SETTLEMENT, currency: 'USD', amount: AMOUNT },
          ],
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(15);
    for (const r of results)
      if (r.status === 'rejected') expect(refusal(r.reason)).toBe('FAILED_PRECONDITION/INSUFFICIENT_FUNDS');
    const a = await internalAccount(h, platformId, accountId);
    expect([a.balance!.amount, a.availableAmount]).toEqual([5n * AMOUNT, 0n]);
    const e = await rejection(() =>
      h.client.placeHold({
        platformId,
        holdId: newId('JournalEntry'),
        accountId,
        amount: 1n,
        currency: 'USD',
        counterAccount: SETTLEMENT,
      }),
    );
    expect(e.code).toBe('INSUFFICIENT_FUNDS');
    await expectInvariants(platformId);
  });
});

describe('crossing movements', () => {
  it('holds and posts in opposite directions between two accounts run concurrently without deadlock or drift', async () => {
    const { platformId, accountId: a } = await fundedAccount(h, 100n * AMOUNT);
    const { accounts } = await h.client.ensureCustomerAccounts({
      platformId,
      customerId: newId('Customer'),
      currencies: ['USD'],
      environment: SANDBOX,
    });
    const b = accounts[0]!.id;
    await h.client.sandboxFund({ platformId, accountId: b, amount: 100n * AMOUNT });
    const holds = Array.from({ length: 60 }, (_, i) => ({
      holdId: `x:${i}:${newId('JournalEntry')}`,
      from: i % 2 ? a : b,
      to: i % 2 ? b : a,
    }));
    await Promise.all(
      holds.map((x) =>
        h.client.placeHold({
          platformId,
          holdId: x.holdId,
          accountId: x.from,
          amount: AMOUNT,
          currency: 'USD',
          counterAccount: { internalAccountId: x.to },
        }),
      ),
    );
    await Promise.all(
      holds.map((x) => h.client.postHold({ platformId, holdId: x.holdId, postId: `post:${x.holdId}` })),
    );
    // 30 each way: both balances are back where they started, nothing pending.
    for (const id of [a, b]) {
      const acc = await internalAccount(h, platformId, id);
      expect([acc.balance!.amount, acc.availableAmount]).toEqual([100n * AMOUNT, 100n * AMOUNT]);
    }
    await expectInvariants(platformId);
  });
});
