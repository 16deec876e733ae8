import { describe, expect, it } from 'vitest';
import { ManualClock, isDomainError } from '@sluice/core';
import {
  convertAmount,
  evaluateAction,
  nextDay,
  nextMonth,
  releaseReservation,
  usageAt,
  usageView,
  type ActionCheck,
  type Usage,
} from './enforcement.js';
import type { AgentPolicy } from './policy.js';

const ACCOUNT = 'InternalAccount:0196f0a1-0000-7000-8000-000000000001';
const OTHER = 'InternalAccount:0196f0a1-0000-7000-8000-000000000002';

const policy = (p: Partial<AgentPolicy> = {}): AgentPolicy => ({
  permissions: ['EXECUTE_QUOTES', 'CREATE_TRANSFERS'],
  defaultExecutionMode: 'AUTO',
  spendingLimits: { currency: 'USD', perTransactionLimit: 10_000n, dailyLimit: 25_000n, dailyTransactionLimit: 3n, monthlyLimit: 40_000n },
  ...p,
});
const check = (c: Partial<ActionCheck> = {}): ActionCheck => ({ type: 'TRANSFER_OUT', accountId: ACCOUNT, limitAmount: 5_000n, ...c });

/** The code an evaluation is refused with (or 'ALLOWED'). */
function verdict(agent: { isPaused?: boolean; policy: AgentPolicy }, usage: Usage | undefined, c: ActionCheck, now: Date): string {
  try {
    evaluateAction({ isPaused: agent.isPaused ?? false, policy: agent.policy }, usage, c, now);
    return 'ALLOWED';
  } catch (e) {
    if (!isDomainError(e)) throw e;
    expect(e.kind).toBe('PERMISSION_DENIED');
    return e.code;
  }
}

describe('policy evaluation', () => {
  const now = new Date('2026-03-14T12:00:00.000Z');
  const used = (u: Partial<Usage>): Usage => ({
    day: '2026-03-14',
    month: '2026-03',
    dailyTransactionCount: 0n,
    dailySpend: 0n,
    monthlySpend: 0n,
    ...u,
  });

  it('refuses each rule with its own code', () => {
    expect(verdict({ isPaused: true, policy: policy() }, undefined, check(), now)).toBe('AGENT_PAUSED');
    expect(verdict({ policy: policy({ permissions: ['CREATE_TRANSFERS'] }) }, undefined, check({ type: 'EXECUTE_QUOTE' }), now)).toBe(
      'MISSING_PERMISSION_EXECUTE_QUOTES',
    );
    expect(verdict({ policy: policy({ permissions: ['EXECUTE_QUOTES'] }) }, undefined, check({ type: 'TRANSFER_IN' }), now)).toBe(
      'MISSING_PERMISSION_CREATE_TRANSFERS',
    );
    const allowList = policy({ accountRestrictions: { allowedAccountIds: [OTHER], accountRules: [] } });
    expect(verdict({ policy: allowList }, undefined, check(), now)).toBe('ACCOUNT_NOT_ALLOWED');
    expect(verdict({ policy: policy() }, undefined, check({ limitAmount: 10_001n }), now)).toBe('PER_TRANSACTION_LIMIT_EXCEEDED');
    expect(verdict({ policy: policy() }, undefined, check({ limitAmount: 10_000n }), now)).toBe('ALLOWED');
    expect(verdict({ policy: policy() }, used({ dailySpend: 20_001n }), check(), now)).toBe('DAILY_LIMIT_EXCEEDED');
    expect(verdict({ policy: policy() }, used({ dailySpend: 20_000n }), check(), now)).toBe('ALLOWED');
    expect(verdict({ policy: policy() }, used({ monthlySpend: 35_001n }), check(), now)).toBe('MONTHLY_LIMIT_EXCEEDED');
    expect(verdict({ policy: policy() }, used({ dailyTransactionCount: 3n }), check({ limitAmount: 1n }), now)).toBe(
      'DAILY_TRANSACTION_LIMIT_EXCEEDED',
    );
    expect(verdict({ policy: policy() }, used({ dailyTransactionCount: 2n }), check({ limitAmount: 1n }), now)).toBe('ALLOWED');
  });

  it('checks in order: paused, permission, accounts, per-transaction, daily, monthly, count', () => {
    const everything = policy({ permissions: [], accountRestrictions: { allowedAccountIds: [OTHER], accountRules: [] } });
    const over = used({ dailySpend: 25_000n, monthlySpend: 40_000n, dailyTransactionCount: 3n });
    const big = check({ limitAmount: 20_000n });
    expect(verdict({ isPaused: true, policy: everything }, over, big, now)).toBe('AGENT_PAUSED');
    expect(verdict({ policy: everything }, over, big, now)).toBe('MISSING_PERMISSION_CREATE_TRANSFERS');
    expect(verdict({ policy: { ...everything, permissions: ['CREATE_TRANSFERS'] } }, over, big, now)).toBe('ACCOUNT_NOT_ALLOWED');
    expect(verdict({ policy: policy() }, over, big, now)).toBe('PER_TRANSACTION_LIMIT_EXCEEDED');
    expect(verdict({ policy: policy() }, over, check(), now)).toBe('DAILY_LIMIT_EXCEEDED');
    expect(verdict({ policy: policy() }, used({ monthlySpend: 40_000n, dailyTransactionCount: 3n }), check(), now)).toBe(
      'MONTHLY_LIMIT_EXCEEDED',
    );
  });

  it('applies the account rule’s per-transaction limit before the policy’s, and only to its account', () => {
    const p = policy({ accountRestrictions: { accountRules: [{ accountId: ACCOUNT, perTransactionLimit: 1_000n }] } });
    expect(verdict({ policy: p }, undefined, check({ limitAmount: 1_001n }), now)).toBe('PER_TRANSACTION_LIMIT_EXCEEDED');
    expect(verdict({ policy: p }, undefined, check({ limitAmount: 1_001n, accountId: OTHER }), now)).toBe('ALLOWED');
    // A rule may also allow more than the policy on its account.
    const generous = policy({ accountRestrictions: { accountRules: [{ accountId: ACCOUNT, perTransactionLimit: 20_000n }] } });
    expect(verdict({ policy: generous }, undefined, check({ limitAmount: 15_000n }), now)).toBe('ALLOWED');
  });

  it('decides the execution mode: default, account rule, then the threshold above its amount', () => {
    const mode = (p: AgentPolicy, c: ActionCheck) => evaluateAction({ isPaused: false, policy: p }, undefined, c, now).mode;
    expect(mode(policy(), check())).toBe('AUTO');
    expect(mode(policy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }), check())).toBe('APPROVAL_REQUIRED');
    const ruled = policy({ accountRestrictions: { accountRules: [{ accountId: ACCOUNT, executionMode: 'APPROVAL_REQUIRED' }] } });
    expect(mode(ruled, check())).toBe('APPROVAL_REQUIRED');
    expect(mode(ruled, check({ accountId: OTHER }))).toBe('AUTO');
    const autoRule = policy({
      defaultExecutionMode: 'APPROVAL_REQUIRED',
      accountRestrictions: { accountRules: [{ accountId: ACCOUNT, executionMode: 'AUTO' }] },
    });
    expect(mode(autoRule, check())).toBe('AUTO');
    const threshold = policy({ approvalThresholds: { currency: 'EUR', amount: 4_000n } });
    expect(mode(threshold, check({ thresholdAmount: 4_000n }))).toBe('AUTO');
    expect(mode(threshold, check({ thresholdAmount: 4_001n }))).toBe('APPROVAL_REQUIRED');
    // The threshold overrides an AUTO account rule too.
    expect(mode({ ...autoRule, approvalThresholds: { currency: 'USD', amount: 1n } }, check({ thresholdAmount: 2n }))).toBe(
      'APPROVAL_REQUIRED',
    );
  });

  it('reserves the amount and one transaction, and releases exactly that on the same day', () => {
    const d = evaluateAction({ isPaused: false, policy: policy() }, used({ dailySpend: 100n, monthlySpend: 300n, dailyTransactionCount: 1n }), check(), now);
    expect(d.usage).toEqual(used({ dailySpend: 5_100n, monthlySpend: 5_300n, dailyTransactionCount: 2n }));
    expect(d.reservation).toEqual({ day: '2026-03-14', month: '2026-03', amount: 5_000n });
    expect(releaseReservation(d.usage, d.reservation, now)).toEqual(used({ dailySpend: 100n, monthlySpend: 300n, dailyTransactionCount: 1n }));
  });
});

describe('usage resets at UTC midnight and month end (manual clock)', () => {
  it('daily counters reset at 00:00 UTC, the monthly one on the 1st', () => {
    const clock = new ManualClock('2026-01-31T23:59:59.999Z');
    const p = policy({ spendingLimits: { currency: 'USD', perTransactionLimit: 10_000n, dailyLimit: 10_000n, dailyTransactionLimit: 1n, monthlyLimit: 15_000n } });
    const first = evaluateAction({ isPaused: false, policy: p }, undefined, check({ limitAmount: 10_000n }), clock.now());
    expect(verdict({ policy: p }, first.usage, check({ limitAmount: 1n }), clock.now())).toBe('DAILY_LIMIT_EXCEEDED');
    expect(usageView(first.usage, clock.now())).toEqual({
      dailyTransactionCount: 1n,
      dailySpend: 10_000n,
      monthlySpend: 10_000n,
      dailyResetDate: '2026-02-01',
      monthlyResetMonth: '2026-02',
    });

    clock.advance(1); // 2026-02-01T00:00:00.000Z: a new day and a new month
    expect(usageAt(first.usage, clock.now())).toEqual({
      day: '2026-02-01',
      month: '2026-02',
      dailyTransactionCount: 0n,
      dailySpend: 0n,
      monthlySpend: 0n,
    });
    const second = evaluateAction({ isPaused: false, policy: p }, first.usage, check({ limitAmount: 10_000n }), clock.now());
    expect(second.usage.monthlySpend).toBe(10_000n);

    clock.advance(24 * 3_600_000); // 2026-02-02: the day resets, the month does not
    expect(verdict({ policy: p }, second.usage, check({ limitAmount: 5_000n }), clock.now())).toBe('ALLOWED');
    expect(verdict({ policy: p }, second.usage, check({ limitAmount: 5_001n }), clock.now())).toBe('MONTHLY_LIMIT_EXCEEDED');
    expect(usageView(second.usage, clock.now())).toMatchObject({ dailySpend: 0n, monthlySpend: 10_000n, dailyResetDate: '2026-02-03' });
  });

  it('a reservation of an earlier day releases only what is still counted', () => {
    const clock = new ManualClock('2026-02-28T22:00:00.000Z');
    const d = evaluateAction({ isPaused: false, policy: policy() }, undefined, check({ limitAmount: 700n }), clock.now());
    clock.set('2026-03-01T01:00:00.000Z');
    // Another action on the new day and month.
    const today = evaluateAction({ isPaused: false, policy: policy() }, d.usage, check({ limitAmount: 200n }), clock.now());
    // Releasing yesterday's reservation (last month's) changes nothing of today's counters.
    expect(releaseReservation(today.usage, d.reservation, clock.now())).toEqual(today.usage);
    clock.set('2026-02-28T23:00:00.000Z');
    const sameMonthNextDay = new ManualClock('2026-02-27T23:00:00.000Z');
    const early = evaluateAction({ isPaused: false, policy: policy() }, undefined, check({ limitAmount: 300n }), sameMonthNextDay.now());
    const later = evaluateAction({ isPaused: false, policy: policy() }, early.usage, check({ limitAmount: 100n }), clock.now());
    expect(releaseReservation(later.usage, early.reservation, clock.now())).toMatchObject({
      dailySpend: 100n,
      dailyTransactionCount: 1n,
      monthlySpend: 100n,
    });
  });

  it('reset dates roll over year ends and leap days', () => {
    expect(nextDay('2024-02-28')).toBe('2024-02-29');
    expect(nextDay('2026-12-31')).toBe('2027-01-01');
    expect(nextMonth('2026-12')).toBe('2027-01');
  });
});

describe('currency conversion', () => {
  it('converts at sending units per receiving unit, across decimals, rounding up', () => {
    // EUR → USD at 0.925925 EUR per USD: 100.00 EUR = 108.0000432 USD, rounded up to the cent
    expect(convertAmount(10_000n, 'EUR', 'USD', '0.925925')).toBe(10_801n);
    expect(convertAmount(9_259_250n, 'EUR', 'USD', '0.925925')).toBe(10_000_000n);
    // 100.00 USD → BTC at 65000 USD per BTC: 0.00153846.. BTC = 153847 sat rounded up
    expect(convertAmount(10_000n, 'USD', 'BTC', '65000')).toBe(153_847n);
    // JPY (0 decimals) → USD at 150 JPY per USD: 1500 JPY = 10.00 USD
    expect(convertAmount(1_500n, 'JPY', 'USD', '150')).toBe(1_000n);
    expect(convertAmount(1_501n, 'JPY', 'USD', '150')).toBe(1_001n);
    expect(convertAmount(42n, 'USD', 'USD', '1')).toBe(42n);
  });

  it('a converted amount drives the limits like any other', () => {
    const now = new Date('2026-03-14T12:00:00.000Z');
    const limitAmount = convertAmount(9_300n, 'EUR', 'USD', '0.925925'); // 10044 USD cents
    expect(verdict({ policy: policy() }, undefined, check({ limitAmount }), now)).toBe('PER_TRANSACTION_LIMIT_EXCEEDED');
  });
});
