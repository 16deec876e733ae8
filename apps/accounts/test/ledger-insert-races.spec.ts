import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { accounts as pb } from '@sluice/contracts';
import { newId } from '@sluice/core';
import { eventually } from '@sluice/testing';
import { rejection, startHarness, type Harness } from './support/harness.js';
import { fundedAccount, SETTLEMENT } from './support/ledger.js';

/**
 * Deterministic replays of the one interleaving behind the rare INTERNAL of concurrent
 * same-id ledger calls: two transactions insert the same row with
 * `INSERT ... ON CONFLICT DO NOTHING` and both get past the conflict check before
 * either row is in every unique index. Postgres checks `ON CONFLICT` only against its
 * arbiter indexes; when the statement named a conflict target, every other unique index
 * of the table was checked the ordinary way and the loser failed with 23505 (on
 * `ledger_accounts_id_platform_currency` when a system account is created on first use,
 * on `journal_entries_resolve_once` for two posts with one id) instead of doing nothing.
 *
 * The window lies inside one INSERT, so this file (its own database) reshapes that
 * database only: a "gate" expression index, ordered (by OID) after the other unique
 * index and before the primary key, makes the first transaction to index a gated key
 * wait on an advisory lock that the test holds. So the first inserter stops after its
 * row is in the other unique index and before it is in the primary key; the second
 * then comes in; the test sees both waiting in Postgres and opens the gate. Nothing in
 * the service's code knows about the gate.
 */

let h: Harness;
/** Holds the gates (session-level advisory locks). */
let gate: pg.Client;

beforeAll(async () => {
  h = await startHarness('accledgerraces');
  gate = new pg.Client({ connectionString: h.db.url });
  await gate.connect();
  await gate.query(`SET search_path TO accounts, public`);
  // The first transaction to index a row whose key is gated waits while the test holds
  // advisory lock (2, hashtext(key)); later transactions pass (they cannot take (1, key)).
  await gate.query(`CREATE FUNCTION test_insert_gate(key text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
    BEGIN
      IF pg_try_advisory_xact_lock(1, hashtext(key)) THEN
        PERFORM pg_advisory_xact_lock_shared(2, hashtext(key));
      END IF;
      RETURN NULL;
    END $$`);
  // ledger_accounts: [id_platform_currency, gate, pkey].
  await gate.query(`CREATE INDEX ledger_accounts_test_gate ON ledger_accounts ((test_insert_gate(id)))`);
  await gate.query(`ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_pkey,
    ADD CONSTRAINT ledger_accounts_pkey PRIMARY KEY (id)`);
  // journal_entries: [resolve_once, gate, pkey] (the foreign keys on the pkey are recreated).
  await gate.query(
    `CREATE INDEX journal_entries_test_gate ON journal_entries ((test_insert_gate(platform_id || '/' || id)))`,
  );
  await gate.query(`ALTER TABLE journal_lines DROP CONSTRAINT journal_lines_entry_fk`);
  await gate.query(`ALTER TABLE journal_entries DROP CONSTRAINT journal_entries_pending_fk`);
  await gate.query(`ALTER TABLE journal_entries DROP CONSTRAINT journal_entries_pkey,
    ADD CONSTRAINT journal_entries_pkey PRIMARY KEY (platform_id, id)`);
  await gate.query(`ALTER TABLE journal_lines ADD CONSTRAINT journal_lines_entry_fk
    FOREIGN KEY (platform_id, entry_id) REFERENCES journal_entries (platform_id, id)`);
  await gate.query(`ALTER TABLE journal_entries ADD CONSTRAINT journal_entries_pending_fk
    FOREIGN KEY (platform_id, pending_entry_id) REFERENCES journal_entries (platform_id, id)`);
  // The premise: each gate sits between the other unique index and the primary key.
  const order = await gate.query<{ table: string; indexes: string[] }>(
    `SELECT c.relname AS table, array_agg(i.relname::text ORDER BY i.oid) AS indexes
     FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
     WHERE c.relname IN ('ledger_accounts', 'journal_entries') AND c.relnamespace = 'accounts'::regnamespace
     GROUP BY c.relname ORDER BY c.relname`,
  );
  expect(order.rows).toEqual([
    {
      table: 'journal_entries',
      indexes: ['journal_entries_resolve_once', 'journal_entries_test_gate', 'journal_entries_pkey'],
    },
    {
      table: 'ledger_accounts',
      indexes: ['ledger_accounts_id_platform_currency', 'ledger_accounts_test_gate', 'ledger_accounts_pkey'],
    },
  ]);
});
afterAll(async () => {
  await gate?.end();
  await h?.stop();
});


/** Lock waits in this test's database: advisory (a call at the gate) and others (a call behind it). */
async function waiters(): Promise<{ advisory: number; other: number }> {
  const r = await h.sql.query<{ advisory: number; other: number }>(
    `SELECT count(*) FILTER (WHERE l.locktype = 'advisory')::int AS advisory,
            count(*) FILTER (WHERE l.locktype <> 'advisory')::int AS other
     FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
     WHERE NOT l.granted AND s.datname = current_database()`,
  );
  return r.rows[0]!;
}

/**
 * Runs `first` until it waits at the gate of `key`, then `second` until it waits behind
 * `first`, then opens the gate; returns both outcomes.
 */
async function interleave<A, B>(
  key: string,
  first: () => Promise<A>,
  second: () => Promise<B>,
): Promise<[PromiseSettledResult<A>, PromiseSettledResult<B>]> {
  await gate.query(`SELECT pg_advisory_lock(2, hashtext($1))`, [key]);
  let a: Promise<A> | undefined;
  let b: Promise<B> | undefined;
  try {
    a = first();
    a.catch(() => undefined);
    await eventually(async () => (await waiters()).advisory === 1);
    b = second();
    b.catch(() => undefined);
    await eventually(async () => {
      const w = await waiters();
      return w.advisory === 1 && w.other >= 1;
    });
  } finally {
    await gate.query(`SELECT pg_advisory_unlock(2, hashtext($1))`, [key]);
  }
  return [...(await Promise.allSettled([a, b]))] as [PromiseSettledResult<A>, PromiseSettledResult<B>];
}

function value<T>(r: PromiseSettledResult<T>): T {
  if (r.status === 'rejected') throw r.reason;
  return r.value;
}

async function expectConsistent(platformId: string): Promise<void> {
  const report = await h.client.reconcileLedger({ platformId });
  expect([report.mismatches, report.unbalancedEntryIds, report.consistent]).toEqual([[], [], true]);
}

describe('the same row inserted by two transactions that both pass the conflict check', () => {
  it('two PlaceHold with one id, both creating the SETTLEMENT system account on first use: one hold, one replay', async () => {
    const { platformId, accountId } = await fundedAccount(h, 10_000n);
    const holdId = `hold:${newId('JournalEntry')}`;
    const place = () =>
      h.client.placeHold({
        platformId,
        holdId,
        accountId,
        amount: 3_000n,
        currency: 'USD',
        counterAccount: SETTLEMENT,
      });
    const [a, b] = await interleave(`system:settlement:USD:${platformId}`, place, place);
    // Before the fix the second failed with 23505 on ledger_accounts_id_platform_currency: gRPC INTERNAL.
    expect([value(a).replayed, value(b).replayed]).toEqual([false, true]);
    expect(value(b).hold).toEqual(value(a).hold);
    expect(value(b).account!.availableAmount).toBe(7_000n);
    await expectConsistent(platformId);
  });

  it('two PostHold with one post id: one post, one replay', async () => {
    const { platformId, accountId } = await fundedAccount(h, 10_000n);
    const holdId = `hold:${newId('JournalEntry')}`;
    await h.client.placeHold({
      platformId,
      holdId,
      accountId,
      amount: 3_000n,
      currency: 'USD',
      counterAccount: SETTLEMENT,
    });
    const postId = `post:${holdId}`;
    const post = () => h.client.postHold({ platformId, holdId, postId });
    const [a, b] = await interleave(`${platformId}/${postId}`, post, post);
    // Before the fix the second failed with 23505 on journal_entries_resolve_once: JOURNAL_ENTRY_CONFLICT.
    expect([value(a).replayed, value(b).replayed]).toEqual([false, true]);
    for (const r of [a, b])
      expect(value(r).hold).toMatchObject({
        status: pb.HoldStatus.POSTED,
        postedAmount: 3_000n,
        resolutionId: postId,
      });
    expect([value(b).account!.balance!.amount, value(b).account!.availableAmount]).toEqual([7_000n, 7_000n]);
    const entries = await h.sql.query(
      `SELECT count(*)::int AS n FROM accounts.journal_entries WHERE platform_id = $1 AND pending_entry_id = $2`,
      [platformId, holdId],
    );
    expect(entries.rows[0].n).toBe(1);
    await expectConsistent(platformId);
  });

  it('a post and a void with other ids, both reading the hold unresolved: the loser is a JOURNAL_ENTRY_CONFLICT naming the winner', async () => {
    const { platformId, accountId } = await fundedAccount(h, 10_000n);
    const holdId = `hold:${newId('JournalEntry')}`;
    await h.client.placeHold({
      platformId,
      holdId,
      accountId,
      amount: 3_000n,
      currency: 'USD',
      counterAccount: SETTLEMENT,
    });
    const postId = `post:${holdId}`;
    const voidId = `void:${holdId}`;
    const [a, b] = await interleave(
      `${platformId}/${postId}`,
      () => h.client.postHold({ platformId, holdId, postId }),
      () => rejection(() => h.client.voidHold({ platformId, holdId, voidId })),
    );
    expect(value(a).hold).toMatchObject({ status: pb.HoldStatus.POSTED, resolutionId: postId });
    const e = value(b);
    expect([e.kind, e.code, e.details]).toEqual([
      'ALREADY_EXISTS',
      'JOURNAL_ENTRY_CONFLICT',
      { holdId, status: 'POSTED', resolutionId: postId },
    ]);
    await expectConsistent(platformId);
  });
});
