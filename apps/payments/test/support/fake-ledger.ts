import { DomainError } from '@sluice/core';
import type { Ledger } from '../../src/index.js';
import { isBalanced, type LedgerAccountRef, type LedgerLine } from '../../src/domain/quote-ledger.js';

type Hold = {
  accountId: string;
  amount: bigint;
  currency: string;
  counter: LedgerAccountRef;
  state: 'PENDING' | 'POSTED' | 'VOIDED';
};

const key = (ref: LedgerAccountRef, currency: string) =>
  'internalAccountId' in ref ? ref.internalAccountId : `system:${ref.system}:${currency}`;

/**
 * An in-memory stand-in for the accounts service's two-phase ledger in the payments
 * service tests (the real ledger is proven in apps/accounts and through the real
 * processes in tests/e2e): posted balances of internal and system accounts, holds
 * with their counter account, every step idempotent on its id, entries refused
 * unless balanced per currency, internal accounts never below their available balance.
 */
export class FakeLedger implements Ledger {
  /** Posted balance per internal account id, or `system:<NAME>:<CUR>`. */
  readonly posted = new Map<string, bigint>();
  readonly holds = new Map<string, Hold>();
  readonly entries = new Map<string, LedgerLine[]>();
  placeCalls = 0;
  /** Makes the next PlaceHold fail as if accounts were down. */
  failNextPlace = false;

  available(accountId: string): bigint {
    let held = 0n;
    for (const h of this.holds.values())
      if (h.accountId === accountId && h.state === 'PENDING') held += h.amount;
    return (this.posted.get(accountId) ?? 0n) - held;
  }

  holdsOf(accountId: string): [string, Hold][] {
    return [...this.holds.entries()].filter(([, h]) => h.accountId === accountId);
  }

  /** The posted balance of a system account in a currency. */
  system(name: string, currency: string): bigint {
    return this.posted.get(`system:${name}:${currency}`) ?? 0n;
  }

  /** Sum of every posted balance in `currency` (internal and system): 0 when the books balance. */
  total(currency: string, currencyOf: (internalAccountId: string) => string | undefined): bigint {
    let sum = 0n;
    for (const [k, v] of this.posted) {
      const cur = k.startsWith('system:') ? k.split(':')[2] : currencyOf(k);
      if (cur === currency) sum += v;
    }
    return sum;
  }

  private add(k: string, amount: bigint): void {
    this.posted.set(k, (this.posted.get(k) ?? 0n) + amount);
  }

  async placeHold(h: Parameters<Ledger['placeHold']>[0]): Promise<void> {
    this.placeCalls++;
    await new Promise((r) => setTimeout(r, 1)); // let concurrent callers interleave
    if (this.failNextPlace) {
      this.failNextPlace = false;
      throw new Error('accounts did not answer in time (deadline exceeded)');
    }
    if (this.holds.has(h.holdId)) return;
    if (this.available(h.accountId) < h.amount) {
      throw new DomainError('FAILED_PRECONDITION', 'INSUFFICIENT_FUNDS', 'Insufficient funds', {
        accountId: h.accountId,
      });
    }
    this.holds.set(h.holdId, {
      accountId: h.accountId,
      amount: h.amount,
      currency: h.currency,
      counter: h.counter ?? { system: 'SETTLEMENT' },
      state: 'PENDING',
    });
  }

  async postHold(h: { holdId: string }): Promise<void> {
    const hold = this.holds.get(h.holdId);
    if (!hold) throw new DomainError('NOT_FOUND', 'HOLD_NOT_FOUND', 'no such hold');
    if (hold.state === 'POSTED') return;
    if (hold.state !== 'PENDING') throw new Error(`post of a ${hold.state} hold`);
    hold.state = 'POSTED';
    this.add(hold.accountId, -hold.amount);
    this.add(key(hold.counter, hold.currency), hold.amount);
  }

  async voidHold(h: { holdId: string }): Promise<void> {
    const hold = this.holds.get(h.holdId);
    if (!hold) throw new DomainError('NOT_FOUND', 'HOLD_NOT_FOUND', 'no such hold');
    if (hold.state === 'VOIDED') return;
    if (hold.state !== 'PENDING') throw new Error(`void of a ${hold.state} hold`);
    hold.state = 'VOIDED';
  }

  async creditFromOutside(c: Parameters<Ledger['creditFromOutside']>[0]): Promise<void> {
    await this.postEntry({
      platformId: c.platformId,
      entryId: c.entryId,
      kind: c.kind,
      lines: [
        { account: { internalAccountId: c.accountId }, currency: c.currency, amount: c.amount },
        { account: { system: 'SETTLEMENT' }, currency: c.currency, amount: -c.amount },
      ],
    });
  }

  async postEntry(e: Parameters<Ledger['postEntry']>[0]): Promise<void> {
    if (this.entries.has(e.entryId)) return;
    if (!isBalanced(e.lines)) throw new Error(`entry ${e.entryId} does not balance`);
    for (const l of e.lines) {
      if ('internalAccountId' in l.account && this.available(l.account.internalAccountId) + l.amount < 0n) {
        throw new DomainError('FAILED_PRECONDITION', 'INSUFFICIENT_FUNDS', 'Insufficient funds', {
          accountId: l.account.internalAccountId,
        });
      }
    }
    this.entries.set(e.entryId, e.lines);
    for (const l of e.lines) this.add(key(l.account, l.currency), l.amount);
  }
}
